// Shared by every part of the page: the data island, element building, number formatting.
// Data is only ever set as text (textContent, attribute values), never parsed as HTML.

const DATA = JSON.parse(document.getElementById("taguru-data").textContent);
const CASES = DATA.cases;
const FLAGS = CASES.flag_bits;
const SVG_NS = "http://www.w3.org/2000/svg";

function h(tag, props, ...children) {
  const node = document.createElement(tag);
  setProps(node, props);
  append(node, children);
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  append(node, children);
  return node;
}

function setProps(node, props) {
  for (const [name, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

function byId(id) {
  return document.getElementById(id);
}

function badge(text, kind, title) {
  return h("span", { class: "badge b-" + kind, title: title }, text);
}

function fact(key, ...value) {
  return h("div", { class: "fact" }, h("div", { class: "k" }, key), h("div", { class: "v" }, ...value));
}

function table(headings, rows, numeric) {
  const numericSet = new Set(numeric || []);
  const head = h("tr", null, headings.map((text, i) => h("th", { class: numericSet.has(i) ? "num" : null }, text)));
  const body = rows.map((row) => h("tr", null, row.map((cell, i) => h("td", { class: numericSet.has(i) ? "num" : null }, cell))));
  return h("table", { class: "plain" }, h("thead", null, head), h("tbody", null, body));
}

const DASH = "—";

function fixed(value, digits) {
  return value === null || value === undefined ? DASH : Number(value).toFixed(digits);
}

// A metric's value in its unit: ratios to three decimals, milliseconds to one, counts to two.
function inUnit(value, unit) {
  if (value === null || value === undefined) return DASH;
  if (unit === "ratio") return fixed(value, 3);
  if (unit === "ms") return Number.isInteger(value) ? value + " ms" : fixed(value, 1) + " ms";
  return Number.isInteger(value) ? String(value) : fixed(value, 2);
}

function signed(value, digits) {
  if (value === null || value === undefined) return DASH;
  const text = fixed(Math.abs(value), digits);
  return (value > 0 ? "+" : value < 0 ? "−" : "±") + text;
}

function plural(count, noun) {
  return count + " " + noun + (count === 1 ? "" : "s");
}

function sourceName(index) {
  return DATA.sources[index];
}

function locator(sourceIndex, paragraph) {
  return sourceName(sourceIndex) + " ¶" + (paragraph === null ? "?" : paragraph);
}

// Signed integers packed as base64 VLQ (report/html/compact.py pack_integers).
function unpackIntegers(text) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const out = [];
  let value = 0, shift = 0;
  for (let k = 0; k < text.length; k++) {
    const digit = alphabet.indexOf(text[k]);
    value += (digit & 31) * 2 ** shift;
    if (digit & 32) { shift += 5; continue; }
    out.push(value % 2 ? -(value - 1) / 2 : value / 2);
    value = 0;
    shift = 0;
  }
  return out;
}

// A gzip-compressed, base64 JSON chunk (report/html/compact.py packed_details), inflated by
// the browser itself.
async function inflate(text) {
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function pairs(flat, width) {
  const out = [];
  for (let i = 0; i < (flat || []).length; i += width) out.push(flat.slice(i, i + width));
  return out;
}

function copyButton(text) {
  return h("button", {
    class: "copy",
    type: "button",
    onclick: (event) => {
      const done = () => { event.target.textContent = "copied"; };
      if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, () => {});
    },
  }, "copy");
}

function textBlock(title, text) {
  return [h("h3", null, title, copyButton(text)), h("pre", { class: "text" }, text)];
}
