"""Typed access to Bot API parameters, whichever encoding the client used.

PTB sends ``application/x-www-form-urlencoded`` (every value a string, objects JSON-encoded)
or ``multipart/form-data`` when uploading; other clients may send JSON with native types.
"""

from __future__ import annotations

import json
from typing import Any

from ._http import UploadedFile
from .errors import bad_request

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off", ""})


class Params:
    def __init__(
        self, values: dict[str, Any], files: dict[str, UploadedFile], method: str = ""
    ) -> None:
        self.values = values
        self.files = files
        self.method = method

    def has(self, name: str) -> bool:
        return self.values.get(name) not in (None, "")

    def raw(self, name: str) -> Any:
        return self.values.get(name)

    def get_str(self, name: str) -> str | None:
        value = self.values.get(name)
        if value is None:
            return None
        return value if isinstance(value, str) else json.dumps(value)

    def require_str(self, name: str, error: str | None = None) -> str:
        value = self.get_str(name)
        if not value:
            raise bad_request(error or f"{name} is empty")
        return value

    def get_int(self, name: str) -> int | None:
        value = self.values.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        try:
            if isinstance(value, float):
                return int(value)
            return int(value) if value.lstrip("-").isdigit() else int(float(value))
        except (TypeError, ValueError):
            raise bad_request(f"invalid {name} specified") from None

    def require_int(self, name: str, error: str | None = None) -> int:
        value = self.get_int(name)
        if value is None:
            raise bad_request(error or f"{name} is empty")
        return value

    def get_float(self, name: str) -> float | None:
        value = self.values.get(name)
        if value is None or value == "":
            return None
        try:
            return float(value)
        except (TypeError, ValueError):
            raise bad_request(f"invalid {name} specified") from None

    def get_bool(self, name: str, default: bool = False) -> bool:
        value = self.values.get(name)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise bad_request(f"invalid {name} specified")

    def get_json(self, name: str) -> Any:
        """A JSON-serialized parameter (objects/arrays); native JSON values pass through."""
        value = self.values.get(name)
        if not isinstance(value, str):
            return value
        if value == "":
            return None
        try:
            return json.loads(value)
        except ValueError:
            raise bad_request(f"can't parse {name} JSON object") from None

    def file(self, name: str) -> UploadedFile | None:
        return self.files.get(name)

    def loggable(self) -> dict[str, Any]:
        return dict(self.values)
