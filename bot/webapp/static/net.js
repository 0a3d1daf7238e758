// The WebSocket to the bot: signs in with initData, hands every message on, and comes
// back by itself after a drop with a randomised backoff (many pages reconnecting after a
// restart must not all come at once).

// The wait before the `retry`-th reconnection: 300 ms doubling to 5 s, each between half
// and one and a half of that (`random`: Math.random, or a test's own).
export function backoff(retry, random = Math.random) {
  const base = Math.min(5000, 300 * 2 ** Math.min(Math.max(retry - 1, 0), 5));
  return Math.round(base * (0.5 + random()));
}

export class Connection {
  // hooks: open (send the hello), message (one parsed message), down (the socket closed;
  // it reconnects unless stop() was called)
  constructor(url, hooks) {
    this.url = url;
    this.hooks = hooks;
    this.ws = null;
    this.retry = 0;
    this.stopped = false;
    this.timer = null;
  }

  connect() {
    clearTimeout(this.timer);
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.onopen = () => this.hooks.open();
    ws.onmessage = (event) => {
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch (e) {
        return;
      }
      if (msg && typeof msg === "object") this.hooks.message(msg);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      this.retry += 1;
      this.hooks.down(this.retry);
      this.timer = setTimeout(() => this.connect(), backoff(this.retry));
    };
  }

  // the state came: the connection works, the next drop starts the backoff afresh
  fine() {
    this.retry = 0;
  }

  open() {
    return Boolean(this.ws && this.ws.readyState === WebSocket.OPEN);
  }

  send(message) {
    if (!this.open()) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  // back from the background: a socket the system closed meanwhile is opened again now
  wake() {
    if (this.stopped) return;
    if (!this.ws) this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
