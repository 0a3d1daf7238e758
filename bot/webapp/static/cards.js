// Cards as elements: a face (rank in the reader's letters, suit, colour) or a back.

const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
let letters = {};

export function setLetters(map) {
  letters = map || {};
}

export function parts(code) {
  const suit = code.slice(-1);
  const rank = code.slice(0, -1);
  return { rank: letters[rank] || rank, suit, symbol: SUITS[suit] || "?" };
}

export function label(code) {
  const p = parts(code);
  return p.rank + p.symbol;
}

export function suitSymbol(letter) {
  return SUITS[letter] || "";
}

export function face(code, extra = "") {
  const p = parts(code);
  const el = document.createElement("div");
  el.className = `card face suit-${p.suit} ${extra}`.trim();
  el.dataset.card = code;
  el.setAttribute("role", "img");
  el.setAttribute("aria-label", label(code));
  const corner = document.createElement("span");
  corner.className = "corner";
  corner.textContent = p.rank;
  const small = document.createElement("span");
  small.className = "corner-suit";
  small.textContent = p.symbol;
  const pip = document.createElement("span");
  pip.className = "pip";
  pip.textContent = p.symbol;
  const low = document.createElement("span");
  low.className = "corner low";
  low.textContent = p.rank;
  el.append(corner, small, pip, low);
  return el;
}

export function back(extra = "") {
  const el = document.createElement("div");
  el.className = `card back ${extra}`.trim();
  el.setAttribute("aria-hidden", "true");
  return el;
}
