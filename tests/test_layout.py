"""The layout check (python -m tests.layout) on small made-up trees."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

from tests import layout


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def _run(root: Path) -> tuple[int, str]:
    out = io.StringIO()
    code = layout.check(root, top=5, out=out)
    return code, out.getvalue()


_CLEAN = {
    "bot/__init__.py": "",
    "bot/app.py": "from bot import flows\nfrom durak.service import GameService\n",
    "bot/flows.py": "from . import ui\n",
    "bot/ui.py": "import durak.cards\n",
    "durak/__init__.py": "from durak.cards import Card\n",
    "durak/cards.py": "class Card:\n    pass\n",
    "durak/service/__init__.py": "from .facade import GameService\n",
    "durak/service/facade.py": "from durak.cards import Card\n\nclass GameService:\n    pass\n",
}


def test_a_tree_without_circles_passes(tmp_path: Path) -> None:
    code, out = _run(_tree(tmp_path, _CLEAN))
    assert code == 0, out
    assert "import circles" in out and "  none" in out
    assert "within the limits" in out


def test_a_circle_through_type_checking_fails(tmp_path: Path) -> None:
    files = dict(_CLEAN)
    files["bot/ui.py"] = """\
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from .app import Thing
        """
    code, out = _run(_tree(tmp_path, files))
    assert code == 1
    assert "CIRCLE: bot.app <-> bot.flows <-> bot.ui" in out


def test_a_function_level_import_closes_a_circle_too(tmp_path: Path) -> None:
    files = dict(_CLEAN)
    files["durak/cards.py"] = "def late():\n    from durak.service import facade\n"
    code, out = _run(_tree(tmp_path, files))
    assert code == 1
    assert "CIRCLE: durak.cards <-> durak.service.facade" in out


def test_a_circle_inside_one_engine_package_is_allowed(tmp_path: Path) -> None:
    files = dict(_CLEAN)
    files["durak/games/__init__.py"] = ""
    files["durak/games/pile/__init__.py"] = ""
    files["durak/games/pile/game.py"] = "from . import play\n"
    files["durak/games/pile/play.py"] = (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .game import PileGame\n"
    )
    code, out = _run(_tree(tmp_path, files))
    assert code == 0, out
    assert "allowed (one engine package): durak.games.pile.game <-> durak.games.pile.play" in out


def test_a_circle_between_two_engine_packages_fails(tmp_path: Path) -> None:
    files = dict(_CLEAN)
    files["durak/games/__init__.py"] = ""
    files["durak/games/pile/__init__.py"] = ""
    files["durak/games/pile/game.py"] = "from durak.games.podkidnoy import game\n"
    files["durak/games/podkidnoy/__init__.py"] = ""
    files["durak/games/podkidnoy/game.py"] = "from ..pile.game import PileGame\n"
    code, out = _run(_tree(tmp_path, files))
    assert code == 1
    assert "CIRCLE: durak.games.pile.game <-> durak.games.podkidnoy.game" in out


def _long_class(name: str, methods: int, body: int) -> str:
    lines = [f"class {name}:"]
    for m in range(methods):
        lines.append(f"    def m{m}(self) -> None:")
        lines.extend(f"        x{i} = {i}" for i in range(body))
    return "\n".join(lines) + "\n"


def test_a_large_class_and_a_long_method_in_the_service_are_flagged(tmp_path: Path) -> None:
    files = dict(_CLEAN)
    files["durak/service/facade.py"] = _long_class("GameService", 20, 20)  # 421 lines
    files["durak/service/play.py"] = _long_class("Play", 1, 60)  # a 61-line method
    code, out = _run(_tree(tmp_path, files))
    assert code == 1
    assert "TOO LARGE: class durak.service.facade.GameService: 421 lines" in out
    assert "TOO LARGE: method durak.service.play.Play.m0: 61 lines" in out
    assert "durak.service.facade.GameService.m0" not in out.split("TOO LARGE")[-1]
    assert "   421  durak.service.facade.GameService  (durak/service/facade.py:1)" in out


def test_the_limits_are_inclusive_and_apply_only_in_the_service(tmp_path: Path) -> None:
    files = dict(_CLEAN)
    files["durak/service/facade.py"] = _long_class(
        "GameService", 1, 59
    )  # 61 lines, a 60-line method
    files["bot/app.py"] = _long_class("Handlers", 30, 30)  # large, but outside durak/service/
    code, out = _run(_tree(tmp_path, files))
    assert code == 0, out
    assert "bot.app.Handlers" in out  # listed among the largest, not failed


def test_without_a_service_folder_nothing_is_checked_there(tmp_path: Path) -> None:
    files = {k: v for k, v in _CLEAN.items() if not k.startswith("durak/service/")}
    files["durak/service.py"] = _long_class("GameService", 30, 30)
    files["bot/app.py"] = "from bot import flows\n"
    code, out = _run(_tree(tmp_path, files))
    assert code == 0, out
    assert "durak/service/ does not exist yet: nothing checked there" in out
