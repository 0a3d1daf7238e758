// Telegram's WebApp object where the page runs inside Telegram; without it (a browser,
// the tests) the same facts from the URL fragment Telegram passes (tgWebAppData, theme).
// Every feature is checked (isVersionAtLeast, or the method's presence): an older client
// plays the same game without it.

const tg = window.Telegram && window.Telegram.WebApp ? window.Telegram.WebApp : null;

function fragment() {
  const hash = location.hash.startsWith("#") ? location.hash.slice(1) : "";
  return new URLSearchParams(hash);
}

export function has(version) {
  if (!tg) return false;
  try {
    return typeof tg.isVersionAtLeast === "function" ? tg.isVersionAtLeast(version) : false;
  } catch (e) {
    return false;
  }
}

function call(name, ...args) {
  if (!tg || typeof tg[name] !== "function") return undefined;
  try {
    return tg[name](...args);
  } catch (e) {
    return undefined; // an old client that names the method but cannot do it
  }
}

export function initData() {
  if (tg && tg.initData) return tg.initData;
  return fragment().get("tgWebAppData") || "";
}

export function themeParams() {
  if (tg && tg.themeParams && Object.keys(tg.themeParams).length) return tg.themeParams;
  try {
    return JSON.parse(fragment().get("tgWebAppThemeParams") || "{}");
  } catch (e) {
    return {};
  }
}

const HEX = /^#[0-9a-f]{6}$/i;

function rgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [n >> 16, (n >> 8) & 255, n & 255];
}

function luminance(hex) {
  const [r, g, b] = rgb(hex).map((c) => {
    const x = c / 255;
    return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a, b) {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

function mix(a, b, t) {
  const [p, q] = [rgb(a), rgb(b)];
  return "#" + p.map((c, i) => Math.round(c + (q[i] - c) * t).toString(16).padStart(2, "0")).join("");
}

// A colour like `hint` that reads at 4.5:1 at least on every one of `backgrounds`:
// moved toward `text` as far as it takes (Telegram's hint colours are often fainter).
function readable(hint, text, backgrounds) {
  for (let t = 0; t <= 1.0001; t += 0.05) {
    const c = mix(hint, text, Math.min(1, t));
    if (backgrounds.every((bg) => contrast(c, bg) >= 4.6)) return c;
  }
  return text;
}

export function colorScheme() {
  if (tg && tg.colorScheme) return tg.colorScheme;
  const bg = themeParams().bg_color;
  if (bg && HEX.test(bg)) return luminance(bg) < 0.2 ? "dark" : "light";
  return window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

const VARS = {
  bg_color: "--bg",
  text_color: "--text",
  hint_color: "--hint",
  link_color: "--link",
  button_color: "--button",
  button_text_color: "--button-text",
  secondary_bg_color: "--bg2",
  section_bg_color: "--section",
  accent_text_color: "--accent",
  destructive_text_color: "--danger",
};

// Telegram's theme as CSS variables on <html> (its inline style: it wins over the page's
// own defaults for either scheme), and a muted text colour that keeps 4.5:1.
export function applyTheme() {
  const params = themeParams();
  const root = document.documentElement;
  root.dataset.scheme = colorScheme();
  for (const [key, name] of Object.entries(VARS)) {
    const value = params[key];
    if (typeof value === "string" && HEX.test(value)) root.style.setProperty(name, value);
    else root.style.removeProperty(name);
  }
  const css = getComputedStyle(root);
  const get = (name) => css.getPropertyValue(name).trim();
  const [hint, text] = [get("--hint"), get("--text")];
  const backgrounds = [get("--bg"), get("--bg2"), get("--section")].filter((c) => HEX.test(c));
  if (HEX.test(hint) && HEX.test(text) && backgrounds.length) {
    root.style.setProperty("--muted", readable(hint, text, backgrounds));
  }
  // the buttons' colour, darkened where the theme's text on it would read under 4.5:1
  const [button, buttonText] = [get("--button"), get("--button-text")];
  if (HEX.test(button) && HEX.test(buttonText)) {
    root.style.setProperty("--action-bg", readable(button, "#000000", [buttonText]));
  }
  const bg = get("--bg2");
  if (HEX.test(bg)) {
    if (has("6.1")) {
      call("setHeaderColor", HEX.test(get("--bg")) ? get("--bg") : bg);
      call("setBackgroundColor", bg);
    }
    if (has("7.10")) call("setBottomBarColor", bg);
  }
}

const listeners = {};

function on(event, handler) {
  if (!tg || typeof tg.onEvent !== "function") return;
  tg.onEvent(event, handler);
  listeners[event] = handler;
}

// `hooks`: theme (the theme changed), back (the BackButton), active (true: the page is in
// front again: Bot API 8.0's activated, or the document visible again on older clients).
export function start(hooks) {
  applyTheme();
  document.addEventListener("visibilitychange", () => hooks.active(!document.hidden));
  if (!tg) return;
  call("ready");
  call("expand");
  on("themeChanged", () => {
    applyTheme();
    hooks.theme();
  });
  if (has("6.1") && tg.BackButton) tg.BackButton.onClick(hooks.back);
  if (has("8.0")) {
    on("activated", () => hooks.active(true));
    on("deactivated", () => hooks.active(false));
  }
}

// A swipe down closes the app: not while a game is on (Bot API 7.7).
let swipesOff = null;
export function playing(on) {
  if (!has("7.7") || swipesOff === on) return;
  swipesOff = on;
  call(on ? "disableVerticalSwipes" : "enableVerticalSwipes");
}

let backShown = false;
export function backButton(show) {
  if (!has("6.1") || !tg.BackButton || show === backShown) return;
  backShown = show;
  try {
    if (show) tg.BackButton.show();
    else tg.BackButton.hide();
  } catch (e) {
    /* an old client */
  }
}

export function haptic(kind) {
  const h = tg && has("6.1") && tg.HapticFeedback;
  if (!h) return;
  try {
    if (kind === "error" || kind === "success" || kind === "warning") h.notificationOccurred(kind);
    else if (kind === "select") h.selectionChanged();
    else h.impactOccurred(kind || "light");
  } catch (e) {
    /* an old client */
  }
}

// A setting kept where the client keeps them: Telegram's CloudStorage (6.9, the same on
// every device of his), its DeviceStorage (9.0), else the browser's localStorage.
function store() {
  if (tg && has("6.9") && tg.CloudStorage) return tg.CloudStorage;
  if (tg && has("9.0") && tg.DeviceStorage) return tg.DeviceStorage;
  return null;
}

export function loadSetting(key) {
  const where = store();
  if (!where) {
    try {
      return Promise.resolve(localStorage.getItem("durak." + key));
    } catch (e) {
      return Promise.resolve(null);
    }
  }
  return new Promise((resolve) => {
    try {
      where.getItem(key, (error, value) => resolve(error ? null : value || null));
    } catch (e) {
      resolve(null);
    }
  });
}

export function saveSetting(key, value) {
  const where = store();
  if (!where) {
    try {
      localStorage.setItem("durak." + key, value);
    } catch (e) {
      /* private mode */
    }
    return;
  }
  try {
    where.setItem(key, value, () => {});
  } catch (e) {
    /* an old client */
  }
}

// MainButton / SecondaryButton for the first two of the page's actions, where the client
// has them (7.10 for the secondary one); the page keeps its own buttons otherwise.
const handlers = { main: null, secondary: null };

export function nativeButtons() {
  return Boolean(tg && tg.MainButton && tg.platform && tg.platform !== "unknown");
}

function setButton(which, action) {
  const button = which === "main" ? tg.MainButton : has("7.10") ? tg.SecondaryButton : null;
  if (!button) return false;
  if (handlers[which]) button.offClick(handlers[which]);
  handlers[which] = null;
  if (!action) {
    button.hide();
    return true;
  }
  handlers[which] = action.run;
  button.setText(action.label);
  button.onClick(action.run);
  button.show();
  return true;
}

export function showButtons(actions) {
  if (!nativeButtons()) return actions;
  setButton("main", actions[0] || null);
  const second = setButton("secondary", actions[1] || null);
  return actions.slice(second ? 2 : 1);
}
