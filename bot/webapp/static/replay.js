// The replay view (body[data-view=replay]): a finished game, step by step, as the bot read
// it from the stored record. Every frame is the bot's (the table after one step, every
// hand face up, the step in words): the page only walks through them, one step or playing
// at a chosen speed, and asks for another deal of a sprint match.

import { label, name, paintFace, suitSymbol } from "./cards.js";
import { $, el, keyed, setText } from "./dom.js";

// milliseconds a step stays when playing, by speed
const SPEEDS = { "0.5": 2000, "1": 1000, "2": 500, "4": 250 };

function card(code) {
  const node = el("span", "replay-card");
  node.setAttribute("role", "img");
  node.dataset.card = code;
  node.setAttribute("aria-label", name(code));
  node.append(paintFace(el("span"), code));
  return node;
}

export class ReplayView {
  constructor(app) {
    this.app = app;
    this.replay = null;
    this.step = 0;
    this.timer = null;
    this.speed = "1";
  }

  text(key, fallback) {
    return this.app.text(key, fallback);
  }

  mount() {
    $("replay-controls").addEventListener("click", (e) => {
      const button = e.target.closest("button[data-do]");
      if (button) this.control(button.dataset.do);
    });
    $("replay-deals").addEventListener("click", (e) => {
      const button = e.target.closest("button[data-deal]");
      if (button) this.app.send({ deal: Number(button.dataset.deal) });
    });
    $("replay-step").addEventListener("input", (e) => {
      this.pause();
      this.go(Number(e.target.value));
    });
    $("replay-speed").addEventListener("change", (e) => {
      this.speed = e.target.value;
      if (this.timer) this.play();
    });
    $("replay-back").addEventListener("click", () => {
      this.pause();
      this.app.send({ sync: -1 }); // the game's own page: its end again
    });
  }

  show(replay) {
    const same = this.replay && this.replay.game === replay.game && this.replay.deal === replay.deal;
    this.replay = replay;
    this.pause();
    document.body.dataset.state = "replay";
    setText($("title"), replay.title || "");
    setText($("replay-title"), (replay.options || []).slice(1).join(" · "));
    setText($("replay-name"), `${this.text("replay", "Replay")}: ${replay.name}`);
    const deals = [];
    if (replay.deals > 1) {
      if (replay.deal > 1) deals.push({ key: "prev", deal: replay.deal - 1, label: "◀" });
      deals.push({ key: "now", label: this.text("deal", "Deal {n} of {m}").replace("{n}", replay.deal).replace("{m}", replay.deals) });
      if (replay.deal < replay.deals) deals.push({ key: "next", deal: replay.deal + 1, label: "▶" });
    }
    keyed(
      $("replay-deals"),
      deals,
      (d) => d.key,
      (d) => (d.deal ? Object.assign(el("button", "action quiet"), { type: "button" }) : el("span")),
      (node, d) => {
        setText(node, d.label);
        if (d.deal) node.dataset.deal = String(d.deal);
      },
    );
    const range = $("replay-step");
    range.max = String(replay.frames.length - 1);
    $("replay-back").hidden = !(this.app.model.state && this.app.model.state.game === replay.game);
    setText($("replay-back"), "↩ " + this.text("back", "Back"));
    this.drawControls();
    this.go(same ? Math.min(this.step, replay.frames.length - 1) : 0);
  }

  // A media player's row: its signs on the buttons, their names said (and shown on hover).
  drawControls() {
    const buttons = [
      ["first", "⏮", this.text("toFirst", "Start")],
      ["back", "◀", this.text("stepBack", "Back")],
      ["play", this.timer ? "⏸" : "▶️", this.timer ? this.text("pause", "Pause") : this.text("playOn", "Play")],
      ["forward", "▶", this.text("stepForward", "Forward")],
      ["last", "⏭", this.text("toLast", "End")],
    ];
    keyed(
      $("replay-controls"),
      buttons,
      (b) => b[0],
      () => Object.assign(el("button", "action quiet"), { type: "button" }),
      (node, [key, sign, said]) => {
        node.dataset.do = key;
        setText(node, sign);
        node.setAttribute("aria-label", said);
        node.title = said;
      },
    );
    setText($("replay-speed-label"), this.text("speed", "Speed"));
    $("replay-speed").value = this.speed;
  }

  control(what) {
    const last = this.replay.frames.length - 1;
    if (what === "play") {
      if (this.timer) this.pause();
      else this.play();
      return;
    }
    this.pause();
    if (what === "first") this.go(0);
    else if (what === "last") this.go(last);
    else if (what === "back") this.go(this.step - 1);
    else if (what === "forward") this.go(this.step + 1);
  }

  play() {
    clearInterval(this.timer);
    if (this.step >= this.replay.frames.length - 1) this.go(0);
    this.timer = setInterval(() => {
      if (this.step >= this.replay.frames.length - 1) this.pause();
      else this.go(this.step + 1);
    }, SPEEDS[this.speed] || 1000);
    document.body.dataset.playing = "1";
    this.drawControls();
  }

  pause() {
    clearInterval(this.timer);
    this.timer = null;
    delete document.body.dataset.playing;
    if (this.replay) this.drawControls();
  }

  // Show frame `k` (clamped): the seats with their hands, the table, the stock, the lines.
  go(k) {
    const r = this.replay;
    const frames = r.frames;
    this.step = Math.max(0, Math.min(frames.length - 1, k));
    const f = frames[this.step];
    document.body.dataset.step = String(this.step);
    document.body.dataset.steps = String(frames.length - 1);
    $("replay-step").value = String(this.step);
    setText($("replay-count"), this.text("step", "Step {n} of {m}").replace("{n}", this.step).replace("{m}", frames.length - 1));
    keyed(
      $("replay-seats"),
      r.players.map((p, i) => i),
      (i) => i,
      () => {
        const row = el("div", "replay-seat");
        row.append(el("div", "who"), el("div", "hand"));
        return row;
      },
      (row, i) => {
        row.dataset.seat = String(i);
        const marks = [];
        if (f.attacker === i) marks.push("⚔️");
        if (f.defender === i) marks.push("🛡");
        if (f.turn === i) marks.push("👉");
        if (f.trumps && f.trumps[i]) marks.push(suitSymbol(f.trumps[i]));
        if (f.out[i]) marks.push("✓ " + this.text("out", "out"));
        const who = `${r.ai[i] ? "🤖 " : ""}${r.players[i]} · ${f.hands[i].length} ${marks.join(" ")}`;
        setText(row.children[0], who.trim());
        row.classList.toggle("acted", f.seat === i);
        row.classList.toggle("waiting", f.waiting.includes(i));
        keyed(row.children[1], f.hands[i], (c) => c, card, () => {});
      },
    );
    const trump = $("replay-trump");
    setText(trump.children[0], suitSymbol(f.trump) || "–");
    trump.children[0].className = `symbol suit-${f.trump || ""}`;
    keyed(trump.children[1], f.trumpCard && f.trumpInStock ? [f.trumpCard] : [], (c) => c, card, () => {});
    setText($("replay-stock"), `${this.text("stock", "Stock")}: ${f.stock}`);
    setText($("replay-discard"), `${this.text("discard", "Discard")}: ${f.discard}`);
    const pairs = f.table || (f.pile || []).map((c) => [c, null]);
    keyed(
      $("replay-table"),
      pairs,
      (p) => p[0],
      () => el("div", "replay-pair"),
      (node, [attack, cover]) => {
        node.dataset.attack = attack;
        keyed(node, cover ? [attack, cover] : [attack], (c) => c, card, (c) => c.classList.toggle("cover", c.dataset.card === cover));
        node.setAttribute("aria-label", label(attack) + (cover ? " / " + label(cover) : ""));
      },
    );
    setText($("replay-said"), f.said || "");
    setText($("replay-event"), f.event || "");
    setText($("replay-status"), f.status || "");
  }
}
