// Where each card of a hand lies: in one row, or in as many rows as it takes, so that a
// hand of any size (36 cards) fits the space it has, every card shows its index whole
// ("10" never reads "1") and every card keeps a part of its own to tap. Pure: sizes in,
// positions out.

const RATIO = 1.42; // a card's height to its width
export const LIFT = 10; // the room above the hand for a lit card's lift

// n cards in `width` x `height` px; the card's width between `smallest` and `largest`.
// Returns {w, h, rows, height, cards: [{x, y, tapW, tapH, row}]}: each card's place and
// its tappable part (what the next card does not cover).
export function handLayout(n, width, height, smallest, largest) {
  // fewest rows first with cards of a comfortable size, then smaller cards
  const comfortable = Math.max(smallest, Math.round(largest * 0.8));
  const best = fit(n, width, height, comfortable, largest) || fit(n, width, height, smallest, comfortable - 2);
  if (best) return best;
  // the screen is smaller than any hand fits: the smallest cards in as many rows as the
  // width needs, the page grows downwards (never wider)
  const w = smallest;
  const h = Math.round(w * RATIO);
  const perRow = Math.max(1, Math.floor((width - w) / strip(w)) + 1);
  const rows = Math.ceil(n / perRow);
  const step = perRow > 1 ? Math.min(w + 6, (width - w) / (perRow - 1)) : 0;
  return place(n, width, w, h, rows, step, Math.round(h * 0.56));
}

// the index, whole, and a thumb's hold
const strip = (w) => Math.max(24, Math.round(w * 0.46));

function fit(n, width, height, smallest, largest) {
  for (let rows = 1; rows <= 4; rows++) {
    const perRow = Math.ceil(n / rows);
    for (let w = largest; w >= smallest; w -= 2) {
      const h = Math.round(w * RATIO);
      const rowStep = Math.round(h * 0.56); // an upper row shows its index above the next
      const step = perRow > 1 ? Math.min(w + 6, (width - w) / (perRow - 1)) : 0;
      if (step >= strip(w) && h + (rows - 1) * rowStep + LIFT <= height) {
        return place(n, width, w, h, rows, step, rowStep);
      }
    }
  }
  return null;
}

function place(n, width, w, h, rows, step, rowStep) {
  const perRow = Math.ceil(n / rows);
  const cards = [];
  for (let i = 0; i < n; i++) {
    const row = Math.floor(i / perRow);
    const inRow = Math.min(perRow, n - row * perRow);
    const k = i - row * perRow;
    const span = w + step * (inRow - 1);
    const left = Math.max(0, (width - span) / 2);
    const last = k === inRow - 1;
    cards.push({
      x: Math.round(left + k * step),
      y: LIFT + row * rowStep,
      tapW: Math.round(last ? w : Math.min(w, step)),
      tapH: h,
      row,
    });
  }
  for (const c of cards) {
    // a card of the row below over any of its tappable part: only its top is its own
    const below = cards.some((d) => d.row === c.row + 1 && d.x < c.x + c.tapW && d.x + w > c.x);
    if (below) c.tapH = rowStep;
  }
  return { w, h, rows, height: h + (rows - 1) * rowStep + LIFT, cards };
}
