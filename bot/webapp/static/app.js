// The Mini App: one model, one connection, views that patch the page from the model.
// The table is the one view today (body[data-view=table]); a lobby, a spectator's and a
// replay view are views beside it, chosen by the message the bot sends.

import { loadArt, setTexts } from "./cards.js";
import { $ } from "./dom.js";
import { Extras } from "./extras.js";
import { LobbyView } from "./lobby.js";
import { Connection } from "./net.js";
import { ReplayView } from "./replay.js";
import { TableView } from "./table.js";
import * as tg from "./telegram.js";

const base = document.body.dataset.base || "";

// The one model: what the bot said last, and what the player is in the middle of.
const model = {
  texts: {},
  state: null, // the last state shown (its version is the one the page shows)
  armed: null, // a hand card whose options the page asks about (the panel's choice)
  picking: null, // the cards chosen for a several-card opening, or null
  lock: null, // the version a move was sent for: no other move until the next state
  dragging: false, // a card is being dragged: a state that comes waits for the drop
  deferred: null, // that state
  active: true, // the page is in front (Telegram's activated / deactivated)
  closed: false, // refused for good (no game, not a member): no reconnecting
  fourColours: false,
};

const app = {
  model,
  text(key, fallback) {
    return model.texts[key] || fallback || key;
  },
  now: () => Date.now(),
  send: (message) => net.send(message),
  offer() {
    return model.state && model.state.offer ? model.state.offer : { cards: {}, actions: [], openings: [] };
  },
  optionsOf(card) {
    const entry = app.offer().cards[card];
    return entry ? entry.options : [];
  },
  mine() {
    const o = app.offer();
    return Boolean(model.state && !model.state.over && (Object.keys(o.cards).length || o.actions.length || model.state.slotsLive));
  },
  pickable(card) {
    const chosen = model.picking || [];
    const next = chosen.includes(card) ? chosen.filter((c) => c !== card) : [...chosen, card];
    return next.length > 0 && app.offer().openings.some((o) => next.every((c) => o.cards.includes(c)));
  },

  // ---- what the player does: the offer says what each card may do ----------------------

  move(step) {
    if (!model.state || model.lock !== null) return; // one move per state: a second tap waits
    if (!net.send({ move: step, version: model.state.version })) return;
    tg.haptic("light");
    model.lock = model.state.version;
    model.armed = null;
    model.picking = null;
    document.body.dataset.lock = "1";
    view.refresh();
  },
  slot(index) {
    const s = model.state;
    if (!s || model.lock !== null) return;
    if (!s.slotsLive) {
      tg.haptic("error");
      toast(app.text("notYourTurn"));
      return;
    }
    if (!net.send({ slot: index, version: s.version })) return;
    tg.haptic("light");
    model.lock = s.version;
    document.body.dataset.lock = "1";
    view.refresh();
  },
  tap(card) {
    if (!model.state || model.lock !== null) return;
    if (model.picking) {
      if (!model.picking.includes(card) && !app.pickable(card)) {
        tg.haptic("error");
        return;
      }
      model.picking = model.picking.includes(card) ? model.picking.filter((c) => c !== card) : [...model.picking, card];
      tg.haptic("select");
      view.refresh();
      return;
    }
    const entry = app.offer().cards[card];
    if (!entry) {
      tg.haptic("error");
      toast(app.mine() ? app.text("cannotPlay") : app.text("notYourTurn"));
      return;
    }
    if (!entry.ask) {
      app.move(entry.options[0].step);
      return;
    }
    model.armed = model.armed === card ? null : card; // which one: the choice, or its target
    tg.haptic("select");
    view.refresh();
  },
  target(attack) {
    if (!model.armed) return;
    const option = app.optionsOf(model.armed).find((o) => o.covers === attack);
    if (option) app.move(option.step);
  },
  pick() {
    model.picking = [];
    model.armed = null;
    view.refresh();
  },
  back() {
    model.armed = null;
    model.picking = null;
    view.refresh();
  },
  // A drag ended on the table (onto `attack`'s card, or anywhere on it): the state that
  // came meanwhile is shown first, and the drop means what it means in that state.
  dropped(card, attack, onTable) {
    if (model.deferred) {
      const next = model.deferred;
      model.deferred = null;
      received(next);
    }
    if (!card || model.lock !== null || (!attack && !onTable)) return;
    const options = app.optionsOf(card);
    const cover = attack ? options.find((o) => o.covers === attack) : null;
    if (cover) app.move(cover.step);
    else if (onTable) app.tap(card);
  },
};

// The views: each draws the model on the page, patching its own elements; body[data-view]
// names the one shown (a message of another kind, a lobby or a replay, chooses its own).
const views = { table: new TableView(app), lobby: new LobbyView(app), replay: new ReplayView(app) };
let view = views.table;
const extras = new Extras(app); // around the table: watchers, phrases, the end's buttons

function showView(name) {
  if (view !== views[name]) {
    if (view === views.replay) views.replay.pause();
    if (view === views.table) clearInterval(views.table.clockTimer);
  }
  if (document.body.dataset.view !== name) document.body.dataset.view = name;
  view = views[name];
}

// ---- messages from the bot ----------------------------------------------------------------

function received(next) {
  if (model.dragging) {
    model.deferred = next; // applied when the card is dropped
    return;
  }
  const prev = model.state;
  if (prev && prev.game === next.game && next.version < prev.version) return; // an old one
  const changed = !prev || prev.version !== next.version || prev.game !== next.game;
  const wasMine = app.mine();
  model.state = next;
  if (changed) {
    model.armed = null;
    model.picking = null;
    hideToast(); // what it said was about the table before
  }
  if (model.lock !== null && (next.version > model.lock || next.game !== (prev && prev.game))) {
    model.lock = null;
    delete document.body.dataset.lock;
  }
  view.clockAt = app.now();
  tg.playing(!next.over && next.you !== null);
  if (!wasMine && app.mine()) tg.haptic("success"); // your turn
  view.show(changed ? prev : next);
  extras.show(next);
}

function refused(msg) {
  if (["unauthorized", "no_game", "not_member", "too_many_connections"].includes(msg.error)) {
    model.closed = true;
    net.stop();
    document.body.dataset.state = "refused";
  }
  if (model.lock !== null) {
    model.lock = null; // the move was refused: the next one may go
    delete document.body.dataset.lock;
    if (model.state && view === views.table) view.refresh();
  }
  tg.haptic("error");
  toast(msg.text || msg.error);
  document.body.dataset.refusal = msg.error;
}

function message(msg) {
  if (msg.texts) {
    model.texts = msg.texts;
    setTexts(msg.texts);
    if (msg.texts.lang) document.documentElement.lang = msg.texts.lang;
    $("settings-button").setAttribute("aria-label", app.text("settings", "Settings"));
    $("four-label").textContent = app.text("fourColours", "Four-colour deck");
    $("settings-close").textContent = app.text("close", "Close");
    $("seats").setAttribute("aria-label", app.text("players", "Players"));
    extras.texts();
  } else if (msg.state) {
    net.fine();
    setConn("");
    showView("table");
    received(msg.state);
  } else if (msg.lobby || msg.replay) {
    net.fine();
    setConn("");
    tg.playing(false);
    showView(msg.lobby ? "lobby" : "replay");
    view.show(msg.lobby || msg.replay);
  } else if (msg.said) {
    extras.said(msg.said);
  } else if (msg.watchers !== undefined) {
    extras.watchers(msg.watchers);
  } else if (msg.error) {
    refused(msg);
  }
}

// ---- the toast: a refusal, out of the hand's way, gone when the table changes -----------

let toastTimer = null;
function toast(text) {
  const node = $("toast");
  node.textContent = text;
  node.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(hideToast, 3500);
}

function hideToast() {
  clearTimeout(toastTimer);
  $("toast").hidden = true;
}

function setConn(text) {
  $("conn").textContent = text;
  $("conn").hidden = !text;
}

// ---- the connection -----------------------------------------------------------------------

const scheme = location.protocol === "https:" ? "wss" : "ws";
const net = new Connection(`${scheme}://${location.host}${base}/ws`, {
  open() {
    const hello = { init: tg.initData() };
    const game = new URLSearchParams(location.search).get("game");
    if (game && /^\d{1,15}$/.test(game)) hello.game = Number(game);
    net.send(hello);
  },
  message,
  down() {
    model.lock = null;
    delete document.body.dataset.lock;
    document.body.dataset.state = "reconnecting";
    setConn(app.text("reconnecting", "Connection lost: reconnecting…"));
  },
});

// Back in front (Telegram's activated, or the page visible again): the page asks for the
// whole state, which may have moved on meanwhile; in the background it stops its clock.
function active(on) {
  if (model.active === on) return;
  model.active = on;
  document.body.dataset.active = on ? "1" : "0";
  if (!on) {
    clearInterval(views.table.clockTimer);
    return;
  }
  if (model.closed) return;
  if (!net.send({ sync: model.state ? model.state.version : -1 })) net.wake();
  if (model.state && view === views.table) view.tick();
}

// ---- settings: a four-colour deck ------------------------------------------------------------

function fourColours(on) {
  model.fourColours = on;
  document.body.classList.toggle("four-colours", on);
  $("four").checked = on;
}

function settings() {
  const panel = $("settings");
  $("settings-button").addEventListener("click", () => {
    panel.hidden = !panel.hidden;
    if (!panel.hidden) $("four").focus();
  });
  $("settings-close").addEventListener("click", () => {
    panel.hidden = true;
    $("settings-button").focus();
  });
  $("four").addEventListener("change", (e) => {
    fourColours(e.target.checked);
    tg.saveSetting("four_colours", e.target.checked ? "1" : "0");
  });
  tg.loadSetting("four_colours").then((value) => fourColours(value === "1"));
}

function orientation() {
  const landscape = innerWidth > innerHeight && innerHeight < 560;
  document.body.classList.toggle("landscape", landscape);
}

orientation();
window.addEventListener("resize", orientation);
for (const each of Object.values(views)) each.mount();
extras.mount();
settings();
tg.start({
  theme: () => view === views.table && model.state && view.show(model.state),
  back: () => (model.armed || model.picking ? app.back() : undefined),
  active,
});
document.body.dataset.active = "1";
loadArt(document.body.dataset.court);
setConn(app.text("connecting", "Connecting…"));
net.connect();
