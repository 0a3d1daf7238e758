// Cards that move: measure where every card was, let the view patch the page, then move
// each card from where it was to where it is (FLIP). A card that left the page flies to
// where it went (the discard, the taker's seat) as a short-lived copy that takes no taps.
// Durations come from the stylesheet (--move-ms); prefers-reduced-motion sets it to 0.

export function duration() {
  const value = getComputedStyle(document.documentElement).getPropertyValue("--move-ms");
  const ms = parseFloat(value);
  return Number.isFinite(ms) ? ms : 0;
}

// Every face on the page by its card, and the places cards come from or go to.
export function measure(root) {
  const faces = new Map();
  for (const node of root.querySelectorAll("[data-face]")) {
    const zone = node.closest("[data-zone]");
    faces.set(node.dataset.face, { rect: node.getBoundingClientRect(), zone: zone ? zone.dataset.zone : "", node });
  }
  const badges = new Map();
  for (const node of root.querySelectorAll("[data-badge]")) {
    badges.set(node.dataset.badge, node.getBoundingClientRect());
  }
  return { faces, badges };
}

function centre(rect) {
  return { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
}

const EASE = "cubic-bezier(0.2, 0.7, 0.2, 1)";

// `node` drawn at `from` a moment ago (a DOMRect or a point) moves to where it is now.
export function slide(node, from, ms) {
  if (!ms || !from) return null;
  const to = centre(node.getBoundingClientRect());
  const start = from.width !== undefined ? centre(from) : from;
  const dx = start.x - to.x;
  const dy = start.y - to.y;
  if (Math.abs(dx) < 1 && Math.abs(dy) < 1) return null;
  return node.animate([{ translate: `${dx}px ${dy}px` }, { translate: "0 0" }], {
    duration: ms,
    easing: EASE,
  });
}

// A copy of a face that left the page flies from its last place to `to` and is removed.
export function fly(before, to, ms, layer) {
  if (!ms || !to) return null;
  const copy = before.node.cloneNode(true);
  copy.classList.add("flyer");
  copy.removeAttribute("data-face");
  copy.setAttribute("aria-hidden", "true");
  const r = before.rect;
  copy.style.left = `${r.left}px`;
  copy.style.top = `${r.top}px`;
  copy.style.width = `${r.width}px`;
  copy.style.height = `${r.height}px`;
  layer.append(copy);
  const end = centre(to.width !== undefined ? to : { left: to.x, top: to.y, width: 0, height: 0 });
  const start = centre(r);
  const animation = copy.animate(
    [
      { translate: "0 0", scale: "1", opacity: 1 },
      { translate: `${end.x - start.x}px ${end.y - start.y}px`, scale: "0.6", opacity: 0.2 },
    ],
    { duration: ms, easing: EASE, fill: "forwards" },
  );
  const remove = () => copy.remove();
  animation.onfinish = remove;
  animation.oncancel = remove;
  return animation;
}
