"""How bot/webapp/static/court.svg was made (run once; the page ships the result):

    npm pack @letele/playing-cards@0.1.0 && tar -xzf letele-playing-cards-0.1.0.tgz
    node docs/webapp/court-art.mjs package/dist/index.esm.js /tmp/cards
    python docs/webapp/court-art.py /tmp/cards bot/webapp/static/court.svg

The package (CC0 1.0, Adrian Kennard's card designs) ships each card as a React component;
court-art.mjs renders them to plain SVG. This joins the twelve court cards into one sprite
of symbols ``court-<rank><suit>`` (``court-KH``): each card's own symbols lifted to the top
(their ids are unique per card), the outer frame dropped (the page draws the card's edge)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

SUITS = {"C": "C", "D": "D", "H": "H", "S": "S"}
RANKS = {"j": "J", "q": "Q", "k": "K"}


def symbol(text: str, name: str) -> tuple[str, str]:
    defs = re.search(r"<defs>(.*?)</defs>", text, re.S)
    lifted = defs.group(1) if defs else ""
    body = re.sub(r"^<svg[^>]*>|</svg>$", "", text.strip())
    body = re.sub(r"<defs>.*?</defs>", "", body, flags=re.S)
    body = re.sub(r'<rect width="239" height="335"[^>]*></rect>', "", body, count=1)
    return lifted, f'<symbol id="{name}" viewBox="-120 -168 240 336">{body}</symbol>'


def main(source: Path, target: Path) -> None:
    lifted, symbols = [], []
    for suit in "SHDC":
        for rank in "jqk":
            text = (source / f"{suit}{rank}.svg").read_text()
            defs, sym = symbol(text, f"court-{RANKS[rank]}{SUITS[suit]}")
            lifted.append(defs)
            symbols.append(sym)
    target.write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        "<!-- Court cards: Adrian Kennard's designs, CC0 1.0, via @letele/playing-cards 0.1.0;"
        " see court.LICENSE.txt -->"
        f"<defs>{''.join(lifted)}{''.join(symbols)}</defs></svg>\n"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
