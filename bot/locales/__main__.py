"""``python -m bot.locales extract``: update the catalogs from the source;
``python -m bot.locales check``: list what is left to translate (exit 1 if any)."""

from __future__ import annotations

import argparse
import sys

from ..i18n import catalog_path
from . import extract, po


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot.locales", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    ex = commands.add_parser("extract", help="add new messages to every .po, mark unused ones")
    ex.add_argument("--no-obsolete", action="store_true", help="drop unused messages instead")
    commands.add_parser("check", help="list untranslated or fuzzy messages")
    args = parser.parse_args(argv)

    if args.command == "extract":
        changed, unseen = extract.run(keep_obsolete=not args.no_obsolete)
        for path in changed:
            print(f"updated {path}")
        for u in unseen:
            print(f"{u.file}:{u.line}: not extractable: {u.why}", file=sys.stderr)
        return 0

    missing = 0
    for lang in extract.languages():
        po_file = catalog_path(lang)
        if not po_file.exists():
            print(f"{lang}: no catalog, run: python -m bot.locales extract")
            missing += 1
            continue
        catalog = po.read(po_file)
        todo = list(extract.untranslated(catalog))
        total = len(catalog.active())
        print(f"{lang}: {total - len(todo)} of {total} translated")
        for e in todo:
            state = "fuzzy" if e.fuzzy else "untranslated"
            print(f"  {state}: {e.msgid!r}")
        missing += len(todo)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
