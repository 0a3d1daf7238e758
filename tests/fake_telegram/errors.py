"""Bot API error answers, shaped exactly like Telegram's."""

from __future__ import annotations

from typing import Any

NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly "
    "the same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "query is too old and response timeout expired or query ID is invalid"
GET_UPDATES_CONFLICT = (
    "terminated by other getUpdates request; make sure that only one bot instance is running"
)
WEBHOOK_CONFLICT = (
    "can't use getUpdates method while webhook is active; use deleteWebhook to delete the "
    "webhook first"
)


class ApiError(Exception):
    """An unsuccessful Bot API answer: HTTP ``status`` and the JSON error object."""

    def __init__(
        self, status: int, description: str, parameters: dict[str, Any] | None = None
    ) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters

    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "ok": False,
            "error_code": self.status,
            "description": self.description,
        }
        if self.parameters:
            data["parameters"] = self.parameters
        return data


def bad_request(message: str, parameters: dict[str, Any] | None = None) -> ApiError:
    return ApiError(400, f"Bad Request: {message}", parameters)


def forbidden(message: str) -> ApiError:
    return ApiError(403, f"Forbidden: {message}")


def conflict(message: str) -> ApiError:
    return ApiError(409, f"Conflict: {message}")


def too_many_requests(retry_after: int) -> ApiError:
    return ApiError(
        429, f"Too Many Requests: retry after {retry_after}", {"retry_after": retry_after}
    )
