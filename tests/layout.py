"""The layout check: the largest classes and functions, every import circle.

    python -m tests.layout [--root DIR] [--top N]

Reads ``bot/`` and ``durak/`` with :mod:`ast` (nothing is imported). Every
import counts, those under ``if TYPE_CHECKING:`` and inside functions too, when
it names a module of ``bot`` or ``durak``; circles are the strongly connected
components of that graph. Exits 1 on a circle, except inside one engine package
(``durak/games/<family>/``, where a game's state and its rule modules may name
each other), or on a size over issue 24's limits in ``durak/service/``: no class
over 400 lines, no method over 60.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

PACKAGES = ("bot", "durak")
SIZED = "durak.service"  # the package whose sizes are limited
MAX_CLASS = 400
MAX_METHOD = 60


@dataclass(frozen=True, slots=True)
class Block:
    """A class or a function: where it is and how many lines it takes."""

    kind: str  # "class", "method" or "function"
    name: str  # qualified within its module, e.g. "GameService.apply"
    module: str
    path: Path
    line: int
    lines: int


def modules(root: Path) -> dict[str, Path]:
    """Every module of the packages under ``root``, by dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        base = root / package
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _imported(module: str, path: Path, tree: ast.AST, known: dict[str, Path]) -> set[str]:
    """The known modules that ``module`` imports anywhere in its tree."""
    package = module if _is_package(path) else module.rpartition(".")[0]
    targets: set[str] = set()

    def longest_known(name: str) -> str | None:
        while name:
            if name in known:
                return name
            name = name.rpartition(".")[0]
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                hit = longest_known(alias.name)
                if hit is not None:
                    targets.add(hit)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                up = node.level - 1
                if up >= len(base_parts):
                    continue  # above the top package: not ours
                base = ".".join(base_parts[: len(base_parts) - up])
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in known:  # "from pkg import submodule"
                    targets.add(sub)
                else:
                    hit = longest_known(source)
                    if hit is not None:
                        targets.add(hit)
    targets.discard(module)
    return targets


def import_graph(root: Path) -> dict[str, set[str]]:
    known = modules(root)
    return {
        name: _imported(name, path, ast.parse(path.read_text(), str(path)), known)
        for name, path in known.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def allowed(circle: Sequence[str]) -> bool:
    """Inside one engine package (durak.games.<family>) a game's modules may name each other."""
    families = set()
    for name in circle:
        parts = name.split(".")
        if len(parts) < 3 or parts[:2] != ["durak", "games"]:
            return False
        families.add(parts[2])
    return len(families) == 1


def _blocks_of(module: str, path: Path) -> list[Block]:
    found: list[Block] = []

    def visit(node: ast.AST, prefix: str, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                end = child.end_lineno or child.lineno
                if isinstance(child, ast.ClassDef):
                    kind = "class"
                else:
                    kind = "method" if in_class else "function"
                name = f"{prefix}{child.name}"
                found.append(Block(kind, name, module, path, start, end - start + 1))
                visit(child, f"{name}.", isinstance(child, ast.ClassDef))
            else:
                visit(child, prefix, in_class)

    visit(ast.parse(path.read_text(), str(path)), "", False)
    return found


def blocks(root: Path) -> list[Block]:
    """Every class, method and function (nested ones too) with its length in lines."""
    return [block for module, path in modules(root).items() for block in _blocks_of(module, path)]


def _in_sized(module: str) -> bool:
    return module == SIZED or module.startswith(f"{SIZED}.")


def oversized(found: Sequence[Block]) -> list[Block]:
    """The classes over MAX_CLASS and methods over MAX_METHOD lines in durak/service/."""
    return [
        block
        for block in found
        if _in_sized(block.module)
        and (
            (block.kind == "class" and block.lines > MAX_CLASS)
            or (block.kind == "method" and block.lines > MAX_METHOD)
        )
    ]


def check(root: Path, top: int = 10, out: TextIO | None = None) -> int:
    """Print the report for the tree under ``root``; 0 if it passes, 1 if not."""

    def write(line: str) -> None:
        print(line, file=out or sys.stdout)

    found = blocks(root)
    failed = False

    def where(block: Block) -> str:
        return f"{block.path.relative_to(root)}:{block.line}"

    for kind, title in (("class", "classes"), ("function", "functions and methods")):
        chosen = [b for b in found if (b.kind == "class") == (kind == "class")]
        chosen.sort(key=lambda b: (-b.lines, b.module, b.name))
        write(f"== the {min(top, len(chosen))} largest {title}")
        for block in chosen[:top]:
            write(f"{block.lines:6}  {block.module}.{block.name}  ({where(block)})")

    write("== import circles (TYPE_CHECKING and function-level imports included)")
    any_circle = False
    for circle in circles(import_graph(root)):
        any_circle = True
        if allowed(circle):
            write(f"  allowed (one engine package): {' <-> '.join(circle)}")
        else:
            failed = True
            write(f"  CIRCLE: {' <-> '.join(circle)}")
    if not any_circle:
        write("  none")

    service = root / Path(*SIZED.split("."))
    write(
        f"== sizes in {SIZED.replace('.', '/')}/: no class over {MAX_CLASS} lines, "
        f"no method over {MAX_METHOD}"
    )
    if not service.is_dir():
        write(f"  {SIZED.replace('.', '/')}/ does not exist yet: nothing checked there")
    else:
        over = oversized(found)
        for block in over:
            failed = True
            write(
                f"  TOO LARGE: {block.kind} {block.module}.{block.name}: "
                f"{block.lines} lines ({where(block)})"
            )
        if not over:
            write("  within the limits")
    write("== layout check " + ("FAILED" if failed else "passed"))
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.layout", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="the repository's folder (default: this one)",
    )
    parser.add_argument("--top", type=int, default=10, help="how many of the largest to list")
    args = parser.parse_args(argv)
    return check(args.root.resolve(), args.top)


if __name__ == "__main__":
    sys.exit(main())
