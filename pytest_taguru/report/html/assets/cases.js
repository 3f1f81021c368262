// The case table: filters, sorting, and rows rendered lazily (only those in view exist).

const ROW_HEIGHT = 30;
const OVERSCAN = 12;
const COUNT = CASES.id.length;
const VALUES = CASES.values.map((packed, j) =>
  Float64Array.from(unpackIntegers(packed), (v) => (v < 0 ? NaN : v / CASES.scales[j])));
const HAS_LINES = CASES.line !== null;
const HAS_BASELINE = DATA.baseline !== null;
const MOVED = new Map((DATA.baseline ? DATA.baseline.moved : []).filter((m) => m[2] >= 0).map((m) => [m[2], m]));

// Failing first: a broken bound, a failed lane, a regression, a miss, not run, then the rest.
const SEVERITY_ORDER = ["broke_bound", "lane_failed", "regressed", "missed", "not_run"];
const SEVERITY = Uint8Array.from(CASES.flags, (flags) => {
  const index = SEVERITY_ORDER.findIndex((name) => flags & FLAGS[name]);
  return index < 0 ? SEVERITY_ORDER.length : index;
});

const OUTCOMES = [
  ["all", "all cases", () => true],
  ["broke_bound", "broke a bound", (f) => f & FLAGS.broke_bound, DATA.header.gate !== null],
  ["lane_failed", "lane failed", (f) => f & FLAGS.lane_failed],
  ["missed", "missed something", (f) => f & FLAGS.missed],
  ["clean", "found everything", (f) => !(f & (FLAGS.missed | FLAGS.lane_failed | FLAGS.not_run))],
  ["regressed", "regressed vs baseline", (f) => f & FLAGS.regressed, HAS_BASELINE],
  ["improved", "improved vs baseline", (f) => f & FLAGS.improved, HAS_BASELINE],
  ["added", "new vs baseline", (f) => f & FLAGS.added, HAS_BASELINE],
  ["not_run", "did not run", (f) => f & FLAGS.not_run, CASES.flags.some((f) => f & FLAGS.not_run)],
].filter((outcome) => outcome[3] !== false);

// Columns of a row: [heading, sort key, css width, cell writer].
const COLUMNS = [
  ["outcome", "severity", "118px", outcomeCell],
  ["case", "id", "minmax(150px, 1.3fr)", (span, i) => { span.textContent = CASES.id[i]; span.title = CASES.id[i]; }],
  ["query", "query", "minmax(160px, 2fr)", (span, i) => { span.textContent = CASES.query[i]; span.title = CASES.query[i]; }],
  HAS_LINES ? ["line", "line", "54px", (span, i) => { span.textContent = CASES.line[i] === null ? DASH : CASES.line[i]; }] : null,
  ...CASES.columns.map((metric, j) => [CASES.labels[j], "c" + j, "74px", (span, i) => valueCell(span, i, j)]),
].filter(Boolean);
const NUMERIC_KEYS = new Set(["line", ...CASES.columns.map((_, j) => "c" + j)]);

const state = { order: new Int32Array(0), sort: "severity", direction: 1, pool: [] };

function outcomeCell(span, i) {
  const flags = CASES.flags[i];
  const [text, kind] = flags & FLAGS.broke_bound ? ["broke bound", "bad"]
    : flags & FLAGS.lane_failed ? ["lane failed", "bad"]
    : flags & FLAGS.not_run ? ["not run", "muted"]
    : flags & FLAGS.missed ? ["missed", "warn"]
    : ["ok", "ok"];
  const moved = flags & FLAGS.regressed ? " ▼" : flags & FLAGS.improved ? " ▲" : flags & FLAGS.added ? " +" : "";
  span.replaceChildren(badge(text + moved, kind));
}

function valueCell(span, i, j) {
  const value = VALUES[j][i];
  span.textContent = Number.isNaN(value) ? DASH : CASES.scales[j] === 1 ? String(value) : value.toFixed(3);
  span.title = Number.isNaN(value) ? "not applicable" : String(value);
  span.className = "num" + (CASES.violated[i] & (1 << j) ? " cell-bad" : "");
}

let lowered = null;
function textMatches(i, needle) {
  if (lowered === null) lowered = CASES.id.map((id, k) => (id + "\u0000" + CASES.query[k]).toLowerCase());
  return lowered[i].includes(needle);
}

function readNumber(input) {
  const value = input.value.trim() === "" ? NaN : Number(input.value);
  return Number.isFinite(value) ? value : null;
}

function applyFilters() {
  const outcome = OUTCOMES.find((o) => o[0] === byId("f-outcome").value) || OUTCOMES[0];
  const column = Number(byId("f-metric").value);
  const low = readNumber(byId("f-min"));
  const high = readNumber(byId("f-max"));
  const needle = byId("f-text").value.trim().toLowerCase();
  const ranged = column >= 0 && (low !== null || high !== null);
  const inSlice = sliceFilter(COUNT);
  const out = new Int32Array(COUNT);
  let kept = 0;
  for (let i = 0; i < COUNT; i++) {
    if (!outcome[2](CASES.flags[i])) continue;
    if (inSlice !== null && !inSlice[i]) continue;
    if (ranged) {
      const value = VALUES[column][i];
      if (Number.isNaN(value) || (low !== null && value < low) || (high !== null && value > high)) continue;
    }
    if (needle && !textMatches(i, needle)) continue;
    out[kept++] = i;
  }
  state.order = out.slice(0, kept);
  sortRows();
}

function sortRows() {
  const key = state.sort, direction = state.direction;
  let compare;
  if (key === "severity") compare = (a, b) => (SEVERITY[a] - SEVERITY[b]) * direction || a - b;
  else if (key === "id" || key === "query") {
    const texts = CASES[key];
    compare = (a, b) => (texts[a] < texts[b] ? -direction : texts[a] > texts[b] ? direction : a - b);
  } else {
    const column = key === "line" ? Float64Array.from(CASES.line, (v) => (v === null ? NaN : v)) : VALUES[Number(key.slice(1))];
    // Not applicable sorts last whichever the direction.
    compare = (a, b) => {
      const x = column[a], y = column[b];
      if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) - Number.isNaN(y) || a - b;
      return (x - y) * direction || a - b;
    };
  }
  state.order.sort(compare);
  for (const span of byId("case-head").children) {
    span.setAttribute("aria-sort", span.dataset.key === key ? (direction > 0 ? "ascending" : "descending") : "none");
  }
  byId("case-count").textContent = "Showing " + state.order.length.toLocaleString("en") + " of " + COUNT.toLocaleString("en") + " cases.";
  byId("case-spacer").style.height = state.order.length * ROW_HEIGHT + "px";
  renderRows(true);
}

function newRow(template) {
  const row = h("div", { class: "row", role: "row", tabindex: "0" });
  row.style.gridTemplateColumns = template;
  for (let k = 0; k < COLUMNS.length; k++) row.append(h("span", { role: "cell" }));
  row.addEventListener("click", () => openCase(Number(row.dataset.index)));
  row.addEventListener("keydown", (event) => { if (event.key === "Enter") openCase(Number(row.dataset.index)); });
  return row;
}

let framePending = false;
function renderRows(force) {
  const viewport = byId("case-viewport");
  const first = Math.max(0, Math.floor(viewport.scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(state.order.length, Math.ceil((viewport.scrollTop + viewport.clientHeight) / ROW_HEIGHT) + OVERSCAN);
  const needed = last - first;
  const template = COLUMNS.map((c) => c[2]).join(" ");
  while (state.pool.length < needed) {
    const row = newRow(template);
    state.pool.push(row);
    byId("case-spacer").append(row);
  }
  state.pool.forEach((row, k) => {
    const position = first + k;
    if (k >= needed) { row.hidden = true; return; }
    const index = state.order[position];
    row.hidden = false;
    if (!force && row.dataset.position === String(position) && row.dataset.index === String(index)) return;
    row.dataset.position = position;
    row.dataset.index = index;
    row.dataset.caseId = CASES.id[index];
    row.style.top = position * ROW_HEIGHT + "px";
    row.classList.toggle("alt", position % 2 === 1);
    COLUMNS.forEach((column, c) => column[3](row.children[c], index));
  });
}

function initCases() {
  const head = byId("case-head");
  head.style.gridTemplateColumns = COLUMNS.map((c) => c[2]).join(" ");
  for (const [heading, key] of COLUMNS) {
    const sortBy = () => {
      // Again: the other way. First: numbers highest first, text and lines in order.
      state.direction = state.sort === key ? -state.direction : (NUMERIC_KEYS.has(key) && key !== "line" ? -1 : 1);
      state.sort = key;
      sortRows();
    };
    head.append(h("span", { role: "columnheader", "data-key": key, class: NUMERIC_KEYS.has(key) ? "num" : null, tabindex: "0", title: "sort by " + heading,
      onclick: sortBy, onkeydown: (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(); } } }, heading));
  }
  byId("f-outcome").append(...OUTCOMES.map((o) => h("option", { value: o[0] }, o[1])));
  byId("f-metric").append(h("option", { value: "-1" }, "any"), ...CASES.columns.map((metric, j) => h("option", { value: j }, CASES.labels[j])));
  for (const id of ["f-outcome", "f-metric", "f-slice"]) byId(id).addEventListener("change", applyFilters);
  for (const id of ["f-min", "f-max", "f-text"]) byId(id).addEventListener("input", applyFilters);
  byId("filters").addEventListener("reset", () => setTimeout(applyFilters));
  byId("filters").addEventListener("submit", (event) => event.preventDefault());
  byId("case-viewport").addEventListener("scroll", () => {
    if (framePending) return;
    framePending = true;
    requestAnimationFrame(() => { framePending = false; renderRows(false); });
  });
  applyFilters();
}
