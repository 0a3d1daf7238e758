"""``python -m bot.locales extract``: update every catalog from the source;
``python -m bot.locales check``: list what is left to translate (exit 1 if any);
``python -m bot.locales compile DIR``: write ``.mo`` files (the bot itself compiles
in memory at start, so this is only for tools that want them)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from babel.messages.mofile import write_mo

from ..ui.i18n import DOMAIN, catalog_path
from . import catalogs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot.locales", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    ex = commands.add_parser("extract", help="add new messages to every .po, mark unused ones")
    ex.add_argument("--no-obsolete", action="store_true", help="drop unused messages instead")
    commands.add_parser("check", help="list untranslated or fuzzy messages")
    co = commands.add_parser("compile", help="write <DIR>/<lang>/LC_MESSAGES/durak.mo")
    co.add_argument("dir", type=Path)
    args = parser.parse_args(argv)

    if args.command == "extract":
        pot = catalogs.template()
        for lang in catalogs.languages():
            if catalogs.update(lang, pot, keep_obsolete=not args.no_obsolete):
                print(f"updated {catalog_path(lang)}")
        return 0

    if args.command == "compile":
        for lang in catalogs.languages():
            out = args.dir / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"
            out.parent.mkdir(parents=True, exist_ok=True)
            with out.open("wb") as f:
                write_mo(f, catalogs.read(catalog_path(lang), lang))
            print(f"wrote {out}")
        return 0

    missing = 0
    for lang in catalogs.languages():
        path = catalog_path(lang)
        if not path.exists():
            print(f"{lang}: no catalog, run: python -m bot.locales extract")
            missing += 1
            continue
        catalog = catalogs.read(path, lang)
        todo = catalogs.untranslated(catalog)
        print(f"{lang}: {len(catalog) - len(todo)} of {len(catalog)} translated")
        for m in todo:
            print(f"  {'fuzzy' if m.fuzzy else 'untranslated'}: {m.id!r}")
        missing += len(todo)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
