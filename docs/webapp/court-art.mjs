// Renders @letele/playing-cards (CC0) React components to plain SVG files.
import fs from "node:fs";
const src = process.argv[2], out = process.argv[3];
let code = fs.readFileSync(src, "utf8");
code = code.replace(/^import .*$/gm, "").replace(/^export \{([^}]*)\};?/m, (m, names) => {
  const pairs = names.split(",").map((x) => x.trim().split(/\s+as\s+/));
  return "return {" + pairs.map(([a, b]) => `${b}: ${a}`).join(",") + "};";
});
const esc = (v) => String(v).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
const KEEP = new Set(["viewBox","preserveAspectRatio","patternUnits","patternContentUnits","patternTransform","gradientUnits","gradientTransform","clipPathUnits","maskUnits","maskContentUnits","markerWidth","markerHeight","refX","refY","spreadMethod","startOffset","textLength","lengthAdjust","stdDeviation","baseFrequency","numOctaves","kernelMatrix","filterUnits","primitiveUnits","pathLength"]);
const attrName = (k) => KEEP.has(k) ? k : k === "className" ? "class" : k === "xlinkHref" ? "xlink:href" : k === "xmlnsXlink" ? "xmlns:xlink" : k === "xmlSpace" ? "xml:space"
  : k.startsWith("aria-") || k.startsWith("data-") ? k : k.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());
const React = { createElement(tag, props, ...children) {
  const attrs = Object.entries(props || {}).filter(([k, v]) => v !== undefined && v !== null && k !== "aria-labelledby" && k !== "children")
    .map(([k, v]) => {
      if (k === "style" && typeof v === "object") v = Object.entries(v).map(([a, b]) => `${attrName(a)}:${b}`).join(";");
      return ` ${attrName(k)}="${esc(v)}"`;
    }).join("");
  const inner = children.flat().filter((c) => c !== null && c !== undefined && c !== false).join("");
  return `<${tag}${attrs}>${inner}</${tag}>`;
} };
const deck = new Function("React", "_extends", code)(React, Object.assign);
fs.mkdirSync(out, { recursive: true });
for (const [name, comp] of Object.entries(deck)) fs.writeFileSync(`${out}/${name}.svg`, comp({}));
