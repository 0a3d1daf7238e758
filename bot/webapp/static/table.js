// The table view: seats, stock and trump, the bout, the discard, the lines, the actions
// and the hand, drawn from the model and patched in place (every element keyed by what it
// shows: data-seat, data-card, data-attack), its listeners attached once. Input reads the
// state's offer only: which cards may do what is the server's to say.

import { back, label, name, paintFace, suitSymbol } from "./cards.js";
import { $, el, keyed, setText } from "./dom.js";
import { handLayout } from "./layout.js";
import { duration, fly, measure, slide } from "./motion.js";
import * as tg from "./telegram.js";

// A card as a button: its tappable part is the button, its drawing (the face) may reach
// under the next card.
function cardButton(code, zone) {
  const button = el("button", "card");
  button.type = "button";
  button.dataset.card = code;
  button.dataset.zone = zone;
  button.append(paintFace(el("span"), code));
  return button;
}

export class TableView {
  constructor(app) {
    this.app = app; // the model (app.model), the texts (app.text), the moves (app.send...)
    this.layout = null;
    this.clockTimer = null;
    this.clockAt = 0;
    this.drag = null;
    this.suppressClick = false;
  }

  text(key, fallback) {
    return this.app.text(key, fallback);
  }

  get model() {
    return this.app.model;
  }

  get state() {
    return this.app.model.state;
  }

  // ---- listeners, once ------------------------------------------------------------------

  mount() {
    const hand = $("hand");
    hand.addEventListener("click", (e) => this.handClick(e));
    hand.addEventListener("keydown", (e) => this.handKey(e));
    hand.addEventListener("pointerdown", (e) => this.dragStart(e));
    hand.addEventListener("pointermove", (e) => this.dragMove(e));
    hand.addEventListener("pointerup", (e) => this.dragEnd(e, false));
    hand.addEventListener("pointercancel", (e) => this.dragEnd(e, true));
    hand.addEventListener("lostpointercapture", (e) => this.dragEnd(e, true));
    $("table").addEventListener("click", (e) => this.tableClick(e));
    $("actions").addEventListener("click", (e) => {
      const button = e.target.closest("button[data-key]");
      if (button && this.actionRuns) {
        const run = this.actionRuns.get(button.dataset.key);
        if (run) run();
      }
    });
    window.addEventListener("resize", () => this.state && this.drawHand());
  }

  // ---- the model's state on the page ----------------------------------------------------

  // Patch the page to the model; `prev`: the state shown before (for the cards' moves).
  show(prev) {
    const s = this.state;
    if (!s) return;
    const ms = this.app.model.active ? duration() : 0;
    const before = ms ? measure($("app")) : null;
    const body = document.body;
    body.dataset.state = s.over ? "over" : "ready";
    body.dataset.version = String(s.version);
    body.dataset.family = s.family;
    body.classList.toggle("my-turn", this.app.mine());
    this.drawSeats();
    this.drawMe();
    this.drawDeck();
    this.drawTable();
    this.drawDiscard();
    this.drawLines();
    this.drawActions();
    this.drawHand();
    this.tick();
    if (before) this.animate(before, prev, s, ms);
  }

  // Only what the player's own choices change (a card armed, the picker): no card moves.
  refresh() {
    this.drawTable();
    this.drawActions();
    this.drawHand();
    this.drawLines();
  }

  // ---- the seats ----------------------------------------------------------------------

  seatOrder() {
    const s = this.state;
    const n = s.seats.length;
    const order = [];
    for (let k = 0; k < n; k++) {
      const i = s.you === null ? k : (s.you + 1 + k) % n;
      if (i !== s.you) order.push(i);
    }
    return order;
  }

  makeSeat() {
    const box = el("div", "seat");
    box.append(el("div", "name"), el("div", "badges"), el("div", "backs"));
    box.setAttribute("role", "group");
    return box;
  }

  fillSeat(box, i, mine) {
    const s = this.state;
    const seat = s.seats[i];
    box.dataset.seat = String(i);
    box.setAttribute("aria-label", seat.label || seat.name);
    box.classList.toggle("waiting", Boolean((seat.waiting || seat.turn) && !s.over));
    box.classList.toggle("out", Boolean(seat.out));
    box.classList.toggle("mine", mine);
    setText(box.children[0], (seat.ai ? "🤖 " : "") + seat.name + (mine ? " " + this.text("you", "(you)") : ""));
    const badges = [];
    if (seat.attacker) badges.push(["attack", "⚔️", "attacker"]);
    if (seat.defender) badges.push(["defend", "🛡", "defender"]);
    if (seat.suit !== undefined) badges.push([`suit suit-${seat.suit}`, seat.suit ? suitSymbol(seat.suit) : "–", "suit"]);
    if (seat.team !== null && seat.team !== undefined) badges.push(["team", seat.team === 0 ? "A" : "B", "team"]);
    if (seat.away) badges.push(["away", "🤖 " + this.text("away", "away"), "away"]);
    if ((seat.waiting || seat.turn) && !s.over) badges.push(["clock", this.clockText() || "⏳", "clock"]);
    keyed(
      box.children[1],
      badges,
      (b) => b[2],
      () => el("span"),
      (node, b) => {
        node.className = "badge " + b[0];
        setText(node, b[1]);
        if (b[2] === "attacker" || b[2] === "defender") node.dataset.badge = b[2];
        else delete node.dataset.badge;
      },
    );
    const fan = box.children[2];
    if (mine) {
      fan.replaceChildren();
      return;
    }
    if (seat.out) {
      if (!fan.querySelector(".safe")) fan.replaceChildren(el("span", "safe", this.text("out", "out")));
      return;
    }
    const shown = Math.min(seat.cards, 8);
    const backs = [...fan.querySelectorAll(".mini")];
    if (backs.length !== shown || !fan.querySelector(".count")) {
      const items = [];
      for (let k = 0; k < shown; k++) items.push(back("mini"));
      items.push(el("span", "count"));
      fan.replaceChildren(...items);
    }
    setText(fan.querySelector(".count"), String(seat.cards));
  }

  drawSeats() {
    const seats = $("seats");
    seats.dataset.count = String(this.state.seats.length);
    keyed(seats, this.seatOrder(), (i) => i, () => this.makeSeat(), (box, i) => this.fillSeat(box, i, false));
  }

  drawMe() {
    const me = $("me");
    const s = this.state;
    keyed(me, s.you === null ? [] : [s.you], (i) => i, () => this.makeSeat(), (box, i) => this.fillSeat(box, i, true));
  }

  clockText() {
    const s = this.state;
    if (s.clock === null || s.clock === undefined || s.over) return "";
    const left = Math.max(0, Math.round(s.clock - (this.app.now() - this.clockAt) / 1000));
    return `⏱ ${left}`;
  }

  tick() {
    clearInterval(this.clockTimer);
    const s = this.state;
    if (s.clock === null || s.clock === undefined || s.over || !this.model.active) return;
    this.clockTimer = setInterval(() => {
      for (const node of document.querySelectorAll(".badge.clock")) setText(node, this.clockText());
    }, 1000);
  }

  // ---- stock, trump, discard -----------------------------------------------------------------

  drawDeck() {
    const s = this.state;
    const deck = $("deck");
    if (!deck.firstChild) {
      const trump = el("div", "trump-mark");
      trump.append(el("span", "symbol"));
      const pile = el("div", "stock");
      pile.dataset.zone = "stock";
      const count = el("div", "count");
      count.append(el("span", "word"), el("span", "num"));
      deck.append(trump, pile, count);
    }
    const [mark, pile, count] = deck.children;
    const symbol = mark.firstChild;
    symbol.className = `symbol suit-${s.trump || ""}`;
    setText(symbol, suitSymbol(s.trump) || "?");
    mark.setAttribute("aria-label", `${this.text("trump", "Trump")}: ${suitSymbol(s.trump) || "?"}`);
    mark.setAttribute("role", "img");
    let trumpCard = null;
    if (s.trumpCard && (s.trumpInStock || s.family === "bout")) trumpCard = s.trumpCard;
    else if (s.outOfPlay) trumpCard = s.outOfPlay;
    const items = [];
    if (trumpCard) items.push({ key: "trump:" + trumpCard, code: trumpCard, gone: !s.trumpInStock && s.family === "bout" });
    if (s.stock > (s.trumpInStock ? 1 : 0)) items.push({ key: "back" });
    keyed(
      pile,
      items,
      (x) => x.key,
      (x) => {
        if (!x.code) return back("stock-back");
        const node = el("span", "trump-card");
        node.setAttribute("role", "img");
        node.append(paintFace(el("span"), x.code));
        return node;
      },
      (node, x) => {
        if (!x.code) return;
        node.classList.toggle("gone", Boolean(x.gone));
        node.setAttribute("aria-label", `${this.text("trump", "Trump")}: ${name(x.code)}`);
      },
    );
    setText(count.children[0], this.text("stock", "Stock"));
    setText(count.children[1], String(s.stock));
    count.setAttribute("aria-label", `${this.text("stock", "Stock")}: ${s.stock}`);
  }

  drawDiscard() {
    const s = this.state;
    const box = $("discard");
    if (!box.firstChild) {
      const heap = el("div", "heap");
      heap.dataset.zone = "discard";
      const count = el("div", "count");
      count.append(el("span", "word"), el("span", "num"));
      box.append(heap, count, el("div", "last"));
    }
    const [heap, count, last] = box.children;
    keyed(heap, s.discard ? ["heap"] : [], (x) => x, () => back("discard-back"), () => {});
    setText(count.children[0], this.text("discard", "Discard"));
    setText(count.children[1], String(s.discard || 0));
    count.setAttribute("aria-label", `${this.text("discard", "Discard")}: ${s.discard || 0}`);
    const pairs = s.lastDiscard || [];
    last.hidden = !pairs.length;
    last.setAttribute("aria-label", this.text("lastDiscard", "Last discarded"));
    keyed(
      last,
      pairs,
      (p) => p.join("/"),
      () => el("span", "mini-label"),
      (node, p) => setText(node, label(p[0]) + (p[1] ? "/" + label(p[1]) : "")),
    );
  }

  // ---- the bout (or the pile) ---------------------------------------------------------------

  drawTable() {
    const s = this.state;
    const table = $("table");
    table.classList.toggle("pile-game", s.family === "pile");
    table.setAttribute("aria-label", this.text("table", "Table"));
    const armed = this.model.armed;
    const covers = new Map();
    if (armed) for (const o of this.app.optionsOf(armed)) if (o.covers) covers.set(o.covers, o);
    let pairs;
    if (s.family === "pile") {
      const cards = s.kind === "road" ? s.pile : s.pile.slice(-4);
      pairs = cards.map((c) => [c, null]);
    } else {
      pairs = s.table || [];
    }
    keyed(
      table,
      pairs,
      (p) => p[0],
      () => el("div", "pair"),
      (pair, [attack, cover]) => {
        pair.dataset.attack = attack;
        const target = covers.get(attack);
        pair.classList.toggle("target", Boolean(target) && !cover);
        keyed(
          pair,
          cover ? [attack, cover] : [attack],
          (c) => c,
          (c) => cardButton(c, "table"),
          (button, c) => {
            button.classList.toggle("cover", c === cover);
            const said = target && c === attack ? target.label : name(c);
            button.setAttribute("aria-label", said);
          },
        );
      },
    );
    // the bout's count, only while a bout is on
    const counter = $("bout");
    const on = s.family === "bout" && !s.over && pairs.length > 0 && s.limit;
    counter.hidden = !on;
    if (on) setText(counter, `${pairs.length}/${s.limit}`);
  }

  // ---- lines -------------------------------------------------------------------------------

  drawLines() {
    const s = this.state;
    const lines = [...(s.notes || [])];
    keyed($("notes"), lines, (x) => x, () => el("div", "note"), (node, x) => setText(node, x));
    let status = s.status || "";
    if (s.you === null) status = this.text("spectator") + " " + status;
    if (s.over) status = status + " · " + this.text("over");
    const armed = this.model.armed;
    if (armed && !s.over) status = this.text("whatShould", "{card}?").replace("{card}", label(armed));
    if (this.model.picking && !s.over) status = this.text("choose");
    setText($("status"), status);
    setText($("title"), s.title || "");
    const shown = s.shownHands || [];
    keyed(
      $("shown"),
      shown,
      (x) => x[0],
      () => {
        const row = el("div", "shown-hand");
        row.append(el("span", "who"), el("span", "cards"));
        return row;
      },
      (row, [seat, cards]) => {
        setText(row.children[0], s.seats[seat].name + ":");
        keyed(
          row.children[1],
          cards,
          (c) => c,
          (c) => {
            const node = el("span", "small-card");
            node.setAttribute("role", "img");
            node.append(paintFace(el("span"), c));
            return node;
          },
          (node, c) => node.setAttribute("aria-label", name(c)),
        );
      },
    );
  }

  // ---- actions ------------------------------------------------------------------------------

  drawActions() {
    const s = this.state;
    const model = this.model;
    const offer = this.app.offer();
    const actions = [];
    if (s.over || s.you === null) {
      // nothing to do
    } else if (model.picking) {
      const ready = offer.openings.find((o) => sameSet(o.cards, model.picking));
      if (ready) actions.push({ key: "play", label: "▶️ " + ready.label, run: () => this.app.move(ready.step) });
      actions.push({ key: "back", label: "↩ " + this.text("back", "Back"), run: () => this.app.back() });
    } else if (model.armed) {
      // the panel's choice: one button for each thing the card may do, and Back
      this.app.optionsOf(model.armed).forEach((o, k) => {
        actions.push({ key: `option:${k}`, label: o.label || label(model.armed), run: () => this.app.move(o.step) });
      });
      actions.push({ key: "back", label: "↩ " + this.text("back", "Back"), run: () => this.app.back() });
    } else {
      for (const entry of offer.actions) {
        actions.push({ key: "do:" + entry.step.do, label: entry.label, run: () => this.app.move(entry.step) });
      }
      if (offer.openings.length) {
        actions.push({ key: "several", label: "🃏 " + this.text("several", "Several cards"), run: () => this.app.pick() });
      }
    }
    this.actionRuns = new Map(actions.map((a) => [a.key, a.run]));
    const rest = tg.showButtons(actions);
    keyed(
      $("actions"),
      rest,
      (a) => a.key,
      () => {
        const b = el("button", "action");
        b.type = "button";
        return b;
      },
      (b, a) => {
        setText(b, a.label);
        b.dataset.do = a.key.startsWith("do:") ? a.key.slice(3) : a.key;
      },
    );
    tg.backButton(Boolean(model.armed || model.picking));
  }

  // ---- the hand ------------------------------------------------------------------------------

  handItems() {
    const s = this.state;
    if (s.you === null) return [];
    if (s.slots) return s.slots.map((c, i) => ({ key: "slot:" + i, slot: i, code: c }));
    return s.hand.map((c) => ({ key: c, code: c }));
  }

  // The hand's room: what the screen has left once everything else is drawn and the
  // table has its smallest useful height (sideways: the column beside the table).
  handSize() {
    const hand = $("hand");
    const app = $("app");
    const width = hand.clientWidth;
    const vh = window.innerHeight;
    const landscape = document.body.classList.contains("landscape");
    const wide = window.innerWidth >= 700 && vh >= 560;
    let height;
    if (landscape) {
      const top = hand.getBoundingClientRect().top - app.getBoundingClientRect().top;
      height = vh - top - 12;
    } else {
      const others = app.scrollHeight - $("middle").offsetHeight - hand.offsetHeight;
      height = Math.min(Math.round(vh * (wide ? 0.4 : 0.45)), vh - others - (wide ? 220 : 150));
    }
    return { width, height: Math.max(90, height), smallest: 38, largest: wide ? 92 : 66 };
  }

  drawHand() {
    const s = this.state;
    const model = this.model;
    const hand = $("hand");
    const items = this.handItems();
    hand.setAttribute("aria-label", this.text(s.slots ? "faceDown" : "yourCards", "Your cards"));
    const size = this.handSize();
    const layout = handLayout(Math.max(1, items.length), size.width, size.height, size.smallest, size.largest);
    this.layout = layout;
    hand.style.height = `${items.length ? layout.height : 0}px`;
    hand.style.setProperty("--hw", `${layout.w}px`);
    hand.style.setProperty("--hh", `${layout.h}px`);
    const offer = this.app.offer();
    const live = Boolean(s.slotsLive) && !model.lock;
    keyed(
      hand,
      items,
      (x) => x.key,
      (x) => {
        const button = el("button", "card in-hand");
        button.type = "button";
        button.dataset.zone = "hand";
        button.append(x.code ? paintFace(el("span"), x.code) : back());
        return button;
      },
      (button, x) => {
        const k = items.indexOf(x);
        const at = layout.cards[k];
        button.style.left = `${at.x}px`;
        button.style.top = `${at.y}px`;
        button.style.width = `${at.tapW}px`;
        button.style.height = `${at.tapH}px`;
        button.style.zIndex = String(k + 1);
        const faceNode = button.firstChild;
        if (x.slot !== undefined) {
          button.dataset.slot = String(x.slot);
          if (x.code && faceNode.dataset.face !== x.code) button.replaceChildren(paintFace(el("span"), x.code));
          if (!x.code && faceNode.dataset.face) button.replaceChildren(back());
          button.setAttribute("aria-label", x.code ? name(x.code) : this.text("faceDownCard", "{n}").replace("{n}", String(x.slot + 1)));
          button.classList.toggle("legal", live);
          button.classList.toggle("dim", !live);
          return;
        }
        button.dataset.card = x.code;
        const picking = model.picking;
        const lit = picking ? picking.includes(x.code) || this.app.pickable(x.code) : Boolean(offer.cards[x.code]);
        button.classList.toggle("legal", lit && !model.lock);
        button.classList.toggle("dim", !lit && this.app.mine());
        button.classList.toggle("armed", model.armed === x.code);
        button.classList.toggle("chosen", Boolean(picking && picking.includes(x.code)));
        button.setAttribute("aria-label", name(x.code));
        button.setAttribute("aria-pressed", String(model.armed === x.code || Boolean(picking && picking.includes(x.code))));
      },
    );
  }

  // ---- input ----------------------------------------------------------------------------------

  handClick(e) {
    const button = e.target.closest("button.card");
    if (!button) return;
    if (this.suppressClick) {
      this.suppressClick = false;
      return;
    }
    if (button.dataset.slot !== undefined) this.app.slot(Number(button.dataset.slot));
    else this.app.tap(button.dataset.card);
  }

  handKey(e) {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    const buttons = [...$("hand").querySelectorAll("button.card")];
    const k = buttons.indexOf(document.activeElement);
    if (k < 0) return;
    const next = buttons[k + (e.key === "ArrowRight" ? 1 : -1)];
    if (next) {
      next.focus();
      e.preventDefault();
    }
  }

  tableClick(e) {
    const pair = e.target.closest(".pair");
    if (pair) this.app.target(pair.dataset.attack);
  }

  // A drag of a hand card onto the table: onto an attack card, it covers that one;
  // anywhere else on the table, it is a tap. The card itself moves (no copy): a state that
  // comes meanwhile waits for the drop.
  dragStart(e) {
    const button = e.target.closest("button.card");
    if (!button || e.button !== 0 || button.dataset.slot !== undefined) return;
    this.drag = { button, id: e.pointerId, x: e.clientX, y: e.clientY, moving: false };
  }

  dragMove(e) {
    const d = this.drag;
    if (!d || e.pointerId !== d.id) return;
    const dx = e.clientX - d.x;
    const dy = e.clientY - d.y;
    if (!d.moving) {
      if (Math.hypot(dx, dy) < 12) return;
      d.moving = true;
      this.model.dragging = true;
      try {
        d.button.setPointerCapture(e.pointerId);
      } catch (err) {
        /* the pointer is gone */
      }
      d.button.classList.add("dragging");
      document.body.classList.add("dragging");
    }
    d.button.firstChild.style.translate = `${dx}px ${dy}px`;
  }

  dragEnd(e, cancelled) {
    const d = this.drag;
    if (!d || e.pointerId !== d.id) return;
    this.drag = null;
    if (!d.moving) return;
    this.suppressClick = !cancelled;
    const code = d.button.dataset.card;
    let attack = null;
    let onTable = false;
    if (!cancelled) {
      const under = document.elementFromPoint(e.clientX, e.clientY);
      const pair = under && under.closest(".pair");
      attack = pair ? pair.dataset.attack : null;
      onTable = Boolean(under && under.closest("#middle"));
    }
    const faceNode = d.button.firstChild;
    const from = faceNode.getBoundingClientRect();
    faceNode.style.translate = "";
    d.button.classList.remove("dragging");
    document.body.classList.remove("dragging");
    this.model.dragging = false;
    this.app.dropped(code, attack, onTable, from);
  }

  // ---- the cards' moves ----------------------------------------------------------------------

  animate(before, prev, next, ms) {
    const layer = $("flyers");
    const now = measure($("app"));
    const seatRect = (i) => {
      if (i === null || i === undefined) return null;
      const node = document.querySelector(`[data-seat="${i}"]`);
      return node ? node.getBoundingClientRect() : null;
    };
    const stock = document.querySelector("#deck .stock");
    const discard = document.querySelector("#discard .heap") || $("discard");
    const dropped = prev && next.family === "bout" ? (prev.seats || []).map((x, i) => x.cards - ((next.seats[i] || {}).cards || 0)) : [];
    for (const [code, here] of now.faces) {
      if (!here.zone) continue;
      const was = before.faces.get(code);
      if (was && was.zone) {
        slide(here.node, was.rect, ms);
        continue;
      }
      if (!prev || prev.game !== next.game) continue;
      if (here.zone === "hand") {
        slide(here.node, stock ? stock.getBoundingClientRect() : null, ms); // dealt from the stock
      } else if (here.zone === "table") {
        const pair = here.node.closest(".pair");
        const isCover = pair && pair.dataset.attack !== code;
        let from = isCover ? next.defender : null;
        if (from === null) {
          const k = dropped.findIndex((x) => x > 0);
          from = k >= 0 ? k : prev.turn ?? next.attacker;
        }
        from = from === null || from === undefined ? null : from;
        if (from === next.you) continue;
        slide(here.node, seatRect(from), ms);
      }
    }
    if (!prev) return;
    // cards that left the table: beaten off to the discard, or taken by the defender
    const toDiscard = (next.discard || 0) > (prev.discard || 0);
    const taker = prev.seats.findIndex((x) => x.defender);
    for (const [code, was] of before.faces) {
      if (was.zone !== "table" || now.faces.has(code)) continue;
      const to = toDiscard || prev.family === "pile" ? discard.getBoundingClientRect() : seatRect(taker >= 0 ? taker : null);
      fly(was, to, ms, layer);
    }
    // the others' refill: a card from the stock to each seat that drew
    const took = !toDiscard && [...before.faces.values()].some((f) => f.zone === "table");
    if (stock && next.family === "bout" && prev.family === "bout") {
      const from = { node: back(), rect: stock.getBoundingClientRect() };
      next.seats.forEach((seat, i) => {
        const grew = seat.cards - ((prev.seats[i] || {}).cards || 0);
        if (i !== next.you && grew > 0 && !(took && i === taker)) fly(from, seatRect(i), ms, layer);
      });
    }
    // the bout moved on: the attacker's and defender's marks slide to their new seats
    for (const [badge, rect] of before.badges) {
      const node = document.querySelector(`[data-badge="${badge}"]`);
      if (node) slide(node, rect, ms);
    }
  }
}

function sameSet(a, b) {
  return a.length === b.length && a.every((c) => b.includes(c));
}
