// The few DOM helpers every view uses: an element by id, a new element, a text set only
// when it changes, and a box's children kept in step with a list by key.

export const $ = (id) => document.getElementById(id);

export function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

// Children of `box` made to be `items` in order: an element is found by its key (reused,
// updated in place), made when missing, removed when no item names it.
export function keyed(box, items, keyOf, make, update) {
  const old = new Map();
  for (const child of box.children) if (child.dataset.key !== undefined) old.set(child.dataset.key, child);
  let at = 0;
  for (const item of items) {
    const key = String(keyOf(item));
    let node = old.get(key);
    if (node) old.delete(key);
    else {
      node = make(item);
      node.dataset.key = key;
    }
    update(node, item);
    if (box.children[at] !== node) box.insertBefore(node, box.children[at] || null);
    at += 1;
  }
  for (const node of old.values()) node.remove();
}
