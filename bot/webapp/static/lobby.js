// The lobby view (body[data-view=lobby]): who sits, the game and its options, and the
// buttons the bot says this player may press (`may`: Join, Leave, I'm in; the creator's AI
// seats, cap and Start; own trumps' free suits on his turn). Drawn from the bot's `lobby`
// message and patched in place; every button a <button>, its listener delegated once.

import { suitSymbol } from "./cards.js";
import { $, el, keyed, setText } from "./dom.js";

export class LobbyView {
  constructor(app) {
    this.app = app;
    this.lobby = null;
  }

  text(key, fallback) {
    return this.app.text(key, fallback);
  }

  mount() {
    $("lobby").addEventListener("click", (e) => {
      const button = e.target.closest("button[data-send]");
      if (!button || button.disabled) return;
      this.app.send(JSON.parse(button.dataset.send));
    });
  }

  // What the page shows of the lobby now (a later state replaces it).
  show(lobby) {
    this.lobby = lobby;
    const body = document.body;
    body.dataset.state = lobby.open ? "lobby" : "closed";
    body.dataset.lobby = String(lobby.game);
    setText($("title"), lobby.title || "");
    setText($("lobby-title"), this.text(lobby.again ? "againButton" : "lobby", "Lobby"));
    setText($("lobby-game"), lobby.name || "");
    keyed($("lobby-options"), lobby.options || [], (x) => x, () => el("li"), (li, x) => setText(li, x));
    keyed(
      $("lobby-seats"),
      lobby.seats.map((s, i) => ({ ...s, i })),
      (s) => `${s.i}:${s.name}`,
      () => el("li", "lobby-seat"),
      (li, s) => {
        const marks = [];
        if (lobby.again) marks.push(s.ready ? "✅" : "⏳");
        marks.push((s.ai ? "🤖 " : "") + s.name);
        if (s.i === lobby.you) marks.push(this.text("you", "(you)"));
        if (s.creator) marks.push("⭐");
        setText(li, marks.join(" "));
        li.classList.toggle("mine", s.i === lobby.you);
        li.dataset.seat = String(s.i);
      },
    );
    let status = lobby.status || "";
    if (lobby.open && lobby.you !== null && !lobby.may.includes("start")) {
      status += (status ? " " : "") + this.text("youSit", "");
    }
    setText($("lobby-status"), status);
    this.drawButtons();
  }

  drawButtons() {
    const lobby = this.lobby;
    const may = new Set(lobby.may || []);
    const buttons = [];
    const add = (key, label, message, cls = "action") => buttons.push({ key, label, message, cls });
    if (may.has("join")) add("join", this.text("join", "Join"), { lobby: "join" });
    if (may.has("confirm")) add("confirm", this.text("confirm", "I'm in"), { lobby: "confirm" });
    if (may.has("start")) add("start", this.text("start", "Start"), { lobby: "start" });
    if (may.has("leave")) add("leave", this.text("leave", "Leave"), { lobby: "leave" }, "action quiet");
    keyed($("lobby-buttons"), buttons, (b) => b.key, () => this.button(), (b, x) => this.fill(b, x));
    // the creator's: AI seats of three levels, the cap of players
    const levels = this.text("levels", {});
    const ai = may.has("ai")
      ? ["easy", "normal", "hard"].map((level) => ({
          key: level,
          label: "🤖 " + (levels[level] || level),
          message: { lobby: "ai", level },
          cls: "action quiet",
        }))
      : [];
    $("lobby-ai").hidden = !ai.length;
    keyed($("lobby-ai-buttons"), ai, (b) => b.key, () => this.button(), (b, x) => this.fill(b, x));
    const caps = (lobby.caps || []).map((n) => ({
      key: String(n),
      label: (n === (lobby.cap || Math.max(...lobby.caps)) ? "✓ " : "") + "👥 " + n,
      message: { lobby: "cap", players: n },
      cls: "action quiet",
    }));
    $("lobby-cap").hidden = !caps.length;
    setText($("lobby-cap-title"), this.text("capTitle", ""));
    setText($("lobby-ai-title"), this.text("aiSeats", ""));
    keyed($("lobby-caps"), caps, (b) => b.key, () => this.button(), (b, x) => this.fill(b, x));
    // own trumps: the free suits, for the player whose turn it is to choose
    const suits = lobby.suits;
    const choosing = suits && suits.turn !== null && suits.turn === lobby.you;
    const free = choosing
      ? suits.free.map((s) => ({
          key: s,
          label: suitSymbol(s),
          message: { lobby: "suit", suit: s },
          cls: `action suit suit-${s}`,
        }))
      : [];
    keyed($("lobby-suits"), free, (b) => b.key, () => this.button(), (b, x) => this.fill(b, x));
  }

  button() {
    const b = el("button");
    b.type = "button";
    return b;
  }

  fill(b, x) {
    b.className = x.cls;
    setText(b, x.label);
    b.dataset.send = JSON.stringify(x.message);
    b.dataset.do = x.key;
  }
}
