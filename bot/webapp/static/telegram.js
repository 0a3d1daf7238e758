// Telegram's WebApp object where the page runs inside Telegram; without it (a browser,
// the tests) the same facts from the URL fragment Telegram passes (tgWebAppData, theme).

const tg = window.Telegram && window.Telegram.WebApp ? window.Telegram.WebApp : null;

function fragment() {
  const hash = location.hash.startsWith("#") ? location.hash.slice(1) : "";
  return new URLSearchParams(hash);
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

export function colorScheme() {
  if (tg && tg.colorScheme) return tg.colorScheme;
  const bg = themeParams().bg_color;
  if (bg && /^#[0-9a-f]{6}$/i.test(bg)) {
    const n = parseInt(bg.slice(1), 16);
    const light = 0.299 * (n >> 16) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255);
    return light < 128 ? "dark" : "light";
  }
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

export function applyTheme() {
  const params = themeParams();
  const root = document.documentElement.style;
  for (const [key, name] of Object.entries(VARS)) {
    const value = params[key];
    if (typeof value === "string" && /^#[0-9a-f]{3,8}$/i.test(value)) root.setProperty(name, value);
  }
  document.body.classList.toggle("dark", colorScheme() === "dark");
}

export function start(onTheme) {
  applyTheme();
  if (!tg) return;
  tg.ready();
  if (tg.expand) tg.expand();
  if (tg.onEvent) {
    tg.onEvent("themeChanged", () => {
      applyTheme();
      if (onTheme) onTheme();
    });
  }
}

export function haptic(kind) {
  const h = tg && tg.HapticFeedback;
  if (!h) return;
  try {
    if (kind === "error" || kind === "success" || kind === "warning") h.notificationOccurred(kind);
    else if (kind === "select") h.selectionChanged();
    else h.impactOccurred(kind || "light");
  } catch (e) {
    /* an old client */
  }
}

// MainButton / SecondaryButton for the first two of the panel's actions, where the
// client has them; the page keeps its own buttons otherwise.
const handlers = { main: null, secondary: null };

export function nativeButtons() {
  return Boolean(tg && tg.MainButton && tg.platform && tg.platform !== "unknown");
}

function setButton(which, action) {
  const button = which === "main" ? tg.MainButton : tg.SecondaryButton;
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
