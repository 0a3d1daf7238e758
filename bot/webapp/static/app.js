// The table: one WebSocket, one state from the bot at a time, drawn whole.
import { back, face, label, setLetters, suitSymbol } from "./cards.js";
import * as tg from "./telegram.js";

const $ = (id) => document.getElementById(id);
const base = document.body.dataset.base || "";
let T = {}; // the labels, in the player's language (from the bot)
let state = null;
let ws = null;
let retry = 0;
let closedForGood = false;
let armed = null; // a hand card waiting for the attack card it should cover
let picking = null; // the cards chosen for a several-card opening, or null
let clockAt = 0;
let clockTimer = null;

function text(key, fallback) {
  return T[key] || fallback || key;
}

// ---- the connection ------------------------------------------------------------------

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  ws = new WebSocket(`${scheme}://${location.host}${base}/ws`);
  setConn(retry ? text("reconnecting", "Reconnecting…") : text("connecting", "Connecting…"));
  ws.onopen = () => {
    const hello = { init: tg.initData() };
    const game = new URLSearchParams(location.search).get("game");
    if (game && /^\d{1,15}$/.test(game)) hello.game = Number(game);
    ws.send(JSON.stringify(hello));
  };
  ws.onmessage = (event) => {
    let msg;
    try {
      msg = JSON.parse(event.data);
    } catch (e) {
      return;
    }
    if (msg.texts) {
      T = msg.texts;
      setLetters(T.ranks);
    } else if (msg.state) {
      retry = 0;
      setConn("");
      received(msg.state);
    } else if (msg.error) {
      refused(msg);
    }
  };
  ws.onclose = () => {
    ws = null;
    if (closedForGood) return;
    document.body.dataset.state = "reconnecting";
    setConn(text("reconnecting", "Connection lost: reconnecting…"));
    retry += 1;
    setTimeout(connect, Math.min(5000, 300 * 2 ** Math.min(retry, 5)));
  };
}

function setConn(message) {
  $("conn").textContent = message;
  $("conn").hidden = !message;
}

function send(message) {
  if (!ws || ws.readyState !== WebSocket.OPEN) return;
  ws.send(JSON.stringify(message));
}

function move(step) {
  if (!state) return;
  tg.haptic("light");
  armed = null;
  picking = null;
  send({ move: step, version: state.version });
  document.body.dataset.sent = String(state.version);
}

function refused(msg) {
  if (["unauthorized", "no_game", "not_member", "too_many_connections", "flood"].includes(msg.error)) {
    closedForGood = msg.error !== "flood";
    document.body.dataset.state = "refused";
  }
  tg.haptic("error");
  toast(msg.text || msg.error);
  document.body.dataset.refusal = msg.error;
}

let toastTimer = null;
function toast(message) {
  const el = $("toast");
  el.textContent = message;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (el.hidden = true), 3500);
}

// ---- what the player may do: read from the state's offer (the server decides) ---------

function offer() {
  return state ? state.offer : { cards: {}, actions: [], openings: [] };
}

function optionsOf(card) {
  const entry = offer().cards[card];
  return entry ? entry.options : [];
}

function sameSet(a, b) {
  return a.length === b.length && a.every((c) => b.includes(c));
}

function pickable(card) {
  const next = picking.includes(card) ? picking.filter((c) => c !== card) : [...picking, card];
  return !next.length || offer().openings.some((o) => next.every((c) => o.cards.includes(c)));
}

function anything() {
  const o = offer();
  return Object.keys(o.cards).length > 0 || o.actions.length > 0;
}

function tap(card) {
  if (picking) {
    if (!pickable(card)) {
      tg.haptic("error");
      return;
    }
    picking = picking.includes(card) ? picking.filter((c) => c !== card) : [...picking, card];
    tg.haptic("select");
    draw();
    return;
  }
  const entry = offer().cards[card];
  if (!entry) {
    tg.haptic("error");
    toast(anything() ? text("cannotPlay") : text("notYourTurn"));
    return;
  }
  if (!entry.ask) {
    move(entry.options[0].step);
    return;
  }
  armed = armed === card ? null : card; // which one: the choice's buttons, or tap the target
  tg.haptic("select");
  draw();
}

function coverOption(card, attack) {
  return optionsOf(card).find((o) => o.covers === attack);
}

function target(attack) {
  if (!armed) return false;
  const option = coverOption(armed, attack);
  if (option) move(option.step);
  return Boolean(option);
}

// ---- drawing ---------------------------------------------------------------------------

function el(tag, cls, content) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (content !== undefined) node.textContent = content;
  return node;
}

function received(next) {
  const wasMine = Boolean(state) && anything();
  if (!state || state.version !== next.version || state.game !== next.game) {
    armed = null;
    picking = null;
  }
  state = next;
  clockAt = Date.now();
  if (!wasMine && anything() && !state.over) tg.haptic("success");
  draw();
}

function seatOrder() {
  const n = state.seats.length;
  const me = state.you;
  const order = [];
  for (let k = 0; k < n; k++) {
    const i = me === null ? k : (me + 1 + k) % n;
    if (i !== me) order.push(i);
  }
  return order;
}

function clockText() {
  if (state.clock === null || state.clock === undefined || state.over) return "";
  const left = Math.max(0, Math.round(state.clock - (Date.now() - clockAt) / 1000));
  return `⏱ ${left}`;
}

function seatBox(i) {
  const s = state.seats[i];
  const box = el("div", "seat");
  box.dataset.seat = String(i);
  if (s.waiting || s.turn) box.classList.add("waiting");
  if (s.out) box.classList.add("out");
  const name = el("div", "name", (s.ai ? "🤖 " : "") + s.name);
  const badges = el("div", "badges");
  if (s.attacker) badges.append(el("span", "badge attack", "⚔️"));
  if (s.defender) badges.append(el("span", "badge defend", "🛡"));
  if (s.suit !== undefined) badges.append(el("span", `badge suit suit-${s.suit}`, s.suit ? suitSymbol(s.suit) : "–"));
  if (s.team !== null && s.team !== undefined) badges.append(el("span", "badge", s.team === 0 ? "A" : "B"));
  if (s.away) badges.append(el("span", "badge away", "🤖 " + text("away")));
  if ((s.waiting || s.turn) && !state.over) {
    const clock = el("span", "badge clock", clockText() || "⏳");
    badges.append(clock);
  }
  const fan = el("div", "backs");
  if (s.out) {
    fan.append(el("span", "safe", text("out", "out")));
  } else {
    const shown = Math.min(s.cards, 8);
    for (let k = 0; k < shown; k++) fan.append(back("mini"));
    fan.append(el("span", "count", String(s.cards)));
  }
  box.append(name, badges, fan);
  return box;
}

function drawMe() {
  const me = $("me");
  me.replaceChildren();
  if (state.you === null) return;
  const box = seatBox(state.you);
  box.classList.add("mine");
  box.querySelector(".backs").remove();
  box.querySelector(".name").textContent = state.seats[state.you].name + " " + text("you", "(you)");
  me.append(box);
}

function drawSeats() {
  const seats = $("seats");
  seats.replaceChildren(...seatOrder().map(seatBox));
  seats.dataset.count = String(state.seats.length);
}

function drawDeck() {
  const deck = $("deck");
  deck.replaceChildren();
  const trump = el("div", "trump-line");
  trump.append(el("span", `suit-${state.trump || ""}`, suitSymbol(state.trump) || "?"));
  deck.append(trump);
  const pile = el("div", "stock");
  if (state.trumpCard && (state.trumpInStock || state.family === "bout")) {
    const card = face(state.trumpCard, "trump-card");
    if (!state.trumpInStock) card.classList.add("gone");
    pile.append(card);
  } else if (state.outOfPlay) {
    pile.append(face(state.outOfPlay, "trump-card"));
  }
  if (state.stock > (state.trumpInStock ? 1 : 0)) pile.append(back("stock-back"));
  deck.append(pile);
  deck.append(el("div", "count", `${text("stock", "Stock")}: ${state.stock}`));
}

function pairBox(attack, cover) {
  const pair = el("div", "pair");
  pair.dataset.attack = attack;
  const a = face(attack, "on-table");
  pair.append(a);
  if (cover) pair.append(face(cover, "cover"));
  const coverable = armed && !cover && Boolean(coverOption(armed, attack));
  if (coverable) pair.classList.add("target");
  pair.addEventListener("click", () => target(attack));
  return pair;
}

function drawTable() {
  const table = $("table");
  table.replaceChildren();
  table.classList.toggle("pile-game", state.family === "pile");
  if (state.family === "pile") {
    const cards = state.kind === "road" ? state.pile : state.pile.slice(-4);
    const pile = el("div", "pile");
    cards.forEach((c, k) => {
      const card = face(c, "on-pile");
      card.style.setProperty("--k", String(k));
      pile.append(card);
    });
    if (!state.pile.length) pile.append(el("div", "empty", "—"));
    table.append(pile, el("div", "count", `${text("pile", "Pile")}: ${state.pile.length}`));
    return;
  }
  for (const [a, c] of state.table) table.append(pairBox(a, c));
  if (!state.table.length) table.append(el("div", "empty", ""));
  if (state.limit) table.dataset.limit = `${state.table.length}/${state.limit}`;
}

function drawDiscard() {
  const box = $("discard");
  box.replaceChildren();
  if (state.discard) {
    const heap = el("div", "heap");
    heap.append(back("discard-back"));
    box.append(heap);
  }
  box.append(el("div", "count", `${text("discard", "Discard")}: ${state.discard}`));
  if (state.lastDiscard && state.lastDiscard.length) {
    const last = el("div", "last");
    last.title = text("lastDiscard");
    last.append(el("span", "hint", text("lastDiscard") + ":"));
    for (const [a, c] of state.lastDiscard) {
      last.append(el("span", "mini-label", label(a) + (c ? "/" + label(c) : "")));
    }
    box.append(last);
  }
}

function drawNotes() {
  $("notes").replaceChildren(...state.notes.map((line) => el("div", "note", line)));
  $("status").textContent = state.status || "";
  $("title").textContent = state.title || "";
  const shown = $("shown");
  shown.replaceChildren();
  for (const [seat, cards] of state.shownHands || []) {
    const row = el("div", "shown-hand");
    row.append(el("span", "hint", state.seats[seat].name + ":"));
    for (const c of cards) row.append(face(c, "small"));
    shown.append(row);
  }
  if (state.you === null) $("status").textContent = text("spectator") + " " + (state.status || "");
  if (state.over) $("status").textContent = (state.status || "") + " · " + text("over");
}

function button(labelText, run, cls = "") {
  const b = el("button", `action ${cls}`.trim(), labelText);
  b.type = "button";
  b.addEventListener("click", run);
  return b;
}

function drawActions() {
  const actions = [];
  if (picking) {
    const ready = offer().openings.find((o) => sameSet(o.cards, picking));
    if (ready) actions.push({ label: "▶️ " + ready.label, run: () => move(ready.step), key: "play" });
    actions.push({ label: "↩ " + text("back", "Back"), run: () => { picking = null; draw(); }, key: "back" });
  } else if (armed) {
    // the panel's choice: one button for each thing the card may do, and Back
    for (const o of optionsOf(armed)) {
      actions.push({ label: o.label, run: () => move(o.step), key: o.step.do });
    }
    actions.push({ label: "↩ " + text("back", "Back"), run: () => { armed = null; draw(); }, key: "back" });
  } else {
    for (const entry of offer().actions) {
      actions.push({ label: entry.label, run: () => move(entry.step), key: entry.step.do });
    }
    if (offer().openings.length) {
      actions.push({ label: "🃏 " + text("several", "Several cards"), run: () => { picking = []; draw(); }, key: "several" });
    }
  }
  const rest = tg.showButtons(actions);
  $("actions").replaceChildren(
    ...rest.map((a) => {
      const b = button(a.label, a.run);
      b.dataset.do = a.key;
      return b;
    }),
  );
}

function drawHand() {
  const hand = $("hand");
  hand.replaceChildren();
  if (state.you === null) return;
  if (state.slots) {
    state.slots.forEach((c, i) => {
      const card = c ? face(c) : back();
      card.classList.add("slot");
      card.dataset.slot = String(i);
      if (state.slotsLive) card.classList.add("legal");
      else card.classList.add("dim");
      card.addEventListener("click", () => {
        if (!state.slotsLive) {
          tg.haptic("error");
          toast(text("notYourTurn"));
          return;
        }
        tg.haptic("light");
        send({ slot: i, version: state.version });
      });
      hand.append(card);
    });
  } else {
    for (const c of state.hand) {
      const card = face(c, "in-hand");
      const lit = picking ? picking.includes(c) || pickable(c) : Boolean(offer().cards[c]);
      card.classList.add(lit ? "legal" : "dim");
      if (c === armed) card.classList.add("armed");
      if (picking && picking.includes(c)) card.classList.add("chosen");
      draggable(card, c);
      hand.append(card);
    }
  }
  hand.style.setProperty("--n", String(Math.max(1, hand.children.length)));
}

// A drag of a hand card onto the table: onto an attack card, it covers that one;
// anywhere else on the table, it is a tap.
function draggable(node, card) {
  let start = null;
  let ghost = null;
  node.addEventListener("pointerdown", (e) => {
    start = { x: e.clientX, y: e.clientY };
    node.setPointerCapture(e.pointerId);
  });
  node.addEventListener("pointermove", (e) => {
    if (!start) return;
    if (!ghost && Math.hypot(e.clientX - start.x, e.clientY - start.y) > 12) {
      ghost = node.cloneNode(true);
      ghost.classList.add("ghost");
      document.body.append(ghost);
      node.classList.add("lifted");
    }
    if (ghost) {
      ghost.style.left = `${e.clientX - 28}px`;
      ghost.style.top = `${e.clientY - 40}px`;
    }
  });
  const end = (e, cancelled) => {
    if (!start) return;
    const dragged = Boolean(ghost);
    start = null;
    if (ghost) ghost.remove();
    ghost = null;
    node.classList.remove("lifted");
    if (cancelled) return;
    if (!dragged) {
      tap(card);
      return;
    }
    const under = document.elementFromPoint(e.clientX, e.clientY);
    const pair = under && under.closest(".pair");
    if (pair) {
      const option = coverOption(card, pair.dataset.attack);
      if (option) {
        move(option.step);
        return;
      }
    }
    if (under && under.closest("#middle")) tap(card);
  };
  node.addEventListener("pointerup", (e) => end(e, false));
  node.addEventListener("pointercancel", (e) => end(e, true));
}

function draw() {
  if (!state) return;
  document.body.dataset.state = state.over ? "over" : "ready";
  document.body.dataset.version = String(state.version);
  document.body.dataset.family = state.family;
  document.body.classList.toggle("my-turn", anything() || Boolean(state.slotsLive));
  drawSeats();
  drawMe();
  drawDeck();
  drawTable();
  drawDiscard();
  drawNotes();
  drawActions();
  drawHand();
  clearInterval(clockTimer);
  if (state.clock !== null && state.clock !== undefined && !state.over) {
    clockTimer = setInterval(() => {
      for (const c of document.querySelectorAll(".badge.clock")) c.textContent = clockText();
    }, 1000);
  }
}

tg.start(draw);
connect();
