// The dashboard page: draws DashboardData (src/dashboard/dashboard-data.ts) with Observable Plot.
// Runs in the browser as a classic script after d3 and Plot; reads its data from the JSON script
// tag. Every text from the data goes in through textContent, never as HTML: observations are
// arbitrary tool output.
(() => {
  const data = JSON.parse(document.getElementById("dashboard-data").textContent);
  const { Plot } = window;
  const runs = data.runs;
  const compare = runs.length === 2;
  const CLASSES = ["Retrieval", "Expansion", "Action", "Transform", "Boilerplate", "Echo", "Other"];
  const STATS = [
    ["overlap", "Overlap OL = |A∩O| / |A|"],
    ["novelty", "Novelty Nov = |O\\A| / |O|"],
    ["jaccard", "Jaccard"],
    ["length_ratio", "Length ratio R = obs tokens / act tokens (log scale)"],
    ["history_novelty", "History novelty (words never seen earlier)"],
  ];
  const classColor = { domain: CLASSES, scheme: "tableau10" };
  const runColor = { domain: runs.map((r) => r.summary.label), range: ["#4e79a7", "#e15759"] };
  const fmt = (n) => Number(n).toLocaleString("en-US");
  const pct = (part, whole) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : "–");

  /** An element with attributes and children; strings become text nodes. */
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null) continue;
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, String(value));
    }
    for (const child of children.flat())
      if (child !== undefined && child !== null) node.append(child instanceof Node ? child : String(child));
    return node;
  }

  /**
   * A cell: never broken inside a word. Short text stays on one line; prose (a reason, what a
   * record matched) wraps between words only. A table wider than the page scrolls sideways in
   * its holder instead of squeezing its columns.
   */
  function cell(tag, content) {
    const prose = !(content instanceof Node) && /\s/.test(String(content)) && String(content).length > 32;
    return el(tag, prose ? { class: "prose" } : {}, content);
  }

  /**
   * A record id's cell: it may wrap, but only where the id allows a break (after a hyphen, or a
   * `/`, `_`, `.` or `:`, each followed by a <wbr>), so a long id does not push the columns after
   * it out of view.
   */
  function idCell(id) {
    const parts = String(id).split(/(?<=[/_.:])/);
    return el("td", { class: "id" }, ...parts.flatMap((part, i) => (i === 0 ? [part] : [el("wbr"), part])));
  }

  function table(headers, rows, attrs = {}) {
    return el(
      "div",
      { class: "table-scroll" },
      el(
        "table",
        attrs,
        el("thead", {}, el("tr", {}, ...headers.map((h) => cell("th", h)))),
        el("tbody", {}, ...rows.map((cells) => el("tr", {}, ...cells.map((c) => cell("td", c))))),
      ),
    );
  }

  function section(id, title, intro, ...content) {
    return el("section", { id }, el("h2", {}, title), intro ? el("p", { class: "intro" }, intro) : null, ...content);
  }

  /**
   * A chart in a figure that states how many data points it drew (the browser test reads it), or
   * a note when there is nothing to draw.
   */
  function chart(name, points, render, emptyNote) {
    const figure = el("figure", { class: "chart", "data-chart": name, "data-points": points.length });
    if (points.length === 0) figure.append(el("p", { class: "empty" }, emptyNote ?? noDataNote));
    else {
      try {
        figure.append(render(points));
      } catch (err) {
        figure.append(el("p", { class: "error" }, `chart failed: ${err.message}`));
        console.error(err);
      }
    }
    return figure;
  }

  // A run with no stats table (mask policy all-observations) has nothing per turn to draw.
  const noDataNote = runs.every((r) => r.summary.turns === 0)
    ? `No per-turn statistics: mask policy ${runs[0].summary.maskPolicy} makes no per-turn decisions (mask.policy: turn-stats does).`
    : "no data";
  const withRun = (key) => runs.flatMap((run) => run[key].map((row) => ({ ...row, run: run.summary.label })));

  // ── Summary ─────────────────────────────────────────────────────────────────────────────────
  // Curated runs only: a run without curation has no filtered records to speak of.
  const curated = runs.some((r) => r.curation);
  // Runs with filters, selection or scorers (manifest filters / selection / scoring blocks).
  const filtering = runs.some((r) => r.filtering);
  // Runs with a mixture block (every CPT run since mixtures exist), and those with weights.
  const mixed = runs.some((r) => r.mixture);
  const weighted = runs.some((r) => r.mixture && r.mixture.mode !== "none");
  // Runs with a controls block (controls.enabled).
  const controlled = runs.some((r) => r.controls);
  // Runs with a pii block (normalize.pii on for some domain).
  const redacted = runs.some((r) => r.pii);
  // Runs with a novelty block (mask.corpus_novelty on).
  const novel = runs.some((r) => r.novelty);
  // Opened on an ablation folder (lwm-data ablate --out DIR): its table comes first.
  const ablation = data.ablation;
  const SUMMARY_FIELDS = [
    ["recordsIn", "records in"],
    ["samplesOut", "samples out"],
    ["quarantined", "quarantined"],
    ...(curated || filtering ? [["filtered", "filtered"]] : []),
    ...(weighted ? [["droppedByMixture", "drawn out by mixture"]] : []),
    ["documents", "documents"],
    ["tokens", "tokens"],
    ["lossTokens", "loss tokens"],
    ["shards", "shards"],
    ["turns", "turns"],
    ["keptTurns", "kept turns"],
  ];

  function summarySection() {
    const cards = (run, r) =>
      el(
        "div",
        { class: "cards", "data-run": r },
        el("h3", {}, run.summary.label),
        el(
          "p",
          { class: "meta" },
          `${run.summary.pipeline} · mask policy ${run.summary.maskPolicy} · tokenizer ${run.summary.tokenizer} · ${run.summary.packed ? "packed rows" : "one sample per row"} · config ${run.summary.configSha256.slice(0, 12)}`,
        ),
        ...SUMMARY_FIELDS.map(([key, label]) =>
          el(
            "div",
            { class: "card" },
            el("span", { class: "value", "data-summary": key, "data-value": run.summary[key] }, fmt(run.summary[key])),
            el("span", { class: "label" }, label),
            key === "lossTokens" ? el("span", { class: "sub" }, pct(run.summary.lossTokens, run.summary.tokens)) : null,
            key === "keptTurns" ? el("span", { class: "sub" }, pct(run.summary.keptTurns, run.summary.turns)) : null,
          ),
        ),
      );
    return section("summary", "Summary", "Counts from each run's manifest.json.", ...runs.map(cards));
  }

  /** The x scale of a statistic: shares on [0, 1], the length ratio on a log scale. */
  const statScale = (stat) => (stat === "length_ratio" ? { type: "log", label: "R" } : { domain: [0, 1], label: stat });

  /** One label per rule bound, each a line lower than the last so bounds at one value stay readable. */
  function thresholdLabels(rules) {
    return rules.map((rule, i) =>
      Plot.text([rule], {
        x: "value",
        frameAnchor: "top",
        dy: 2 + 10 * i,
        dx: 3,
        fontSize: 9,
        textAnchor: "start",
        text: (d) => `${compare ? `${d.run}: ` : ""}${d.class} ${d.bound === "min" ? "≥" : "≤"} ${d.value}`,
      }),
    );
  }

  // ── Histograms with thresholds ──────────────────────────────────────────────────────────────
  let histogramWeight = "turns";

  function histogramChart(stat, title) {
    const bins = withRun("histograms").filter((b) => b.stat === stat);
    const rules = withRun("thresholds").filter((t) => t.stat === stat);
    return chart(`histogram-${stat}`, bins, () =>
      Plot.plot({
        title,
        width: 900,
        height: 60 + 90 * new Set(bins.map((b) => b.domain)).size,
        marginLeft: 60,
        marginRight: 80,
        x: statScale(stat),
        y: { label: histogramWeight === "turns" ? "turns" : "observation tokens", grid: true },
        fy: { label: null },
        color: compare ? runColor : undefined,
        marks: [
          Plot.rectY(bins, {
            x1: "x1",
            x2: "x2",
            y: histogramWeight,
            fy: "domain",
            fill: compare ? "run" : "#4e79a7",
            fillOpacity: compare ? 0.5 : 0.85,
            mixBlendMode: compare ? "multiply" : undefined,
            tip: true,
            title: (d) =>
              `${d.domain} ${stat} ${d.x1.toPrecision(3)}–${d.x2.toPrecision(3)}: ${fmt(d.turns)} turns, ${fmt(d.obsTokens)} obs tokens`,
          }),
          Plot.ruleX(rules, { x: "value", stroke: "#333", strokeDasharray: (d) => (d.bound === "min" ? "4,2" : "1,2") }),
          ...thresholdLabels(rules),
          Plot.ruleY([0]),
        ],
      }),
    );
  }

  function histogramSection() {
    const holder = el("div", { id: "histograms" });
    const draw = () => holder.replaceChildren(...STATS.map(([stat, title]) => histogramChart(stat, title)));
    const select = el(
      "select",
      {
        id: "histogram-weight",
        onchange: (e) => {
          histogramWeight = e.target.value;
          draw();
        },
      },
      el("option", { value: "turns" }, "count turns"),
      el("option", { value: "obsTokens" }, "weight by observation tokens"),
    );
    draw();
    return section(
      "statistics",
      "Turn statistics per domain",
      "Distribution of each statistic over turns, per domain, with the class rules' bounds drawn as lines (dashed: a minimum, dotted: a maximum; rules apply in order, first match wins).",
      el("label", {}, "Bars: ", select),
      holder,
    );
  }

  /** Share of observation tokens with the statistic ≤ x: what a maximum bound at x would take in. */
  function cumulativeSection() {
    const holder = el("div");
    const draw = (stat) => {
      const points = [];
      for (const run of runs) {
        const byDomain = new Map();
        for (const b of run.histograms.filter((h) => h.stat === stat)) {
          if (!byDomain.has(b.domain)) byDomain.set(b.domain, []);
          byDomain.get(b.domain).push(b);
        }
        for (const [domain, bins] of byDomain) {
          const total = bins.reduce((s, b) => s + b.obsTokens, 0);
          bins.sort((p, q) => p.x1 - q.x1);
          // From 0 at the axis start to 100% at its end, so a domain with one busy bin is still a line.
          const start = stat === "length_ratio" ? bins[0].x1 : 0;
          const end = stat === "length_ratio" ? bins[bins.length - 1].x2 : 1;
          points.push({ run: run.summary.label, domain, x: start, share: 0 });
          let running = 0;
          for (const b of bins) {
            running += b.obsTokens;
            points.push({ run: run.summary.label, domain, x: b.x2, share: total > 0 ? running / total : 0 });
          }
          points.push({ run: run.summary.label, domain, x: end, share: total > 0 ? 1 : 0 });
        }
      }
      const rules = withRun("thresholds").filter((t) => t.stat === stat);
      holder.replaceChildren(
        chart(`cumulative-${stat}`, points, () =>
          Plot.plot({
            width: 900,
            height: 320,
            marginRight: 80,
            x: statScale(stat),
            y: { label: "share of observation tokens with the statistic ≤ x", domain: [0, 1], grid: true, tickFormat: "%" },
            color: { legend: true },
            marks: [
              Plot.line(points, {
                x: "x",
                y: "share",
                stroke: "domain",
                strokeDasharray: compare ? (d) => (d.run === runs[0].summary.label ? null : "5,3") : null,
                z: (d) => `${d.run}/${d.domain}`,
                curve: "step-before",
                tip: true,
              }),
              Plot.ruleX(rules, { x: "value", stroke: "#333", strokeDasharray: "4,2" }),
              ...thresholdLabels(rules),
            ],
          }),
        ),
      );
    };
    const select = el(
      "select",
      { id: "cumulative-stat", onchange: (e) => draw(e.target.value) },
      ...STATS.map(([stat, title]) => el("option", { value: stat }, title)),
    );
    draw(STATS[0][0]);
    return section(
      "thresholds",
      "How much loss a threshold moves",
      "Cumulative share of each domain's observation tokens (the loss before masking) at or below x. A rule bound at x catches the turns on one side of the line: read off the share of observation tokens it would take in.",
      el("label", {}, "Statistic: ", select),
      holder,
    );
  }

  // ── Classes and keep shares ─────────────────────────────────────────────────────────────────
  function classSection() {
    const rows = withRun("classes");
    const mix = chart("class-mix", rows, () =>
      Plot.plot({
        width: 900,
        height: 60 + 28 * new Set(rows.map((r) => `${r.run}/${r.domain}`)).size,
        marginLeft: 90,
        x: { label: "share of turns", percent: true },
        y: { label: null },
        fy: compare ? { label: null } : undefined,
        color: { ...classColor, legend: true },
        marks: [
          Plot.barX(
            rows,
            Plot.stackX({
              x: "turns",
              y: "domain",
              fy: compare ? "run" : undefined,
              fill: "class",
              offset: "normalize",
              order: CLASSES,
              tip: true,
              title: (d) => `${d.domain} ${d.class}: ${fmt(d.turns)} turns`,
            }),
          ),
        ],
      }),
    );
    // Kept share per class over all domains: configured (mean keep ratio) vs realised (kept / turns).
    const perClass = [];
    for (const run of runs) {
      for (const cls of CLASSES) {
        const of = run.classes.filter((c) => c.class === cls);
        const turns = of.reduce((s, c) => s + c.turns, 0);
        if (turns === 0) continue;
        const kept = of.reduce((s, c) => s + c.kept, 0);
        const configured = of.reduce((s, c) => s + c.configuredKeep * c.turns, 0) / turns;
        perClass.push({ run: run.summary.label, class: cls, turns, kept, realised: kept / turns, configured });
      }
    }
    const keep = chart("kept-share", perClass, () =>
      Plot.plot({
        width: 900,
        height: compare ? 420 : 300,
        marginLeft: 90,
        x: { label: "kept share (%)", domain: [0, 100], percent: true, grid: true },
        y: { label: null, domain: CLASSES.filter((c) => perClass.some((p) => p.class === c)) },
        fy: compare ? { label: null } : undefined,
        color: { ...classColor },
        marks: [
          Plot.barX(perClass, {
            x: "realised",
            y: "class",
            fy: compare ? "run" : undefined,
            fill: "class",
            tip: true,
            title: (d) =>
              `${d.class}: realised ${(100 * d.realised).toFixed(1)}% (${fmt(d.kept)}/${fmt(d.turns)}), configured ${(100 * d.configured).toFixed(1)}%`,
          }),
          Plot.tickX(perClass, { x: "configured", y: "class", fy: compare ? "run" : undefined, stroke: "black", strokeWidth: 3 }),
        ],
      }),
    );
    const tableRows = rows.map((r) => [
      ...(compare ? [r.run] : []),
      r.domain,
      r.class,
      fmt(r.turns),
      fmt(r.kept),
      pct(r.kept, r.turns),
      `${(100 * r.configuredKeep).toFixed(1)}%`,
      fmt(r.obsTokens),
      fmt(r.keptObsTokens),
      fmt(r.obsTokens - r.keptObsTokens),
    ]);
    return section(
      "classes",
      "Classes and kept share",
      "Class mix per domain, and for each class the realised kept share (bar) against the configured keep ratio (black tick). Masked observation tokens are the loss each class removes.",
      mix,
      keep,
      table(
        [
          ...(compare ? ["run"] : []),
          "domain",
          "class",
          "turns",
          "kept",
          "kept %",
          "configured keep",
          "obs tokens",
          "trained obs tokens",
          "masked obs tokens",
        ],
        tableRows,
        { id: "class-table" },
      ),
    );
  }

  // ── Corpus novelty ──────────────────────────────────────────────────────────────────────────
  /** mask.corpus_novelty: how often observations recur in the corpus (manifest novelty block) and the turns' corpus_novelty. */
  function noveltySection() {
    const withNovelty = runs.filter((r) => r.novelty);
    const cards = (r) => {
      const n = r.novelty;
      return el(
        "div",
        { class: "cards", "data-novelty": r.summary.label },
        compare ? el("h3", {}, r.summary.label) : null,
        ...[
          ["observations", "observations counted", null],
          ["distinct", "distinct observations", pct(n.distinct, n.observations)],
          ["once", "seen once", pct(n.byCount.find((b) => b.bucket === "1")?.distinct ?? 0, n.distinct)],
        ].map(([key, label, sub]) => {
          const value = key === "once" ? (n.byCount.find((b) => b.bucket === "1")?.distinct ?? 0) : n[key];
          return el(
            "div",
            { class: "card" },
            el("span", { class: "value", "data-novelty-count": key, "data-value": value }, fmt(value)),
            el("span", { class: "label" }, label),
            sub ? el("span", { class: "sub" }, `${sub} of ${key === "once" ? "distinct" : "observations"}`) : null,
          );
        }),
      );
    };
    const buckets = withNovelty.flatMap((r) => r.novelty.byCount.map((b) => ({ ...b, run: r.summary.label })));
    const bucketOrder = [...new Set(buckets.map((b) => b.bucket))];
    const byCount = chart(
      "novelty-by-count",
      buckets,
      () =>
        Plot.plot({
          width: 900,
          height: 260,
          marginLeft: 70,
          x: { label: "times the observation occurs in the corpus", domain: bucketOrder },
          y: { label: "distinct observations", grid: true },
          fx: compare ? { label: null } : undefined,
          color: compare ? runColor : undefined,
          marks: [
            Plot.barY(buckets, {
              x: "bucket",
              y: "distinct",
              fx: compare ? "run" : undefined,
              fill: compare ? "run" : "#4e79a7",
              tip: true,
              title: (d) => `${d.bucket}×: ${fmt(d.distinct)} distinct observations`,
            }),
          ],
        }),
      "No observations were counted.",
    );
    const bins = withNovelty.flatMap((r) => r.novelty.histogram.map((b) => ({ ...b, run: r.summary.label })));
    const rules = withNovelty.flatMap((r) => r.novelty.thresholds.map((t) => ({ ...t, run: r.summary.label })));
    const histogram = chart(
      "histogram-corpus_novelty",
      bins,
      () =>
        Plot.plot({
          title: "Corpus novelty: −log2(occurrences / observations counted), in bits",
          width: 900,
          height: 60 + 90 * new Set(bins.map((b) => b.domain)).size,
          marginLeft: 60,
          marginRight: 80,
          x: { label: "corpus_novelty (bits)" },
          y: { label: "turns", grid: true },
          fy: { label: null },
          color: compare ? runColor : undefined,
          marks: [
            Plot.rectY(bins, {
              x1: "x1",
              x2: "x2",
              y: "turns",
              fy: "domain",
              fill: compare ? "run" : "#4e79a7",
              fillOpacity: compare ? 0.5 : 0.85,
              tip: true,
              title: (d) => `${d.domain} ${d.x1}–${d.x2} bits: ${fmt(d.turns)} turns, ${fmt(d.obsTokens)} obs tokens`,
            }),
            Plot.ruleX(rules, { x: "value", stroke: "#333", strokeDasharray: (d) => (d.bound === "min" ? "4,2" : "1,2") }),
            ...thresholdLabels(rules),
            Plot.ruleY([0]),
          ],
        }),
      "The stats table has no corpus_novelty column.",
    );
    const rows = buckets.map((b) => {
      const run = withNovelty.find((r) => r.summary.label === b.run);
      return [
        ...(compare ? [b.run] : []),
        b.bucket,
        el("span", { "data-novelty-bucket": `${b.run}|${b.bucket}` }, fmt(b.distinct)),
        pct(b.distinct, run.novelty.distinct),
      ];
    });
    return section(
      "corpus-novelty",
      "Corpus novelty",
      "How often each observation (canonicalized as curation does) occurs in the whole job, from the manifest's novelty block, and per domain the turns' corpus_novelty: −log2 of the observation's share of all observations counted, high for an observation seen once, low for a banner repeated across the corpus (docs/masking.md, mask.corpus_novelty). Class rules' bounds on it are drawn as lines.",
      ...withNovelty.map(cards),
      byCount,
      table([...(compare ? ["run"] : []), "occurrences", "distinct observations", "share of distinct"], rows, { id: "novelty-table" }),
      histogram,
    );
  }

  // ── Ablation ────────────────────────────────────────────────────────────────────────────────
  /** The intro's clause on the seen-once subset: its size, or why its cells read n/a. */
  function seenOnceText(seen) {
    if (seen === undefined) return "";
    if (seen.unavailable) return `; seen-once observations: n/a (${seen.unavailable})`;
    if (seen.tokens === 0) return `; seen-once observations: n/a (every held-out observation occurs more than once in the corpus)`;
    return `, and the ${fmt(seen.tokens)} tokens of held-out observations seen once among the corpus's ${fmt(seen.observations)} (the rest can be memorised)`;
  }

  /** `lwm-data ablate`: each variant's held-out loss over seeds, its paired difference from the baseline, with 95% intervals. */
  function ablationSection() {
    const a = ablation;
    const f4 = (n) => Number(n).toFixed(4);
    const ci = (m) => (m.low === null || m.high === null ? "(1 seed: no CI)" : `[${f4(m.low)}, ${f4(m.high)}]`);
    const withCi = (m, key) => el("span", { "data-ablation": key, "data-value": m.mean }, `${f4(m.mean)} ${ci(m)}`);
    const delta = (m, key) =>
      m ? el("span", { "data-ablation": key, "data-value": m.mean }, `${m.mean >= 0 ? "+" : ""}${f4(m.mean)} ${ci(m)}`) : "—";
    const awb = a.variants.every((v) => v.awbLoss);
    // Seen-once observations: a column whenever the report has the subset; n/a cells (no dots) where it is empty.
    const seenOnce = a.seenOnce !== undefined;
    const seenOnceLabel = "seen-once observations";
    const intervals = a.variants.flatMap((v) =>
      [
        ["held-out", v.loss],
        ["informative turns", v.informativeLoss],
        ...(awb ? [["AgentWorldBench turns", v.awbLoss]] : []),
        ...(seenOnce && v.seenOnceLoss ? [[seenOnceLabel, v.seenOnceLoss]] : []),
      ].map(([evaluation, m]) => ({ variant: v.name, evaluation, mean: m.mean, low: m.low ?? m.mean, high: m.high ?? m.mean })),
    );
    const seeds = a.variants.flatMap((v) => v.seedLosses.map((s) => ({ ...s, variant: v.name, evaluation: "held-out" })));
    const names = a.variants.map((v) => v.name);
    const evaluations = [
      "held-out",
      "informative turns",
      ...(awb ? ["AgentWorldBench turns"] : []),
      ...(intervals.some((d) => d.evaluation === seenOnceLabel) ? [seenOnceLabel] : []),
    ];
    const lossChart = chart("ablation-loss", intervals, () =>
      Plot.plot({
        width: 900,
        height: 80 + 34 * names.length * new Set(intervals.map((d) => d.evaluation)).size,
        marginLeft: 220,
        marginRight: 170,
        x: { label: "loss (nats per token, lower is better)", grid: true },
        y: { label: null, domain: names },
        fy: { label: null, domain: evaluations },
        marks: [
          Plot.ruleY(intervals, { y: "variant", fy: "evaluation", x1: "low", x2: "high", stroke: "#4e79a7", strokeWidth: 2 }),
          Plot.dot(intervals, {
            y: "variant",
            fy: "evaluation",
            x: "mean",
            fill: "#4e79a7",
            r: 4,
            tip: true,
            title: (d) => `${d.variant}, ${d.evaluation}: ${f4(d.mean)} [${f4(d.low)}, ${f4(d.high)}]`,
          }),
          Plot.dot(seeds, {
            y: "variant",
            fy: "evaluation",
            x: "loss",
            stroke: "#888",
            r: 2.5,
            title: (d) => `seed ${d.seed}: ${f4(d.loss)}`,
          }),
        ],
      }),
    );
    const diffs = a.variants
      .filter((v) => v.difference)
      .flatMap((v) =>
        [
          ["held-out", v.difference],
          ["informative turns", v.informativeDifference],
          ...(awb ? [["AgentWorldBench turns", v.awbDifference]] : []),
          ...(seenOnce ? [[seenOnceLabel, v.seenOnceDifference]] : []),
        ]
          .filter(([, m]) => m)
          .map(([evaluation, m]) => ({ variant: v.name, evaluation, mean: m.mean, low: m.low ?? m.mean, high: m.high ?? m.mean })),
      );
    const diffChart = chart(
      "ablation-difference",
      diffs,
      () =>
        Plot.plot({
          width: 900,
          height: 80 + 34 * diffs.length,
          marginLeft: 220,
          marginRight: 170,
          x: { label: "Δ loss vs the baseline, paired by seed (an interval across 0: no difference at 95%)", grid: true },
          y: { label: null },
          fy: { label: null, domain: evaluations },
          marks: [
            Plot.ruleX([0], { stroke: "#333" }),
            Plot.ruleY(diffs, { y: "variant", fy: "evaluation", x1: "low", x2: "high", stroke: "#e15759", strokeWidth: 2 }),
            Plot.dot(diffs, {
              y: "variant",
              fy: "evaluation",
              x: "mean",
              fill: "#e15759",
              r: 4,
              tip: true,
              title: (d) => `${d.variant}, ${d.evaluation}: ${d.mean >= 0 ? "+" : ""}${f4(d.mean)} [${f4(d.low)}, ${f4(d.high)}]`,
            }),
          ],
        }),
      "Only the baseline: nothing to compare.",
    );
    const rows = a.variants.map((v, i) => [
      // Elements, not text: a name is one long word, kept on one line (text over 32 characters would wrap as prose).
      el("span", { "data-ablation-variant": i }, v.name === a.baseline ? `${v.name} (baseline)` : v.name),
      el("span", {}, v.set.join(" ") || "–"),
      String(v.loss.n),
      withCi(v.loss, `${i}|loss`),
      delta(v.difference, `${i}|difference`),
      withCi(v.informativeLoss, `${i}|informative`),
      delta(v.informativeDifference, `${i}|informative-difference`),
      ...(awb ? [withCi(v.awbLoss, `${i}|awb`), delta(v.awbDifference, `${i}|awb-difference`)] : []),
      ...(seenOnce
        ? v.seenOnceLoss
          ? [withCi(v.seenOnceLoss, `${i}|seen-once`), delta(v.seenOnceDifference, `${i}|seen-once-difference`)]
          : ["n/a", v.name === a.baseline ? "—" : "n/a"]
        : []),
      fmt(Math.round(v.trainedWeight)),
    ]);
    return section(
      "ablation",
      "Ablation: proxy-model loss per variant",
      `lwm-data ablate trained the same ${a.model} proxy model on ${fmt(a.tokens)} tokens of each variant's train split, ${a.seeds} seed(s), and scored it on the held-out observations: the ${fmt(a.evalTokens)} observation tokens of the baseline's validation split, the ${fmt(a.informativeTokens)} of them in informative turns (neither Echo nor Boilerplate)${a.awbRows !== undefined ? `, and the same turns as ${fmt(a.awbRows)} AgentWorldBench-layout rows, each turn weighing the same` : ""}${seenOnceText(a.seenOnce)}. Means over seeds with 95% intervals (grey dots: each seed's held-out loss); Δ is paired by seed (docs/cli.md, lwm-data ablate). The other tabs show the baseline variant's build.`,
      el("p", { class: "meta", id: "ablation-source" }, `${a.dir} · config ${a.config}`),
      lossChart,
      diffChart,
      table(
        [
          "variant",
          "overrides",
          "seeds",
          "held-out loss [95% CI]",
          "Δ vs baseline [95% CI]",
          "informative turns: loss [95% CI]",
          "informative turns: Δ [95% CI]",
          ...(awb ? ["AgentWorldBench turns: loss [95% CI]", "AgentWorldBench turns: Δ [95% CI]"] : []),
          ...(seenOnce ? ["seen-once obs: loss [95% CI]", "seen-once obs: Δ [95% CI]"] : []),
          "trained tokens (weight)",
        ],
        rows,
        { id: "ablation-table" },
      ),
    );
  }

  // ── Tokens per domain ───────────────────────────────────────────────────────────────────────
  function tokenSection() {
    const measures = [
      ["tokens", "all tokens"],
      ["obsTokens", "observation tokens (before masking)"],
      ["keptObsTokens", "trained observation tokens (after)"],
      ["lossTokens", "loss tokens (incl. end-of-turn)"],
    ];
    const points = withRun("domains").flatMap((d) =>
      measures.map(([key, label]) => ({ run: d.run, domain: d.domain, measure: label, value: d[key] })),
    );
    const bars = chart("tokens-per-domain", points, () =>
      Plot.plot({
        width: 900,
        height: compare ? 520 : 320,
        marginLeft: 90,
        x: { label: "tokens", grid: true },
        y: { label: null, domain: measures.map((m) => m[1]), axis: null },
        fy: { label: null },
        fx: compare ? { label: null } : undefined,
        color: { legend: true, domain: measures.map((m) => m[1]), scheme: "tableau10" },
        marks: [
          Plot.barX(points, {
            x: "value",
            y: "measure",
            fy: "domain",
            fx: compare ? "run" : undefined,
            fill: "measure",
            tip: true,
            title: (d) => `${d.domain} ${d.measure}: ${fmt(d.value)}`,
          }),
        ],
      }),
    );
    const rows = withRun("domains").map((d) => [
      ...(compare ? [d.run] : []),
      d.domain,
      fmt(d.samples),
      el("span", { "data-domain-tokens": `${d.run}|${d.domain}` }, fmt(d.tokens)),
      fmt(d.obsTokens),
      fmt(d.keptObsTokens),
      pct(d.keptObsTokens, d.obsTokens),
      el("span", { "data-domain-loss": `${d.run}|${d.domain}` }, fmt(d.lossTokens)),
      pct(d.lossTokens, d.tokens),
    ]);
    return section(
      "tokens",
      "Tokens per domain, before and after masking",
      "All tokens and loss tokens come from the manifest; observation tokens before and after masking from the stats table (loss tokens also count each trained observation's end-of-turn token).",
      ...runs
        .filter((r) => r.summary.truncatedTokens > 0)
        .map((r) =>
          el(
            "p",
            { class: "note" },
            `${r.summary.label}: packing cut ${fmt(r.summary.truncatedTokens)} tokens from records longer than a row; the stats table's observation tokens are counted before that cut, so "trained obs" exceeds what the shards train there (loss tokens are the shards').`,
          ),
        ),
      ...runs
        .filter((r) => r.mixture && r.mixture.mode !== "none")
        .map((r) =>
          el(
            "p",
            { class: "note" },
            `${r.summary.label}: a mixture — tokens and loss tokens count every copy written, samples count each record once, and the stats table's observation tokens are each record's once (see Mixture).`,
          ),
        ),
      bars,
      table(
        [...(compare ? ["run"] : []), "domain", "samples", "tokens", "obs tokens", "trained obs", "trained %", "loss tokens", "loss %"],
        rows,
        { id: "domain-table" },
      ),
    );
  }

  // ── Mixture ─────────────────────────────────────────────────────────────────────────────────
  const share = (value) => `${(100 * value).toFixed(1)}%`;

  /** How a run's factors were set, in one line. */
  function mixtureSettings(m) {
    if (m.mode === "none") return "No mixture weights: every source at factor 1, every record written once.";
    const how =
      m.mode === "shares"
        ? `factors derived from target shares of trained tokens, for ${fmt(m.totalLossTokens ?? 0)} trained tokens (total_tokens ${m.totalTokens}, max_factor ${m.maxFactor})`
        : "sampling factors from the config";
    return `Seed ${m.seed}; ${how}; other sources factor 1. ${fmt(m.droppedRecords)} record${m.droppedRecords === 1 ? "" : "s"} drawn out by factors below 1 (counted, not written); repeats are written as <id>#copy<N>.`;
  }

  /** Per source: trained tokens before vs after weighting, the realised share against the target, the factors; per domain in a table. */
  function mixtureSection() {
    const withMixture = runs.filter((r) => r.mixture);
    const sources = withMixture.flatMap((r) => r.mixture.sources.map((s) => ({ ...s, run: r.summary.label })));
    const domains = withMixture.flatMap((r) => r.mixture.domains.map((d) => ({ ...d, run: r.summary.label })));
    const weightedRuns = withMixture.filter((r) => r.mixture.mode !== "none").map((r) => r.summary.label);
    const weightedSources = sources.filter((s) => weightedRuns.includes(s.run));
    const phases = ["before weighting", "after weighting"];
    const sourceLabel = (d) => `${d.source} ×${d.factor.toFixed(2)}`;
    const tokenPoints = weightedSources.flatMap((s) => [
      { run: s.run, source: sourceLabel(s), phase: phases[0], value: s.lossTokens },
      { run: s.run, source: sourceLabel(s), phase: phases[1], value: s.lossTokensOut },
    ]);
    const tokenChart = chart("mixture-tokens", tokenPoints, () =>
      Plot.plot({
        title: "Trained tokens per source (× its factor), before and after weighting",
        width: 900,
        height: 60 + 56 * new Set(tokenPoints.map((p) => `${p.run}/${p.source}`)).size,
        marginLeft: 120,
        marginRight: compare ? 140 : 20,
        x: { label: "trained tokens", grid: true },
        y: { label: null, domain: phases, axis: null },
        fy: { label: null },
        fx: compare ? { label: null } : undefined,
        color: { legend: true, domain: phases, range: ["#bab0ac", "#4e79a7"] },
        marks: [
          Plot.barX(tokenPoints, {
            x: "value",
            y: "phase",
            fy: "source",
            fx: compare ? "run" : undefined,
            fill: "phase",
            tip: true,
            title: (d) => `${d.source} ${d.phase}: ${fmt(d.value)} trained tokens`,
          }),
          Plot.ruleX([0]),
        ],
      }),
    );
    const targets = weightedSources.filter((s) => s.targetShare !== undefined);
    const shareChart = chart("mixture-shares", weightedSources, () =>
      Plot.plot({
        title: "Share of trained tokens: realised (bar), before weighting (grey tick), target (black tick)",
        width: 900,
        height: 60 + 30 * new Set(weightedSources.map((s) => `${s.run}/${s.source}`)).size,
        marginLeft: 120,
        marginRight: compare ? 140 : 20,
        x: { label: "share of trained tokens (%)", domain: [0, 100], percent: true, grid: true },
        y: { label: null },
        fy: compare ? { label: null } : undefined,
        marks: [
          Plot.barX(weightedSources, {
            x: "share",
            y: "source",
            fy: compare ? "run" : undefined,
            fill: "#4e79a7",
            tip: true,
            title: (d) =>
              `${d.source}: ${share(d.share)} of trained tokens written (${share(d.shareBefore)} before weighting${d.targetShare !== undefined ? `, target ${share(d.targetShare)}` : ""}), factor ${d.factor}`,
          }),
          Plot.tickX(weightedSources, {
            x: "shareBefore",
            y: "source",
            fy: compare ? "run" : undefined,
            stroke: "#9aa1ad",
            strokeWidth: 3,
          }),
          Plot.tickX(targets, { x: "targetShare", y: "source", fy: compare ? "run" : undefined, stroke: "black", strokeWidth: 3 }),
        ],
      }),
    );
    const key = (d) => `${d.run}|${d.source}`;
    const sourceRows = sources.map((s) => [
      ...(compare ? [s.run] : []),
      s.source,
      s.domains.join(", "),
      el("span", { "data-mixture-factor": key(s), "data-value": s.factor }, s.factor.toFixed(3)),
      s.targetShare !== undefined ? share(s.targetShare) : "–",
      `${fmt(s.records)} → ${fmt(s.recordsOut)}`,
      fmt(s.documentsOut),
      `${fmt(s.tokens)} → ${fmt(s.tokensOut)}`,
      el("span", { "data-mixture-loss": key(s), "data-value": s.lossTokens }, fmt(s.lossTokens)),
      el("span", { "data-mixture-loss-out": key(s), "data-value": s.lossTokensOut }, fmt(s.lossTokensOut)),
      share(s.shareBefore),
      el("span", { "data-mixture-share": key(s), "data-value": s.share }, share(s.share)),
    ]);
    const domainRows = domains.map((d) => [
      ...(compare ? [d.run] : []),
      d.source,
      d.domain,
      `${fmt(d.records)} → ${fmt(d.recordsOut)}`,
      fmt(d.documentsOut),
      fmt(d.tokens),
      fmt(d.tokensOut),
      fmt(d.lossTokens),
      el("span", { "data-mixture-domain-loss-out": `${key(d)}|${d.domain}` }, fmt(d.lossTokensOut)),
      share(d.shareBefore),
      share(d.share),
    ]);
    return section(
      "mixture",
      "Mixture: sources before and after weighting",
      "Each mixture source (inputs[].source, else the record's domain, knowledge for text) is kept with a sampling factor: before weighting counts one copy of every record, after weighting every copy written. Trained tokens are loss tokens; shares are of the run's trained tokens: the bar is the realised share, the grey tick the share before weighting, the black tick the target (manifest mixture block).",
      ...withMixture.map((r) =>
        el(
          "p",
          { class: "meta", "data-mixture": r.summary.label },
          `${compare ? `${r.summary.label}: ` : ""}${mixtureSettings(r.mixture)}`,
        ),
      ),
      weightedRuns.length > 0 ? tokenChart : null,
      weightedRuns.length > 0 ? shareChart : null,
      table(
        [
          ...(compare ? ["run"] : []),
          "source",
          "domains",
          "factor",
          "target share",
          "records → kept",
          "documents",
          "tokens before → after",
          "trained before",
          "trained after",
          "share before",
          "share after",
        ],
        sourceRows,
        { id: "mixture-table" },
      ),
      el("h3", {}, "Per domain within each source"),
      table(
        [
          ...(compare ? ["run"] : []),
          "source",
          "domain",
          "records → kept",
          "documents",
          "tokens before",
          "tokens after",
          "trained before",
          "trained after",
          "share before",
          "share after",
        ],
        domainRows,
        { id: "mixture-domain-table" },
      ),
    );
  }

  // ── Personal data ──────────────────────────────────────────────────────────────────────────
  /** Values replaced per domain and kind (manifest pii block), records with any, and IPs the range policy kept. */
  function piiSection() {
    const withPii = runs.filter((r) => r.pii);
    const rows = withPii.flatMap((r) => r.pii.rows.map((row) => ({ ...row, run: r.summary.label })));
    const kindNames = [...new Set(rows.map((row) => row.kind))].sort();
    const cards = (r) => {
      const p = r.pii;
      return [
        el(
          "p",
          { class: "meta", "data-pii-settings": r.summary.label },
          `${compare ? `${r.summary.label}: ` : ""}kinds ${p.kinds.join(", ") || "none at the top level"}${p.domainOverrides.length > 0 ? ` · overrides for ${p.domainOverrides.join(", ")}` : ""} · private IPs ${p.ipPolicy.private} · documentation IPs ${p.ipPolicy.documentation}`,
        ),
        el(
          "div",
          { class: "cards", "data-pii": r.summary.label },
          ...[
            ["records", "records with personal data", pct(p.records, r.summary.recordsIn)],
            ["replaced", "values replaced"],
            ["values", "distinct values (per record)"],
          ].map(([key, label, sub]) =>
            el(
              "div",
              { class: "card" },
              el("span", { class: "value", "data-pii-count": key, "data-value": p[key] }, fmt(p[key])),
              el("span", { class: "label" }, label),
              sub ? el("span", { class: "sub" }, `${sub} of records in`) : null,
            ),
          ),
        ),
      ];
    };
    const bars = chart(
      "pii-kinds",
      rows,
      () =>
        Plot.plot({
          width: 900,
          height: 70 + 28 * new Set(rows.map((row) => `${row.run}/${row.domain}`)).size,
          marginLeft: 90,
          marginRight: compare ? 140 : 20,
          x: { label: "values replaced", grid: true },
          y: { label: null },
          fy: compare ? { label: null } : undefined,
          color: { domain: kindNames, scheme: "tableau10", legend: true },
          marks: [
            Plot.barX(
              rows,
              Plot.stackX({
                x: "replaced",
                y: "domain",
                fy: compare ? "run" : undefined,
                fill: "kind",
                order: kindNames,
                tip: true,
                title: (d) => `${d.domain} ${d.kind}: ${fmt(d.replaced)} replaced, ${fmt(d.values)} distinct value(s) per record summed`,
              }),
            ),
            Plot.ruleX([0]),
          ],
        }),
      "No personal data was found.",
    );
    const tableRows = rows.map((row) => [
      ...(compare ? [row.run] : []),
      row.domain,
      row.kind,
      el("span", { "data-pii-replaced": `${row.run}|${row.domain}|${row.kind}` }, fmt(row.replaced)),
      fmt(row.values),
    ]);
    const kept = withPii.flatMap((r) => r.pii.kept.map((k) => ({ ...k, run: r.summary.label })));
    return section(
      "pii",
      "Personal data: values replaced",
      'Emails, phone numbers, IP addresses, card numbers, IBANs… replaced with typed placeholders numbered per value within a record (docs/normalization.md "Personal data"): per domain and kind, the values replaced and the distinct values (a record\'s <EMAIL_1> counted once however often it recurs), from the manifest pii block.',
      ...withPii.flatMap(cards),
      bars,
      table([...(compare ? ["run"] : []), "domain", "kind", "replaced", "distinct values"], tableRows, { id: "pii-table" }),
      kept.length > 0
        ? el(
            "p",
            { class: "meta", id: "pii-kept" },
            `Kept by the IP range policy: ${kept.map((k) => `${compare ? `${k.run} ` : ""}${k.domain} ${k.range.replace("ip_", "")} ${fmt(k.count)}`).join(" · ")}`,
          )
        : null,
    );
  }

  // ── Controls ────────────────────────────────────────────────────────────────────────────────
  /** Edge-case labels per domain (manifest controls block), turns with each, and labelled turns with their evidence. */
  function controlsSection() {
    const withControls = runs.filter((r) => r.controls);
    const labels = withControls.flatMap((r) => r.controls.labels.map((l) => ({ ...l, run: r.summary.label })));
    const labelNames = [...new Set(labels.map((l) => l.label))].sort();
    const cards = (r) => {
      const c = r.controls;
      const fields = [
        ["labelled", "labelled trajectories"],
        ["instructed", "instructed"],
        ["counterfactual", "counterfactual samples"],
      ];
      const total = c.labels.reduce((s, l) => s + l.count, 0);
      return [
        el(
          "p",
          { class: "meta" },
          `${compare ? `${r.summary.label}: ` : ""}share ${c.share} · counterfactual share ${c.counterfactualShare} · seed ${c.seed} · ${fmt(new Set(c.labels.map((l) => l.label)).size)} kinds of label in ${fmt(new Set(c.labels.map((l) => l.domain)).size)} domains`,
        ),
        el(
          "div",
          { class: "cards", "data-controls": r.summary.label },
          ...fields.map(([key, label]) =>
            el(
              "div",
              { class: "card" },
              el("span", { class: "value", "data-control": key, "data-value": c[key] }, fmt(c[key])),
              el("span", { class: "label" }, label),
              key === "instructed" ? el("span", { class: "sub" }, pct(c.instructed, c.labelled)) : null,
            ),
          ),
          el(
            "div",
            { class: "card" },
            el("span", { class: "value", "data-control": "labels", "data-value": total }, fmt(total)),
            el("span", { class: "label" }, "labels"),
          ),
        ),
      ];
    };
    const bars = chart(
      "control-labels",
      labels,
      () =>
        Plot.plot({
          width: 900,
          height: 70 + 28 * new Set(labels.map((l) => `${l.run}/${l.domain}`)).size,
          marginLeft: 90,
          marginRight: compare ? 140 : 20,
          x: { label: "labels found", grid: true },
          y: { label: null },
          fy: compare ? { label: null } : undefined,
          color: { domain: labelNames, scheme: "tableau10", legend: true },
          marks: [
            Plot.barX(
              labels,
              Plot.stackX({
                x: "count",
                y: "domain",
                fy: compare ? "run" : undefined,
                fill: "label",
                order: labelNames,
                tip: true,
                title: (d) =>
                  `${d.domain} ${d.label}: ${fmt(d.count)} labels${d.turns !== undefined ? ` in ${fmt(d.turns)} turns, ${fmt(d.keptTurns)} kept` : ""}`,
              }),
            ),
            Plot.ruleX([0]),
          ],
        }),
      "No edge cases were found.",
    );
    const rows = labels.map((l) => [
      ...(compare ? [l.run] : []),
      l.domain,
      l.label,
      el("span", { "data-control-count": `${l.run}|${l.domain}|${l.label}` }, fmt(l.count)),
      l.turns !== undefined ? fmt(l.turns) : "–",
      l.turns !== undefined ? `${fmt(l.keptTurns)} (${pct(l.keptTurns, l.turns)})` : "–",
    ]);
    // Examples: labelled turns, their sample's instruction and the observation with the evidence marked.
    const examples = withControls.flatMap((r) => r.controls.examples.map((e) => ({ ...e, run: r.summary.label })));
    const list = el("div", { id: "control-examples" });
    const showExamples = (label) =>
      list.replaceChildren(
        ...examples
          .filter((e) => !label || e.label === label)
          .map((e) =>
            el(
              "div",
              { class: "detail control-example", "data-label": e.label, "data-domain": e.domain },
              el("h3", {}, `${compare ? `${e.run}: ` : ""}${e.label} · ${e.domain} · ${e.id} · turn ${e.turnIndex}`),
              el("p", { class: "decision" }, `${e.class}, ${e.kept ? "kept" : "masked"} · sample labels: ${e.sampleLabels.join(", ")}`),
              el("p", { class: "instruction" }, e.instruction ? `${e.kind}: ${e.instruction}` : `${e.kind || "?"}: no instruction`),
              e.observation
                ? el(
                    "pre",
                    { class: "tokens observation" },
                    e.observation.omittedBefore > 0 ? `… (${fmt(e.observation.omittedBefore)} characters) ` : null,
                    ...e.observation.pieces.map((p) =>
                      p.evidence
                        ? el("mark", { class: "evidence", "data-start": p.evidence.start, "data-end": p.evidence.end }, p.text)
                        : p.text,
                    ),
                    e.observation.omittedAfter > 0 ? ` … (${fmt(e.observation.omittedAfter)} more characters)` : null,
                  )
                : el("p", { class: "note" }, `Observation not shown: ${e.note ?? "unavailable"}.`),
            ),
          ),
      );
    showExamples("");
    const select = el(
      "select",
      { id: "control-label", onchange: (e) => showExamples(e.target.value) },
      el("option", { value: "" }, "any"),
      ...labelNames.map((l) => el("option", { value: l }, l)),
    );
    return section(
      "controls",
      "Controls: edge-case labels",
      'Edge cases the detectors found (docs/controls.md "Controls"): labelled trajectories, those whose system message states them, counterfactual "behave normally" samples, and labels per domain (manifest controls block); turns with each label and how many are kept from the stats table\'s labels column. Below, a few labelled turns per domain and label: the sample\'s instruction, and the observation with the label\'s evidence highlighted.',
      ...withControls.flatMap(cards),
      bars,
      table([...(compare ? ["run"] : []), "domain", "label", "labels", "turns", "kept turns"], rows, { id: "control-table" }),
      ...synthesisTables(withControls),
      el("h3", {}, "Labelled turns"),
      el(
        "p",
        { class: "meta" },
        `Up to ${data.examplesPerGroup ?? 6} turns per domain × label are embedded. `,
        el("label", {}, "label ", select),
      ),
      list,
    );
  }

  /** controls.synthesis: per domain and kind, trajectories drawn for a synthesis and syntheses written; rejections by reason. */
  function synthesisTables(withControls) {
    const synthesized = withControls.filter((r) => r.controls.synthesis);
    if (synthesized.length === 0) return [];
    const rows = synthesized.flatMap((r) =>
      r.controls.synthesis.rows.map((row) => [
        ...(compare ? [r.summary.label] : []),
        row.domain,
        row.kind,
        el("span", { "data-synthesis-asked": `${r.summary.label}|${row.domain}|${row.kind}` }, fmt(row.asked)),
        el("span", { "data-synthesis-written": `${r.summary.label}|${row.domain}|${row.kind}` }, fmt(row.written)),
        pct(row.written, row.asked),
      ]),
    );
    const rejected = synthesized.flatMap((r) =>
      r.controls.synthesis.rejected.map((x) => [
        ...(compare ? [r.summary.label] : []),
        x.reason,
        el("span", { "data-synthesis-rejected": `${r.summary.label}|${x.reason}` }, fmt(x.count)),
      ]),
    );
    // Manifests of the mix control count the trajectories a verified synthesis existed for; older ones those drawn for one.
    const eligible = synthesized.every((r) => r.controls.synthesis.basis === "eligible");
    return [
      el("h3", {}, "Synthesized edge cases"),
      el(
        "p",
        { class: "meta" },
        `Per domain and kind, the syntheses written against the trajectories ${eligible ? "a verified synthesis of the kind existed for" : "drawn for a synthesis"}: a synthesis is kept only when the detectors label it with the kind asked for and nothing else changed. Rejections by reason below (manifest controls block).`,
      ),
      table([...(compare ? ["run"] : []), "domain", "kind", eligible ? "eligible" : "drawn", "written", "written %"], rows, {
        id: "synthesis-table",
      }),
      rejected.length > 0
        ? table([...(compare ? ["run"] : []), "rejected because", "syntheses"], rejected, { id: "synthesis-rejected" })
        : el("p", { class: "meta", id: "synthesis-rejected" }, "No synthesis was rejected."),
      ...synthesisSharesTable(synthesized),
    ];
  }

  /** The mix control: per domain and kind, the target share of samples against the realised one (natural + synthesized). */
  function synthesisSharesTable(synthesized) {
    const withShares = synthesized.filter((r) => r.controls.synthesis.shares);
    if (withShares.length === 0) return [];
    const share = (x) => `${(100 * x).toFixed(1)}%`;
    const rows = withShares.flatMap((r) =>
      r.controls.synthesis.shares.map((s) => [
        ...(compare ? [r.summary.label] : []),
        s.domain,
        s.kind,
        share(s.target),
        el("span", { "data-synthesis-realised": `${r.summary.label}|${s.domain}|${s.kind}` }, share(s.realised)),
        fmt(s.natural),
        fmt(s.synthesized),
        fmt(s.samples),
        s.shortfall > 0 ? `short by ${fmt(s.shortfall)}` : s.excess > 0 ? `${fmt(s.excess)} natural above` : "on target",
      ]),
    );
    return [
      el("h3", {}, "Target shares"),
      el(
        "p",
        { class: "meta" },
        "Per domain and kind, the share of the domain's samples whose instruction states the kind (natural and synthesized), against its target (controls.synthesis.target_shares). Short: the eligible trajectories or the cap could not give more; above: the data already holds more natural ones than the target (nothing natural is dropped).",
      ),
      table([...(compare ? ["run"] : []), "domain", "kind", "target", "realised", "natural", "synthesized", "samples", "status"], rows, {
        id: "synthesis-shares",
      }),
    ];
  }

  // ── Shards and quarantine ───────────────────────────────────────────────────────────────────
  function outputSection() {
    const shardRows = withRun("shards").map((s) => [
      ...(compare ? [s.run] : []),
      s.split,
      fmt(s.files),
      fmt(s.rows),
      fmt(s.documents),
      fmt(s.bytes),
      fmt(s.tokens),
      fmt(s.lossTokens),
    ]);
    const reasons = withRun("quarantine");
    const quarantineChart = chart(
      "quarantine",
      reasons,
      () =>
        Plot.plot({
          width: 900,
          height: 60 + 26 * reasons.length,
          marginLeft: 240,
          x: { label: "records", grid: true },
          y: { label: null },
          marks: [
            Plot.barX(reasons, {
              x: "count",
              y: (d) => `${compare ? `${d.run}: ` : ""}${d.stage} ${d.field || "(record)"}`,
              fill: "stage",
              sort: { y: "-x" },
              tip: true,
              title: (d) => d.example,
            }),
          ],
        }),
      "No records were quarantined.",
    );
    return section(
      "output",
      "Shards and quarantine",
      "Shard files per split (manifest), and quarantined records grouped by stage and field (numbered path parts shown as *), with one real reason each.",
      table([...(compare ? ["run"] : []), "split", "files", "rows", "documents", "bytes", "tokens", "loss tokens"], shardRows, {
        id: "shard-table",
      }),
      quarantineChart,
      reasons.length > 0
        ? table(
            [...(compare ? ["run"] : []), "stage", "field", "records", "example reason"],
            reasons.map((q) => [...(compare ? [q.run] : []), q.stage, q.field || "(record)", fmt(q.count), q.example]),
            { id: "quarantine-table" },
          )
        : null,
    );
  }

  // ── Curation ────────────────────────────────────────────────────────────────────────────────
  const STAGES = ["exact", "near", "decontaminate", "read", "filter", "selection"];
  const stageColor = { domain: STAGES, range: ["#4e79a7", "#f28e2b", "#e15759", "#bab0ac", "#76b7b2", "#59a14f"], legend: true };
  /** Counts are whole: no tick at 0.5 records; a small axis gets a tick per count. */
  const countAxis = (max) => (max <= 10 ? { ticks: Array.from({ length: max + 1 }, (_, i) => i), tickFormat: fmt } : {});
  /** Symlog count axis: ticks at 0 and powers of ten up to `max`. */
  const symlogTicks = (max) => [0, ...Array.from({ length: Math.floor(Math.log10(max)) + 1 }, (_, i) => 10 ** i)];

  /** What the config's filters and selection dropped, per rule, and what each scorer did: two small tables. */
  function filteringSection() {
    const withFiltering = runs.filter((r) => r.filtering);
    const label = (r) => (compare ? [r.summary.label] : []);
    const rules = withFiltering.flatMap((r) => r.filtering.byRule.map((c) => [...label(r), c.stage, c.rule, fmt(c.records)]));
    const kept = withFiltering
      .filter((r) => r.filtering.selection)
      .map((r) =>
        el(
          "p",
          { class: "meta", "data-selection": r.summary.label },
          `${compare ? `${r.summary.label}: ` : ""}selection kept ${fmt(r.filtering.selection.kept)} of ${fmt(r.filtering.selection.records)} records.`,
        ),
      );
    const scorers = withFiltering.flatMap((r) =>
      r.filtering.scorers.map((s) => [
        ...label(r),
        s.name,
        s.model,
        fmt(s.records),
        fmt(s.ok),
        fmt(s.malformed),
        fmt(s.failed),
        fmt(s.requests),
        fmt(s.tokens),
      ]),
    );
    const run = compare ? ["run"] : [];
    return section(
      "filtering",
      "Filters and selection",
      "Records dropped by each of the config's filters and by selection's rules (manifest filters and selection blocks; each is in filtered/*.jsonl with stage filter or selection, its rule and reason); and each model scorer's records, requests and tokens (manifest scoring block).",
      ...kept,
      rules.length > 0 ? table([...run, "stage", "rule", "dropped"], rules, { id: "filtering-rules" }) : null,
      scorers.length > 0
        ? table([...run, "scorer", "model", "records", "ok", "malformed", "failed", "requests", "tokens"], scorers, { id: "scoring-table" })
        : null,
    );
  }

  /** What dedup and decontamination removed: per domain and stage, the cluster sizes, a few entries. */
  function curationSection() {
    const withCuration = runs.filter((r) => r.curation);
    const counts = withCuration.flatMap((r) => r.curation.byDomainStage.map((c) => ({ ...c, run: r.summary.label })));
    const perDomain = new Map();
    for (const c of counts) perDomain.set(`${c.run}/${c.domain}`, (perDomain.get(`${c.run}/${c.domain}`) ?? 0) + c.records);
    const widest = Math.max(0, ...perDomain.values());
    const filteredChart = chart(
      "curation-filtered",
      counts,
      () =>
        Plot.plot({
          width: 900,
          height: 70 + 28 * new Set(counts.map((c) => `${c.run}/${c.domain}`)).size,
          marginLeft: 90,
          marginRight: compare ? 140 : 20,
          x: { label: "records removed", grid: true, ...countAxis(widest) },
          y: { label: null },
          fy: compare ? { label: null } : undefined,
          color: stageColor,
          marks: [
            Plot.barX(
              counts,
              Plot.stackX({
                x: "records",
                y: "domain",
                fy: compare ? "run" : undefined,
                fill: "stage",
                order: STAGES,
                tip: true,
                title: (d) => `${d.domain} ${d.stage}: ${fmt(d.records)} records removed`,
              }),
            ),
            Plot.ruleX([0]),
          ],
        }),
      "Curation removed no records.",
    );
    const sizes = withCuration.flatMap((r) => r.curation.clusterSizes.map((b) => ({ ...b, run: r.summary.label })));
    const most = Math.max(1, ...sizes.map((b) => b.clusters));
    const fewest = Math.max(1, Math.min(...sizes.filter((b) => b.clusters > 0).map((b) => b.clusters)));
    const sizeChart = chart(
      "cluster-sizes",
      sizes,
      () =>
        Plot.plot({
          width: 900,
          height: compare ? 420 : 260,
          marginRight: compare ? 140 : 20,
          x: { label: "cluster size (records)", domain: [...new Set(sizes.map((b) => b.label))] },
          // Pairs outnumber big clusters by orders of magnitude: a symlog axis keeps both visible.
          y:
            most / fewest > 50
              ? { label: "clusters", grid: true, type: "symlog", ticks: symlogTicks(most), tickFormat: fmt }
              : { label: "clusters", grid: true, ...countAxis(most) },
          fy: compare ? { label: null } : undefined,
          marks: [
            Plot.barY(sizes, {
              x: "label",
              y: "clusters",
              fy: compare ? "run" : undefined,
              fill: "#4e79a7",
              tip: true,
              title: (d) =>
                `size ${d.label}: ${fmt(d.clusters)} clusters, ${fmt(d.records)} records (${fmt(d.records - d.clusters)} removed)`,
            }),
            Plot.ruleY([0]),
          ],
        }),
      "No duplicate clusters.",
    );
    const summaries = withCuration.map((r) => {
      const c = r.curation;
      const masked = c.masked.turns > 0 ? `; ${fmt(c.masked.turns)} turns masked in ${fmt(c.masked.records)} records` : "";
      return el(
        "p",
        { class: "meta", "data-curation": r.summary.label },
        `${compare ? `${r.summary.label}: ` : ""}${fmt(c.filtered)} records filtered; ${fmt(c.clusters.count)} duplicate clusters of ${fmt(c.clusters.records)} records, the largest ${fmt(c.clusters.largest)}${masked}.`,
        el("br"),
        `Settings: ${c.settings}.`,
      );
    });
    const examples = withCuration.flatMap((r) => r.curation.examples.map((e) => ({ ...e, run: r.summary.label })));
    const matched = (e) =>
      e.stage === "decontaminate"
        ? `${e.benchmarkId ?? "?"} in ${e.benchmark ?? "?"}`
        : `kept ${e.keptId ?? "?"}${e.keptSource ? ` (${e.keptSource})` : ""}`;
    return section(
      "curation",
      "Curation: dedup and decontamination",
      "Records removed before tokenizing, per domain and stage (manifest curation block); duplicate clusters by size (the first record of each, in input order, stays); and a few entries of filtered/*.jsonl per stage and domain, with what each matched.",
      ...summaries,
      filteredChart,
      sizeChart,
      examples.length > 0
        ? table(
            [...(compare ? ["run"] : []), "stage", "domain", "id", "source", "matched", "reason"],
            examples.map((e) => [...(compare ? [e.run] : []), e.stage, e.domain, e.id, e.source, matched(e), e.reason]),
            { id: "filtered-table" },
          )
        : null,
    );
  }

  // ── Compare ─────────────────────────────────────────────────────────────────────────────────
  function compareSection() {
    const c = data.compare;
    const [a, b] = runs.map((r) => r.summary.label);
    const deltas = SUMMARY_FIELDS.map(([key, label]) => {
      const va = runs[0].summary[key];
      const vb = runs[1].summary[key];
      return [
        label,
        fmt(va),
        fmt(vb),
        el("span", { "data-delta": key, "data-value": vb - va }, `${vb - va >= 0 ? "+" : ""}${fmt(vb - va)}`),
      ];
    });
    const flips = c.transitions.filter((t) => t.classA !== t.classB || t.keptA !== t.keptB);
    const cells = [];
    for (const t of c.transitions) {
      const cell = cells.find((x) => x.classA === t.classA && x.classB === t.classB);
      if (cell) cell.turns += t.turns;
      else cells.push({ classA: t.classA, classB: t.classB, turns: t.turns });
    }
    const matrix = chart("class-transitions", cells, () =>
      Plot.plot({
        width: 560,
        height: 420,
        marginLeft: 100,
        marginBottom: 60,
        x: { label: `class in ${b}`, domain: CLASSES, tickRotate: -30 },
        y: { label: `class in ${a}`, domain: CLASSES },
        color: { type: "log", scheme: "blues", legend: true, label: "turns" },
        marks: [
          Plot.cell(cells, { x: "classB", y: "classA", fill: "turns", tip: true }),
          Plot.text(cells, { x: "classB", y: "classA", text: (d) => fmt(d.turns), fill: "black" }),
        ],
      }),
    );
    const decisionRows = [];
    for (const domain of [...new Set(c.transitions.map((t) => t.domain))]) {
      const of = c.transitions.filter((t) => t.domain === domain);
      const sum = (pred, key = "turns") => of.filter(pred).reduce((s, t) => s + t[key], 0);
      decisionRows.push([
        domain,
        fmt(sum(() => true)),
        fmt(sum((t) => t.classA !== t.classB)),
        fmt(sum((t) => t.keptA && !t.keptB)),
        fmt(sum((t) => !t.keptA && t.keptB)),
        fmt(sum((t) => t.keptA && !t.keptB, "obsTokens") - sum((t) => !t.keptA && t.keptB, "obsTokens")),
      ]);
    }
    return section(
      "compare",
      `Compare: ${a} → ${b}`,
      `Turns matched by (id, turn index): ${fmt(c.matched)} in both, ${fmt(c.onlyA)} only in ${a}, ${fmt(c.onlyB)} only in ${b}. ${fmt(flips.reduce((s, t) => s + t.turns, 0))} matched turns changed class or decision.`,
      table(["", a, b, "Δ (B − A)"], deltas, { id: "compare-table" }),
      el("h3", {}, "Mask rules that differ"),
      c.rulesDiff.length > 0
        ? el("pre", { class: "diff", id: "rules-diff" }, c.rulesDiff.join("\n"))
        : el("p", { id: "rules-diff" }, "The two runs' mask rules are the same."),
      el("h3", {}, "Class of each matched turn in A (rows) and B (columns)"),
      matrix,
      el("h3", {}, "Decisions that changed, per domain"),
      table(["domain", "matched turns", "class changed", "kept → masked", "masked → kept", "trained obs tokens lost (net)"], decisionRows, {
        id: "decision-table",
      }),
    );
  }

  // ── Example browser ─────────────────────────────────────────────────────────────────────────
  function exampleSection() {
    const PAGE = 50;
    const state = { run: 0, domain: "", class: "", decision: "", changed: false, offset: 0 };
    const list = el("div", { id: "example-list" });
    const detail = el("div", { id: "example-detail", class: "detail" }, el("p", { class: "empty" }, "Open a turn to see its tokens."));
    const count = el("p", { id: "example-count" });
    const options = (values) => [el("option", { value: "" }, "any"), ...values.map((v) => el("option", { value: v }, v))];
    const domains = [...new Set(runs.flatMap((r) => r.domains.map((d) => d.domain)))].sort();
    const change = (key) => (e) => {
      state[key] = e.target.type === "checkbox" ? e.target.checked : e.target.value;
      state.offset = 0;
      refresh();
    };
    const controls = el(
      "div",
      { class: "controls" },
      compare
        ? el(
            "label",
            {},
            "run ",
            el("select", { id: "filter-run", onchange: change("run") }, ...runs.map((r, i) => el("option", { value: i }, r.summary.label))),
          )
        : null,
      el("label", {}, "domain ", el("select", { id: "filter-domain", onchange: change("domain") }, ...options(domains))),
      el("label", {}, "class ", el("select", { id: "filter-class", onchange: change("class") }, ...options(CLASSES))),
      el("label", {}, "decision ", el("select", { id: "filter-decision", onchange: change("decision") }, ...options(["kept", "masked"]))),
      compare
        ? el("label", {}, el("input", { type: "checkbox", id: "filter-changed", onchange: change("changed") }), " changed in the other run")
        : null,
    );

    function matches(e) {
      return (
        (!state.domain || e.domain === state.domain) &&
        (!state.class || e.class === state.class) &&
        (!state.decision || (state.decision === "kept") === e.kept) &&
        (!state.changed || (e.other && (e.other.class !== e.class || e.other.kept !== e.kept)))
      );
    }

    async function fetchPage() {
      if (!data.live) {
        const all = runs[state.run].examples.filter(matches);
        return { total: all.length, examples: all.slice(state.offset, state.offset + PAGE), sampled: true };
      }
      const query = new URLSearchParams({
        run: state.run,
        domain: state.domain,
        class: state.class,
        decision: state.decision,
        changed: state.changed ? "1" : "",
        offset: state.offset,
        limit: PAGE,
      });
      const response = await fetch(`api/examples?${query}`);
      if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
      return { ...(await response.json()), sampled: false };
    }

    function showDetail(e) {
      const stats = `OL ${e.overlap.toFixed(2)} · Nov ${e.novelty.toFixed(2)} · Jac ${e.jaccard.toFixed(2)} · R ${e.lengthRatio.toFixed(2)} · HNov ${e.historyNovelty.toFixed(2)} · act ${fmt(e.actTokens)} / obs ${fmt(e.obsTokens)} tokens`;
      const decision = e.kept
        ? `kept (draw ${e.draw.toFixed(3)} < keep ratio ${e.keepRatio})`
        : `masked (draw ${e.draw.toFixed(3)} ≥ keep ratio ${e.keepRatio})`;
      const parts = [
        el("h3", {}, `${e.id} · turn ${e.turnIndex} · ${e.domain}`),
        el("p", { class: "decision" }, `${e.class}, ${decision}`),
        e.other ? el("p", { class: "other" }, `other run: ${e.other.class}, ${e.other.kept ? "kept" : "masked"}`) : null,
        el("p", { class: "stats" }, stats),
        el(
          "p",
          { class: "legend" },
          el("span", { class: "tok trained" }, "trained (loss 1)"),
          " ",
          el("span", { class: "tok masked" }, "masked (loss 0)"),
        ),
      ];
      if (e.tokens) {
        for (const role of ["action", "observation"]) {
          const runsOfRole = e.tokens.runs.filter((r) => r.role === role);
          parts.push(el("h4", {}, `${role} (${fmt(role === "action" ? e.tokens.actionTokens : e.tokens.observationTokens)} tokens)`));
          parts.push(
            el(
              "pre",
              { class: `tokens ${role}` },
              ...runsOfRole.map((r) => el("span", { class: `tok ${r.trained ? "trained" : "masked"}` }, r.text)),
            ),
          );
        }
        if (e.tokens.omittedTokens > 0) parts.push(el("p", { class: "note" }, `… ${fmt(e.tokens.omittedTokens)} more tokens not shown`));
      } else parts.push(el("p", { class: "note" }, `Tokens not shown: ${e.tokensNote ?? "unavailable"}.`));
      detail.replaceChildren(...parts.filter(Boolean));
      // On a narrow window the open turn is under the list: bring its top into view.
      if (detail.getBoundingClientRect().top > window.innerHeight - 80) detail.scrollIntoView({ block: "start" });
    }

    // Each refresh is numbered and only the latest may draw, so a slow answer to an older filter
    // never replaces a newer one; `data-refreshed` tells a test (or a person) which one is shown.
    let refreshes = 0;
    async function refresh() {
      const mine = ++refreshes;
      let page;
      try {
        page = await fetchPage();
      } catch (err) {
        count.textContent = `could not load examples: ${err.message}`;
        return;
      }
      if (mine !== refreshes) return;
      list.dataset.refreshed = String(mine);
      count.textContent = page.sampled
        ? `${fmt(page.total)} sampled turns match (up to ${data.examplesPerGroup ?? 6} per domain × class × decision are embedded; serve the dashboard to browse every turn).`
        : `${fmt(page.total)} turns match.`;
      const rows = page.examples.map((e) =>
        el(
          "tr",
          { class: "example", "data-domain": e.domain, "data-class": e.class, "data-kept": e.kept, onclick: () => showDetail(e) },
          cell("td", e.domain),
          idCell(e.id),
          cell("td", e.turnIndex),
          cell("td", e.class),
          cell("td", e.kept ? "kept" : "masked"),
          cell("td", fmt(e.obsTokens)),
          compare ? cell("td", e.other ? `${e.other.class}, ${e.other.kept ? "kept" : "masked"}` : "–") : null,
        ),
      );
      const pager = el(
        "div",
        { class: "pager" },
        el(
          "button",
          {
            id: "page-prev",
            disabled: state.offset === 0 ? "" : null,
            onclick: () => {
              state.offset = Math.max(0, state.offset - PAGE);
              refresh();
            },
          },
          "‹ previous",
        ),
        ` ${fmt(page.total === 0 ? 0 : state.offset + 1)}–${fmt(Math.min(page.total, state.offset + PAGE))} `,
        el(
          "button",
          {
            id: "page-next",
            disabled: state.offset + PAGE >= page.total ? "" : null,
            onclick: () => {
              state.offset += PAGE;
              refresh();
            },
          },
          "next ›",
        ),
      );
      list.replaceChildren(
        el(
          "table",
          { id: "example-table" },
          el(
            "thead",
            {},
            el(
              "tr",
              {},
              ...["domain", "id", "turn", "class", "decision", "obs tokens", ...(compare ? ["other run"] : [])].map((h) => cell("th", h)),
            ),
          ),
          el("tbody", {}, ...rows),
        ),
        pager,
      );
    }
    refresh();
    return section(
      "examples",
      "Example browser",
      "Filter turns by domain, class and decision; click one to see its action and observation with the loss mask over the tokens (trained highlighted, masked dim).",
      controls,
      count,
      el("div", { class: "browser" }, list, detail),
    );
  }

  // ── Contents: sections grouped into views, one view shown at a time ──────────────────────────
  // Each view is a tab of the contents bar, and each section of a view a link under it. A link's
  // target is in the address (#classes, #view-masking, #all), so a view can be bookmarked, the
  // back button goes back, and an old link to a section still lands on it. "All" shows every view
  // on one page (to search the whole of it, or print it: print shows every view anyway).
  const VIEWS = [
    ...(ablation ? [["ablation", "Ablation", [["ablation", "Ablation", ablationSection]]]] : []),
    [
      "overview",
      "Overview",
      [
        ["summary", "Summary", summarySection],
        ...(compare ? [["compare", "Compare", compareSection]] : []),
        ["tokens", "Tokens per domain", tokenSection],
        ["output", "Shards & quarantine", outputSection],
      ],
    ],
    [
      "masking",
      "Masking",
      [
        ["statistics", "Turn statistics", histogramSection],
        ["thresholds", "Thresholds", cumulativeSection],
        ["classes", "Classes and kept share", classSection],
        ...(novel ? [["corpus-novelty", "Corpus novelty", noveltySection]] : []),
      ],
    ],
    [
      "curation",
      curated || filtering ? (mixed ? "Curation & mixture" : "Curation") : "Mixture",
      [
        ...(curated ? [["curation", "Dedup & decontamination", curationSection]] : []),
        ...(filtering ? [["filtering", "Filters & selection", filteringSection]] : []),
        ...(mixed ? [["mixture", "Mixture", mixtureSection]] : []),
      ],
    ],
    ["controls", "Controls", controlled ? [["controls", "Controls", controlsSection]] : []],
    ["pii", "Personal data", redacted ? [["pii", "Personal data", piiSection]] : []],
    ["examples", "Examples", [["examples", "Example browser", exampleSection]]],
  ].filter(([, , sections]) => sections.length > 0);

  const main = document.getElementById("app");
  const tabs = el("div", { class: "tabs" });
  const sublinks = el("div", { class: "sublinks" });
  const nav = el("nav", { id: "contents", "aria-label": "Dashboard sections" }, tabs, sublinks);
  const views = [];
  for (const [key, label, sections] of VIEWS) {
    // A view of one section is reached by the section's own anchor; a view of several by its own.
    const anchor = sections.length === 1 ? sections[0][0] : `view-${key}`;
    const view = el("div", { class: "view", id: sections.length === 1 ? null : anchor, "data-view": key });
    for (const [, , build] of sections) view.append(build());
    const tab = el("a", { class: "tab", href: `#${anchor}`, "data-view": key }, label);
    const links =
      sections.length === 1
        ? null
        : el("span", { class: "view-links", "data-view": key }, ...sections.map(([id, text]) => el("a", { href: `#${id}` }, text)));
    views.push({ key, view, tab, links });
    tabs.append(tab);
    if (links) sublinks.append(links);
    main.append(view);
  }
  const allTab = el("a", { class: "tab", href: "#all", "data-view": "all" }, "All");
  tabs.append(allTab);
  main.prepend(nav);

  /** Shows one view (or every view), marks its tab, and lists its sections under the tabs. */
  function showView(key) {
    for (const v of views) {
      v.view.hidden = key !== "all" && v.key !== key;
      const current = v.key === key;
      v.tab.classList.toggle("current", current);
      if (current) v.tab.setAttribute("aria-current", "page");
      else v.tab.removeAttribute("aria-current");
      if (v.links) v.links.hidden = !current;
    }
    allTab.classList.toggle("current", key === "all");
    if (key === "all") allTab.setAttribute("aria-current", "page");
    else allTab.removeAttribute("aria-current");
    sublinks.hidden = !views.some((v) => v.links && !v.links.hidden);
    document.body.dataset.view = key;
    // Sections scrolled to stop below the sticky contents bar, whatever its height now.
    document.documentElement.style.setProperty("--contents-height", `${nav.offsetHeight}px`);
  }

  /**
   * Follows the address's #target: a view's anchor shows the view from its top; a section's shows
   * its view and scrolls to the section, focused, so the keyboard goes on from there.
   */
  function follow(scroll) {
    const id = decodeURIComponent(location.hash.slice(1));
    if (id === "all") {
      showView("all");
      if (scroll) window.scrollTo(0, 0);
      return;
    }
    const target = id ? document.getElementById(id) : null;
    const owner = target && views.find((v) => v.view.contains(target));
    showView(owner ? owner.key : views[0].key);
    if (!owner || !scroll) return;
    // A view's anchor, or its first section, shows the view from the top of the page.
    const first = owner.view.querySelector("section");
    const section = target === owner.view ? first : (target.closest("section") ?? target);
    if (section === first) window.scrollTo(0, 0);
    else section.scrollIntoView({ block: "start" });
    section.setAttribute("tabindex", "-1");
    section.focus({ preventScroll: true });
  }
  // The contents bar's links go through follow() even when the address does not change (a tab
  // clicked again goes back to its top); the back and forward buttons, and links elsewhere, come
  // in as hashchange.
  nav.addEventListener("click", (event) => {
    const link = event.target.closest("a[href^='#']");
    if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    if (link.getAttribute("href") !== location.hash) history.pushState(null, "", link.getAttribute("href"));
    follow(true);
  });
  window.addEventListener("hashchange", () => follow(true));
  window.addEventListener("resize", () => document.documentElement.style.setProperty("--contents-height", `${nav.offsetHeight}px`));
  follow(true);

  main.append(
    el(
      "footer",
      {},
      `lwm-data dashboard · aggregated with DuckDB in ${data.buildSeconds.toFixed(2)} s · ${data.live ? "served live" : "saved page"}`,
    ),
  );
  // Opened at an address with a #target, the browser scrolls to it once the page has loaded, not
  // knowing the contents bar covers the top: follow it again then, and only then say ready.
  if (document.readyState === "complete") document.body.dataset.ready = "true";
  else
    window.addEventListener(
      "load",
      () => {
        follow(true);
        document.body.dataset.ready = "true";
      },
      { once: true },
    );
})();
