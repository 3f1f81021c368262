// One case on demand: its expectations, hits, structural positions, citation checks,
// drill-down and reproduction requests (key by key as report/html/detail.py writes them).

function caseFlags(i) {
  const flags = CASES.flags[i];
  return Object.keys(FLAGS).filter((name) => flags & FLAGS[name]).map((name) =>
    badge(name.replace("_", " "), name === "improved" ? "ok" : name === "added" || name === "not_run" ? "info" : name === "missed" ? "warn" : "bad"));
}

function evalLink(i) {
  const line = HAS_LINES ? CASES.line[i] : null;
  if (line === null || DATA.eval === null) return null;
  const text = DATA.eval.path + ":" + line;
  return DATA.eval.href ? h("a", { href: DATA.eval.href, title: "the eval set (line " + line + ")" }, text) : h("code", null, text);
}

function scoresGrid(i) {
  return h("div", { class: "score-grid" }, CASES.columns.map((metric, j) => {
    const value = VALUES[j][i];
    const broke = CASES.violated[i] & (1 << j);
    return h("div", { class: "score" + (broke ? " broke" : "") + (Number.isNaN(value) ? " na" : ""), title: metric + (broke ? ": broke a bound" : "") },
      h("div", { class: "k" }, CASES.labels[j]), h("div", { class: "v" }, Number.isNaN(value) ? DASH : String(value)));
  }));
}

function expectedSources(d) {
  if (!d.xs) return null;
  return [h("h3", null, "Expected sources"), table(["source", "paragraphs", "relevance", "served at rank"], d.xs.map((x) => [
    h("code", null, sourceName(x[0])), x[1].length ? x[1].join(", ") : "any", String(x[2]),
    x[3].length ? x[3].map((p) => p + 1).join(", ") : h("span", { class: x[2] ? "mark-missed" : "muted" }, x[2] ? "missed" : "not served (not scored)"),
  ]), [2])];
}

function hitMark(d, position) {
  const relevances = d.xs.filter((x) => x[3].includes(position)).map((x) => x[2]);
  if (!relevances.length) return h("span", { class: "mark-unlabelled" }, "unlabelled");
  const best = Math.max(...relevances);
  return best ? h("span", { class: "mark-expected" }, "expected · relevance " + best) : h("span", { class: "mark-zero" }, "expected · relevance 0");
}

function scoreText(mantissa, exponent) {
  if (mantissa === null) return "null";
  return exponent < 0 ? (mantissa / 10 ** -exponent).toFixed(-exponent) : String(mantissa * 10 ** exponent);
}

function planText(plan) {
  if (!plan) return "";
  const lanes = Object.entries(plan.lanes).map(([name, lane]) => name + (lane.ran ? " ran" : " did not run" +
    (lane.reason ? " (" + lane.reason + ")" : "")) + (lane.floor === undefined || lane.floor === null ? "" : ", floor " + Number(lane.floor.toPrecision(6))));
  const filtered = plan.filter ? ["filter: " + plan.filter.eligible_sources + " of " + plan.filter.total_sources + " sources eligible"] : [];
  return " · " + [...lanes, ...filtered].join("; ");
}

function passageSection(i, d) {
  const out = [h("h3", null, "Passage lane")];
  const ms = VALUES[CASES.columns.indexOf("latency.passage_ms")][i];
  if (d.pf !== undefined) {
    out.push(h("p", null, badge("failed", "bad"), " after " + ms + " ms: " + d.pf));
    return out;
  }
  if (!d.p) return null;
  const [planIndex, lanes, exponent] = d.p;
  const hits = pairs(d.p.slice(3), lanes ? 5 : 3);
  const limit = d.lm === undefined ? DATA.header.limits[0] : d.lm;
  out.push(h("p", null, "Searched in " + ms + " ms: " + plural(hits.length, "hit") + " for limit " + limit +
    planText(planIndex < 0 ? null : DATA.plans[planIndex])));
  if (!hits.length && !d.xs) return out;
  const rows = hits.map((hit, p) => [String(p + 1), h("code", null, locator(hit[0], hit[1])), scoreText(hit[2], exponent),
    lanes ? (hit[3] ? "#" + hit[3] : DASH) : "#" + (p + 1), lanes && hit[4] ? "#" + hit[4] : DASH, d.xs ? hitMark(d, p) : ""]);
  for (const x of d.xs || []) {
    if (x[2] && !x[3].length) rows.push([DASH, h("code", null, sourceName(x[0]) + (x[1].length ? " ¶" + x[1].join(",") : "")), "", "", "", h("span", { class: "mark-missed" }, "missed · relevance " + x[2])]);
  }
  out.push(table(["rank", "hit", "score", "bm25 rank", "vector rank", d.xs ? "mark" : ""], rows, [0, 2]));
  if (!d.xs) out.push(h("p", { class: "muted" }, "Marks for expected and unlabelled hits need the eval set (taguru-evaluate report --eval)."));
  return out;
}

function positionText(position) {
  const [outcome, ...rest] = position;
  if (outcome === "resolved") return [h("span", { class: "yes" }, rest[0]), " (" + rest[1] + ")"];
  if (outcome === "ambiguous") return [h("span", { class: "no" }, "ambiguous"), " (" + rest[0] + "): " + rest[1].join(", ")];
  if (outcome === "errored") return [h("span", { class: "no" }, "errored"), ": " + rest[0]];
  return h("span", { class: "no" }, "not found");
}

function queryText(query) {
  if (query === null) return h("span", { class: "muted" }, "never ran (a position did not pin)");
  if (query[0] === "errored") return [h("span", { class: "no" }, "errored"), ": " + query[1]];
  const found = query[1] >= 1;
  const attributions = pairs(query[3], 2).map((a) => locator(a[0], a[1])).join(", ");
  return [h("span", { class: found ? "yes" : "no" }, "total " + query[1] + ", matches " + query[2]), attributions ? " · " + attributions : ""];
}

function namesList(title, entries) {
  if (!entries) return null;
  return [h("h3", null, title), h("ul", { class: "plain" }, entries.map(([name, covered]) =>
    h("li", null, h("span", { class: covered ? "yes" : "no" }, covered ? "✓ " : "✗ "), name)))];
}

function structuralSection(d) {
  const out = [];
  out.push(namesList("Expected concepts", d.xc), namesList("Expected labels", d.xl));
  if (d.cu) {
    out.push(h("h3", null, "Cue resolutions"), table(["cue", "kind", "resolved names", "tier", "ms", "error"],
      d.cu.map((c) => [c[0], c[1], c[2].length ? c[2].join(", ") : DASH, c[3] || DASH, String(c[4]), c[5] || ""]), [4]));
  }
  if (d.as) {
    out.push(h("h3", null, "Associations"), table(["expected (subject, label, object)", "subject", "label", "object", "query"],
      d.as.map((a) => [a.slice(0, 3).join(" · "), positionText(a[3]), positionText(a[4]), positionText(a[5]), queryText(a[6])])));
  }
  return out;
}

function checkRow(c) {
  const where = h("code", null, locator(c[0], c[1]));
  const served = h("span", { class: c[2] ? "yes" : "no" }, c[2] ? "served" : "not served");
  if (c[3] === "unresolved") return [where, served, h("span", { class: "no" }, "unresolved" + (c[4] ? " (" + c[4] + ")" : "")), c[5], "", String(c[6])];
  const section = c[4] === "not_checked" ? DASH : h("span", { class: c[4] === "matched" ? "yes" : "no" }, c[4] + " (" + (c[5] === null ? "outside every section" : c[5]) + ")");
  const quote = c[6] === null ? DASH : h("span", { class: c[6] ? "yes" : "no" }, c[6] ? "matched" : "not found in the paragraph");
  return [where, served, h("span", { class: "yes" }, "resolved"), section, quote, String(c[7])];
}

function evidenceSection(d) {
  const out = [];
  if (d.ev) {
    const ev = d.ev;
    out.push(h("h3", null, "Evidence assembly"));
    if (ev[0] === "failed") out.push(h("p", null, badge("failed", "bad"), " after " + ev[2] + " ms: " + ev[1]));
    else {
      const [, ms, items, omitted, selection, reranker] = ev;
      out.push(h("p", null, "Assembled in " + ms + " ms: " + plural(items.length, "item") +
        " · dedup dropped " + selection[0] + " · contradiction groups " + selection[1] + " · diversity tier width " + selection[2] +
        " · reranker " + (reranker[0] ? (reranker[1] ? "ran" : "did not run") : "not configured") + (reranker[2] ? " (" + reranker[2] + ")" : "") + (reranker[3] ? ": " + reranker[3] : "")));
      if (Object.keys(omitted).length) out.push(h("p", null, "Omitted: " + Object.entries(omitted).map(([reason, n]) => reason + " " + n).join(", ")));
      out.push(table(["fused rank", "kind", "locator", "cites"], items.map((item) => [String(item[1]), item[0],
        item[2] === null ? DASH : locator(item[2], item[3]), pairs(item[4], 2).map((r) => locator(r[0], r[1])).join(", ") || DASH]), [0]));
    }
  }
  if (d.bu) {
    const b = d.bu;
    const limit = (value) => (value === null ? "∞" : value);
    out.push(h("h3", null, "Budget"), h("p", null, "items " + b[0] + " / " + limit(b[4]) + " · bytes " + b[1] + " / " + limit(b[5]) +
      " · tokens " + b[2] + " / " + limit(b[6]) + " · omitted " + b[3]));
  }
  return out;
}

function baselineChange(i) {
  const record = MOVED.get(i);
  if (!record) return null;
  return [h("h3", null, "Against the baseline: ", badge(record[0], record[0] === "improved" ? "ok" : record[0] === "regressed" ? "bad" : "info")),
    table(["metric", "baseline", "this run", "delta"], record[3].map((c) => [h("code", null, c[0]), fixed(c[1], 4), fixed(c[2], 4),
      h("span", { class: c[4] === "improved" ? "delta-up" : c[4] === "regressed" ? "delta-down" : "" }, signed(c[3], 4))]), [1, 2, 3])];
}

function caseDetail(i, d) {
  const out = [h("h2", { id: "detail-title" }, CASES.id[i]), h("p", null, caseFlags(i), " ", evalLink(i)),
    h("p", null, h("span", { class: "sub" }, "query "), CASES.query[i]),
    d.cq ? h("p", null, h("span", { class: "sub" }, "cues "), d.cq.join(" · ")) : null];
  if (CASES.flags[i] & FLAGS.not_run) {
    out.push(h("p", null, "This case of the eval set is not in the artifact: it did not run."));
    return out;
  }
  if (d.v) {
    out.push(h("h3", null, "Broken bounds"), table(["metric", "bound", "threshold", "actual", "reason"],
      d.v.map((v) => [h("code", null, v[0]), v[1] || DASH, fixed(v[2], 6), fixed(v[3], 6), v[4]]), [2, 3]));
  }
  out.push(baselineChange(i), h("h3", null, "Scores"), scoresGrid(i), expectedSources(d), passageSection(i, d), structuralSection(d));
  if (d.ck) {
    out.push(h("h3", null, "Citation checks"), table(["locator", "served", "outcome", "section", "quote", "ms"], d.ck.map(checkRow), [5]));
  }
  out.push(evidenceSection(d));
  if (d.m) out.push(h("h3", null, "Missed"), h("ul", { class: "plain" }, d.m.map((text) => h("li", null, text)), d.mt ? h("li", { class: "muted" }, "… and " + d.mt + " more") : null));
  if (d.xo) out.push(h("p", { class: "muted" }, "declared options: " + JSON.stringify(d.xo)));
  if (d.dd) out.push(textBlock("Drill-down", d.dd));
  if (d.rp) out.push(textBlock("Reproduce", d.rp.join("\n")));
  if (!HAS_LINES) out.push(h("p", { class: "muted" }, "Expectations, drill-down and reproduction requests need the eval set (taguru-evaluate report --eval)."));
  return out;
}

const chunks = new Map();

// A case's detail object: its chunk is inflated on first use and kept.
function detailOf(i) {
  const chunk = Math.floor(i / CASES.detail_chunk);
  if (!chunks.has(chunk)) chunks.set(chunk, inflate(CASES.details[chunk]));
  return chunks.get(chunk).then((details) => details[i % CASES.detail_chunk]);
}

async function openCase(i) {
  const dialog = byId("detail");
  const body = byId("detail-body");
  const d = await detailOf(i);
  body.replaceChildren(h("div", { class: "detail", "data-case": CASES.id[i] }, caseDetail(i, d)));
  history.replaceState(null, "", "#case=" + encodeURIComponent(CASES.id[i]));
  if (!dialog.open) dialog.showModal();
  dialog.scrollTop = 0;
}

function initDetail() {
  byId("detail").addEventListener("close", () => history.replaceState(null, "", location.pathname + location.search));
  const match = /^#case=(.*)$/.exec(location.hash);
  if (match) {
    const index = CASES.id.indexOf(decodeURIComponent(match[1]));
    if (index >= 0) openCase(index);
  }
}
