// The slices (DATA.slices, built by report/html/slices.py): each slice's per-case scores and
// verdict, and the case table's slice filter (#f-slice). Both stay hidden without slices.

const SLICES = DATA.slices;
const SLICE_MEMBERS = SLICES === null ? [] : SLICES.members.map((packed) => {
  let row = 0;
  return Int32Array.from(unpackIntegers(packed), (gap) => (row += gap));
});
const SLICE_VERDICTS = { violated: "bad", held: "ok", "too small": "muted", "not judged": "warn" };

function showSlice(k) {
  byId("f-slice").value = String(k);
  byId("f-slice").dispatchEvent(new Event("change"));
  byId("cases").scrollIntoView();
}

function sliceGateLine(gate) {
  const verdict = gate.skipped !== null ? badge("not judged", "warn")
    : h("span", { class: "verdict " + (gate.passed ? "pass" : "fail") }, gate.passed ? "PASS" : "FAIL");
  return h("p", null, verdict, " slice thresholds ",
    h("code", { title: gate.sha256 }, "sha256 " + gate.sha256.slice(0, 12) + "…"),
    gate.skipped !== null ? " · " + gate.skipped : "");
}

function renderSlices() {
  if (SLICES === null) return;
  byId("slices").hidden = false;
  byId("jump-slices").hidden = false;
  const body = byId("slices-body");
  if (SLICES.gate !== null) body.append(sliceGateLine(SLICES.gate));
  const rows = SLICES.rows.map(([name, globs, n, means, counts, verdict, lines], k) => [
    h("button", { class: "copy", type: "button", title: "show its cases", onclick: () => showSlice(k) }, name),
    String(n),
    h("code", null, globs),
    ...means.map((mean, j) => (counts[j] ? h("span", { title: "mean of " + plural(counts[j], "case") }, fixed(mean, 3)) : DASH)),
    verdict ? h("div", { class: "slice-verdict" }, badge(verdict, SLICE_VERDICTS[verdict]), lines.map((line) => h("div", { class: "muted" }, line))) : "",
  ]);
  const headings = ["slice", "cases", "globs", ...SLICES.metrics.map(labelOf), "verdict"];
  body.append(table(headings, rows, [1, ...SLICES.metrics.map((_, j) => 3 + j)]));
  byId("f-slice").append(h("option", { value: "-1" }, "any"), ...SLICES.rows.map((row, k) => h("option", { value: k }, row[0])));
  byId("f-slice-label").hidden = false;
}

// Per row of the case table, whether it is in the slice the filter selects; null for any.
function sliceFilter(count) {
  const k = SLICES === null ? -1 : Number(byId("f-slice").value);
  if (!(k >= 0)) return null;
  const inSlice = new Uint8Array(count);
  for (const row of SLICE_MEMBERS[k]) inSlice[row] = 1;
  return inSlice;
}
