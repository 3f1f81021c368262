// The run-level sections: run facts, gate verdict, metric cards, distributions, baseline.

function revisionText(revision) {
  return "graph " + revision[0] + " · passages " + revision[1] + " · config " + revision[2];
}

function renderRun() {
  const head = DATA.header;
  const corpus = head.corpus;
  const budget = head.budget;
  const budgetText = budget === null ? "none" : ["max_items", "max_bytes", "max_tokens"]
    .map((key) => key + " " + (budget[key] === null ? "∞" : budget[key])).join(" · ");
  const embeddings = !corpus.embeddings_read ? "not read" : corpus.embeddings === null ? "none" : corpus.embeddings;
  const same = corpus.before.every((value, i) => value === corpus.after[i]);
  byId("run-facts").append(
    fact("Target", h("code", null, head.url)),
    fact("Context", h("code", null, head.context)),
    fact("Mode", head.mode, head.rerank ? " · rerank " + head.rerank : ""),
    fact("Budget", budgetText),
    fact("Eval set", h("code", null, head.eval.path), head.eval.name ? " — " + head.eval.name : ""),
    fact("Cases", head.ran + " of " + head.eval.cases + " ran"),
    fact("Finished (UTC)", head.generated_at),
    fact("Artifact", h("code", null, DATA.artifact)),
    fact("Corpus revision", revisionText(corpus.before), same ? "" : " → " + revisionText(corpus.after)),
    fact("Corpus stability", corpus.stable ? badge("stable", "ok") : badge("changed during the run", "bad")),
    fact("Sources in context", String(corpus.sources)),
    fact("Embeddings", embeddings),
    fact("Limits", "search " + head.limits[0] + " · resolve " + head.limits[1]),
  );
  if (head.warnings.length) {
    byId("run-warnings").append(h("h3", null, "Warnings"), h("ul", { class: "plain" }, head.warnings.map((text) => h("li", null, text))));
  }
}

function showFailingCases() {
  byId("f-outcome").value = "broke_bound";
  byId("f-outcome").dispatchEvent(new Event("change"));
  byId("cases").scrollIntoView();
}

function renderGate() {
  const gate = DATA.header.gate;
  const body = byId("gate-body");
  if (gate === null) {
    body.append(h("p", null, badge("report-only", "info"), " No thresholds file was given: no bound can fail this run."));
    return;
  }
  body.append(h("p", null,
    h("span", { class: "verdict " + (gate.passed ? "pass" : "fail") }, gate.passed ? "PASS" : "FAIL"),
    "thresholds ", h("code", { title: gate.sha256 }, "sha256 " + gate.sha256.slice(0, 12) + "…"),
    gate.allow_unstable_corpus ? " · unstable corpus allowed" : ""));
  if (gate.violations.length) {
    body.append(table(["scope", "metric", "bound", "threshold", "actual", "reason"],
      gate.violations.map((v) => [v[0], h("code", null, v[1]), v[2] || DASH, fixed(v[3], 6), fixed(v[4], 6), v[5]]), [3, 4]));
  }
  if (gate.case_violations) {
    body.append(h("p", null, plural(gate.case_violations, "case-scoped violation") + " in " + plural(gate.failing_cases, "case") + " ",
      h("button", { class: "copy", type: "button", onclick: showFailingCases }, "show those cases")));
  }
  if (gate.skipped) body.append(h("p", { class: "muted" }, plural(gate.skipped, "case-scoped bound") + " skipped as not applicable."));
}

function cardStats(card) {
  const dist = card.dist;
  if (!dist) return card.statistic === "ratio" && card.n ? card.numerator + " of " + card.n : "";
  return ["p50", "p90", "p99", "max"].map((key) => key + " " + inUnit(dist[key], card.unit)).join(" · ");
}

function renderCards() {
  const root = byId("cards");
  for (const group of DATA.families) {
    const cards = group.cards.map((card) => h("article", {
      class: "card" + (card.violated ? " violated" : "") + (card.n ? "" : " empty"),
      "data-metric": card.name,
    },
    h("div", { class: "name" }, card.name, card.violated ? " " : "", card.violated ? badge("violated", "bad") : ""),
    h("div", null, h("span", { class: "value" }, inUnit(card.value, card.unit)),
      h("span", { class: "n" }, (card.statistic === "distribution" ? "mean · " : "") + "n " + (card.n === null ? DASH : card.n))),
    h("div", { class: "stats" }, cardStats(card)),
    h("div", { class: "desc" }, card.description),
    h("div", { class: "src" }, card.source),
    card.caveat ? h("div", { class: "caveat" }, card.caveat) : null));
    root.append(h("div", { class: "family" }, h("h3", null, group.family), h("div", { class: "cards" }, cards)));
  }
}

function labelOf(metric) {
  const index = CASES.columns.indexOf(metric);
  return index < 0 ? metric : CASES.labels[index];
}

function histogramChart(item) {
  const width = 240, height = 120, left = 28, bottom = 18, top = 6;
  const bins = item.counts.length;
  const most = Math.max(1, ...item.counts);
  const barWidth = (width - left) / bins;
  const chart = svg("svg", { viewBox: "0 0 " + width + " " + height, width: width, height: height, role: "img", "aria-label": item.metric + " histogram" });
  chart.append(svg("line", { class: "axis", x1: left, x2: width, y1: height - bottom, y2: height - bottom }));
  chart.append(svg("text", { x: left - 4, y: top + 8, "text-anchor": "end" }, most));
  chart.append(svg("text", { x: left - 4, y: height - bottom, "text-anchor": "end" }, 0));
  item.counts.forEach((count, i) => {
    const barHeight = (height - bottom - top) * count / most;
    const low = (i / bins).toFixed(1), high = ((i + 1) / bins).toFixed(1);
    chart.append(svg("rect", { class: "bar", x: left + i * barWidth + 1, y: height - bottom - barHeight, width: barWidth - 2, height: barHeight },
      svg("title", null, low + "–" + high + (i === bins - 1 ? " (1.0 included)" : "") + ": " + plural(count, "case"))));
  });
  for (const tick of [0, 0.5, 1]) {
    chart.append(svg("text", { x: left + tick * (width - left), y: height - 4, "text-anchor": tick === 0 ? "start" : tick === 1 ? "end" : "middle" }, tick.toFixed(1)));
  }
  return h("figure", { class: "chart", "data-metric": item.metric },
    h("div", { class: "t" }, labelOf(item.metric), h("span", { class: "muted" }, " · n " + item.n)), chart);
}

function latencyChart() {
  const rows = DATA.families.flatMap((group) => group.cards).filter((card) => card.unit === "ms" && card.dist);
  if (!rows.length) return h("p", { class: "muted" }, "No latency samples.");
  const keys = ["p50", "p90", "p99"];
  const most = Math.max(1, ...rows.map((card) => card.dist.p99));
  const width = 720, left = 190, rowHeight = 30;
  const chart = svg("svg", { viewBox: "0 0 " + width + " " + (rows.length * rowHeight + 8), width: width, height: rows.length * rowHeight + 8, role: "img", "aria-label": "latency percentiles" });
  rows.forEach((card, r) => {
    const y = r * rowHeight + 4;
    chart.append(svg("text", { x: 0, y: y + 16 }, card.name + " (n " + card.n + ")"));
    keys.slice().reverse().forEach((key, k) => {
      const value = card.dist[key];
      chart.append(svg("rect", { class: ["bar-3", "bar-2", "bar"][k], x: left, y: y + 4, width: Math.max(1, (width - left - 70) * value / most), height: 18 },
        svg("title", null, key + " " + value + " ms")));
    });
    chart.append(svg("text", { x: width - 66, y: y + 16 }, keys.map((key) => card.dist[key]).join(" / ") + " ms"));
  });
  const legend = h("div", { class: "legend" }, ["bar", "bar-2", "bar-3"].map((cls, i) =>
    h("span", null, h("i", { style: "background: var(--" + cls + ")" }), keys[i])));
  return h("div", null, legend, chart);
}

function renderCharts() {
  byId("histograms").append(...DATA.histograms.map(histogramChart));
  byId("latency").append(latencyChart());
}

const MOVED_PAGE = 200;

function movedRows(moved, shown) {
  return moved.slice(0, shown).map((record) => {
    const [kind, caseId, row, changes] = record;
    const name = row >= 0 ? h("a", { href: "#case=" + encodeURIComponent(caseId), onclick: (event) => { event.preventDefault(); openCase(row); } }, caseId) : caseId;
    const deltas = changes.map((c) => h("div", { class: c[4] === "improved" ? "delta-up" : c[4] === "regressed" ? "delta-down" : "" },
      labelOf(c[0]) + " " + fixed(c[1], 3) + " → " + fixed(c[2], 3) + (c[3] === null ? "" : " (" + signed(c[3], 3) + ")")));
    return [badge(kind, kind === "regressed" || kind === "removed" ? "bad" : kind === "improved" ? "ok" : "info"), name, deltas];
  });
}

function renderBaseline() {
  const base = DATA.baseline;
  if (base === null) return;
  byId("baseline").hidden = false;
  byId("jump-baseline").hidden = false;
  const body = byId("baseline-body");
  const counts = base.counts;
  body.append(h("p", null, "Baseline ", h("code", null, base.path), " (" + base.generated_at + ", context " + base.context + "): ",
    badge(counts.regressed + " regressed", counts.regressed ? "bad" : "muted"), " ",
    badge(counts.improved + " improved", counts.improved ? "ok" : "muted"), " ",
    badge(counts.added + " added", "info"), " ", badge(counts.removed + " removed", "info"), " ",
    counts.unchanged + " unchanged · " + counts.cases_base + " → " + counts.cases_head + " cases"));
  if (base.warnings.length) body.append(h("ul", { class: "plain" }, base.warnings.map((text) => h("li", null, text))));
  body.append(h("h3", null, "Run-level metrics"), table(["metric", "baseline", "this run", "delta"],
    base.aggregates.map((a) => [h("code", null, a[0]), fixed(a[2], 4), fixed(a[3], 4), signed(a[4], 4)]), [1, 2, 3]));
  const moved = base.moved.slice().sort((a, b) => (a[0] === "regressed" ? 0 : 1) - (b[0] === "regressed" ? 0 : 1));
  body.append(h("h3", null, "Moved cases (" + moved.length + ")"));
  const holder = h("div", { id: "moved" });
  body.append(holder);
  let shown = 0;
  const more = h("button", { class: "copy more", type: "button", onclick: () => grow() }, "show more");
  function grow() {
    shown = Math.min(moved.length, shown + MOVED_PAGE);
    holder.replaceChildren(table(["kind", "case", "per-metric change"], movedRows(moved, shown)));
    more.hidden = shown >= moved.length;
  }
  grow();
  body.append(more);
  renderPaired(base.paired);
}

const VERDICT_BADGE = { regressed: "bad", inconclusive: "warn", unchanged: "muted", improved: "ok" };

function pValue(value) {
  return value === null ? DASH : value < 0.0001 ? "<0.0001" : fixed(value, 4);
}

// The noise-aware gate's paired statistics and verdicts (baseline.paired, built by
// report/html/baseline.py paired_statistics): one row per metric and slice.
function renderPaired(paired) {
  if (paired === null) return;
  byId("paired").hidden = false;
  const body = byId("paired-body");
  body.append(h("p", null, paired.paired_cases + " paired case(s), " + paired.resamples.toLocaleString("en") +
    " resamples, α " + paired.alpha + " (Holm over " + paired.family + " test(s)), tolerance " + paired.tolerance));
  const rows = paired.rows.map((row) => {
    const [metric, slice, n, mean, low, high, pTwo, pHolm, verdict, nonInferior, reason, mde] = row;
    const text = verdict === "unchanged" && nonInferior ? "unchanged, non-inferior" : verdict;
    const detail = verdict === "inconclusive" ? reason + "; MDE " + fixed(mde, 4) + " at n=" + n : "";
    return [h("code", null, metric), slice === null ? "all" : slice, String(n), signed(mean, 4),
      "[" + signed(low, 4) + ", " + signed(high, 4) + "]", pValue(pTwo), pValue(pHolm),
      h("span", null, badge(text, VERDICT_BADGE[verdict]), detail ? " " + detail : "")];
  });
  body.append(table(["metric", "slice", "n", "Δ mean", "95 % interval", "p", "p (Holm, one-sided)", "verdict"],
    rows, [2, 3, 5, 6]));
  const excluded = paired.excluded.map(([reason, count, cases]) =>
    h("li", null, count + " " + reason + ": " + cases.join(", ") + (count > cases.length ? ", …" : "")));
  body.append(h("p", null, excluded.length ? "Excluded from the pairs:" : "No case was excluded from the pairs."));
  if (excluded.length) body.append(h("ul", { class: "plain" }, excluded));
  if (paired.notes.length) body.append(h("ul", { class: "plain" }, paired.notes.map((note) => h("li", null, note))));
}
