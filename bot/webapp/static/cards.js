// Cards as elements: a face (its index, rank over suit in the reader's letters, big
// enough to read at a glance; a court card's figure, a big suit on the others) or a back.
// The big suit and the figure are decoration: a card's text is its index alone, and a
// screen reader says its name ("ten of hearts") in the player's language.

const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const COURT = new Set(["J", "Q", "K"]);
let letters = {};
let words = { pattern: "{rank} {suit}", ranks: {}, suits: {} };

export function setTexts(texts) {
  letters = (texts && texts.ranks) || {};
  if (texts && texts.cards) words = texts.cards;
}

export function parts(code) {
  const suit = code.slice(-1);
  const rank = code.slice(0, -1);
  return { rank, letter: letters[rank] || rank, suit, symbol: SUITS[suit] || "?" };
}

// "10♥" in the reader's letters (a button's short label, the choice's text).
export function label(code) {
  const p = parts(code);
  return p.letter + p.symbol;
}

// "ten of hearts": what a screen reader says.
export function name(code) {
  const p = parts(code);
  const rank = words.ranks[p.rank];
  const suit = words.suits[p.suit];
  if (!rank || !suit) return label(code);
  return words.pattern.replace("{rank}", rank).replace("{suit}", suit);
}

export function suitSymbol(letter) {
  return SUITS[letter] || "";
}

function span(cls, text) {
  const node = document.createElement("span");
  node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

const SVG = "http://www.w3.org/2000/svg";

// The drawing of a card, filled into `node` (a span that the caller places and keys).
export function paintFace(node, code) {
  const p = parts(code);
  node.className = `face suit-${p.suit}` + (COURT.has(p.rank) ? " court" : "");
  node.dataset.face = code;
  node.dataset.pip = p.symbol; // drawn by CSS: not part of the card's text
  const index = span("index");
  index.append(span("rank" + (p.letter.length > 1 ? " wide" : ""), p.letter), span("suit", p.symbol));
  const parts_ = [index];
  if (COURT.has(p.rank)) {
    const art = document.createElementNS(SVG, "svg");
    art.setAttribute("class", "art");
    art.setAttribute("viewBox", "0 0 240 336");
    art.setAttribute("aria-hidden", "true");
    const use = document.createElementNS(SVG, "use");
    use.setAttribute("href", `#court-${p.rank}${p.suit}`);
    use.setAttribute("width", "240");
    use.setAttribute("height", "336");
    art.append(use);
    parts_.push(art);
  }
  node.replaceChildren(...parts_);
  return node;
}

export function face(code, extra = "") {
  const node = paintFace(document.createElement("span"), code);
  if (extra) node.classList.add(...extra.split(" "));
  return node;
}

export function back(extra = "") {
  const node = span(`face back ${extra}`.trim());
  node.setAttribute("aria-hidden", "true");
  return node;
}

// The court cards' figures (court.svg, CC0: court.LICENSE.txt beside it) are symbols put
// into the page once; a card refers to its own.
export async function loadArt(url) {
  if (!url) return;
  try {
    const response = await fetch(url);
    if (!response.ok) return;
    const holder = document.getElementById("art");
    holder.innerHTML = await response.text(); // our own file, served with the page
  } catch (e) {
    /* offline: the court cards show their index and suit only */
  }
}
