// Around the table view: how many watch ("👀 3"), the quick phrases (said on a seat of
// every page for 3 s; the bot lets a player say one every 3 s), and what the end offers a
// player (Play again, the replay) and a running game (leave it: the AI plays his seat).

import { $, el, setText } from "./dom.js";

// how long a phrase stays on its seat, and how long the page waits before the next one
export const SAID_MS = 3000;

export class Extras {
  constructor(app) {
    this.app = app;
    this.bubbles = new Map(); // seat -> [node, timer]
    this.quietUntil = 0; // the page's own wait after a phrase (the bot enforces it)
  }

  text(key, fallback) {
    return this.app.text(key, fallback);
  }

  mount() {
    $("talk").addEventListener("click", (e) => {
      const button = e.target.closest("button[data-phrase]");
      if (button) this.say(button.dataset.phrase);
    });
    $("talk-open").addEventListener("click", () => {
      const list = $("talk");
      list.hidden = !list.hidden;
      $("talk-open").setAttribute("aria-expanded", String(!list.hidden));
    });
    $("after").addEventListener("click", (e) => {
      const button = e.target.closest("button[data-send]");
      if (button) this.app.send(JSON.parse(button.dataset.send));
    });
    $("leave-game").addEventListener("click", () => {
      $("settings").hidden = true;
      $("leave-ask").hidden = false;
      $("leave-no").focus();
    });
    $("leave-no").addEventListener("click", () => ($("leave-ask").hidden = true));
    $("leave-yes").addEventListener("click", () => {
      $("leave-ask").hidden = true;
      this.app.send({ leave: true });
    });
  }

  // The labels, once the bot sent them in the player's language.
  texts() {
    $("talk-open").setAttribute("aria-label", this.text("say", "Say"));
    $("talk-open").title = this.text("say", "Say");
    const phrases = this.text("phrases", []);
    const list = $("talk");
    if (Array.isArray(phrases) && list.children.length !== phrases.length) {
      list.replaceChildren(
        ...phrases.map((p) => {
          const b = el("button", "phrase", p.text);
          b.type = "button";
          b.dataset.phrase = p.key;
          return b;
        }),
      );
    }
    setText($("leave-game"), this.text("leaveGame", "Leave the game"));
    setText($("leave-text"), this.text("leaveAsk", ""));
    setText($("leave-yes"), this.text("leaveYes", "Yes"));
    setText($("leave-no"), this.text("no", "No"));
  }

  // After every state: the phrases for a seated player, the end's buttons, Leave.
  show(state) {
    const seated = state.you !== null && state.you !== undefined;
    $("talk-open").hidden = !seated;
    if (!seated) $("talk").hidden = true;
    $("leave-game").hidden = !seated || state.over;
    const buttons = [];
    if (state.over && seated) {
      buttons.push({ key: "again", label: this.text("againButton", "Play again"), send: { again: true } });
    }
    if (state.over) {
      buttons.push({ key: "replay", label: this.text("replayButton", "Replay"), send: { deal: 0 } });
    }
    const box = $("after");
    box.hidden = !buttons.length;
    if (box.children.length !== buttons.length || [...box.children].some((b, k) => b.dataset.do !== buttons[k].key)) {
      box.replaceChildren(
        ...buttons.map((x) => {
          const b = el("button", "action", x.label);
          b.type = "button";
          b.dataset.do = x.key;
          b.dataset.send = JSON.stringify(x.send);
          return b;
        }),
      );
    }
    for (const [seat, [node]] of this.bubbles) this.place(node, seat);
  }

  say(key) {
    const now = this.app.now();
    if (now < this.quietUntil) return; // (the bot would refuse it)
    if (!this.app.send({ say: key })) return;
    this.quietUntil = now + SAID_MS;
    $("talk").hidden = true;
    $("talk-open").setAttribute("aria-expanded", "false");
    for (const b of $("talk").children) b.disabled = true;
    setTimeout(() => {
      for (const b of $("talk").children) b.disabled = false;
    }, SAID_MS);
  }

  // A phrase said at seat `said.seat`: on that seat for 3 s, on every page.
  said(said) {
    const old = this.bubbles.get(said.seat);
    if (old) {
      clearTimeout(old[1]);
      old[0].remove();
    }
    const node = el("div", "said", said.text);
    node.dataset.seat = String(said.seat);
    node.setAttribute("role", "status");
    $("bubbles").append(node);
    this.place(node, said.seat);
    const timer = setTimeout(() => {
      node.remove();
      this.bubbles.delete(said.seat);
    }, SAID_MS);
    this.bubbles.set(said.seat, [node, timer]);
  }

  place(node, seat) {
    const box = document.querySelector(`#seats [data-seat="${seat}"], #me [data-seat="${seat}"]`);
    if (!box || !box.offsetParent) {
      // no such seat drawn (the table is not the view shown): nothing floats elsewhere
      node.hidden = true;
      return;
    }
    node.hidden = false;
    const r = box.getBoundingClientRect();
    node.style.left = `${Math.round(r.left + r.width / 2)}px`;
    node.style.top = `${Math.round(r.top + r.height - 6)}px`;
  }

  // How many members watch the game (not the players): "👀 3", nothing when none.
  watchers(n) {
    const node = $("watchers");
    node.hidden = !n;
    setText(node, `👀 ${n}`);
    node.setAttribute("aria-label", this.text("watching", "Watching: {n}").replace("{n}", String(n)));
    document.body.dataset.watchers = String(n);
  }
}
