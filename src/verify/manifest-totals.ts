import { type ListedFile, type ListedKind, type OutputManifest, SFT_MANIFEST_FORMAT, valueAt } from "./output-manifest.ts";
import { MANIFEST_FILE, type VerifyProblem } from "./problems.ts";

/** A total the manifest states, and what the manifest's own parts add up to. */
interface TotalClaim {
  field: string;
  computed: number;
  /** What `computed` is the sum of, for the message. */
  from: string;
  /** A field the manifest may leave out when it is 0 (a stage that removed nothing). */
  zeroIfAbsent?: boolean;
  /** `computed` is one value, not a sum ("but X is N"). */
  single?: boolean;
}

const sum = (values: Iterable<number>): number => {
  let total = 0;
  for (const value of values) total += value;
  return total;
};

function sumOf(files: readonly ListedFile[], kind: ListedKind, pick: (file: ListedFile) => number | undefined): number {
  return sum(files.filter((file) => file.kind === kind).map((file) => pick(file) ?? 0));
}

/** Sum of one numeric field over the values of a `{ name: { field: n } }` object (or one level deeper). */
function sumOverEntries(json: unknown, field: string, depth = 1): number {
  if (typeof json !== "object" || json === null) return 0;
  return sum(
    Object.values(json).map((value) => {
      if (depth > 1) return sumOverEntries(value, field, depth - 1);
      const n = valueAt(value, field);
      return typeof n === "number" ? n : 0;
    }),
  );
}

const num = (json: unknown, dotted: string): number => {
  const value = valueAt(json, dotted);
  return typeof value === "number" ? value : 0;
};

/** Per-split totals (manifest v3) must add up like the per-domain ones. */
function splitClaims(json: OutputManifest["json"], samplesField: string): TotalClaim[] {
  if (json.splits === undefined) return [];
  return [
    { field: samplesField, computed: sumOverEntries(json.splits, "samples"), from: "the splits' samples" },
    { field: "tokens.total", computed: sumOverEntries(json.splits, "tokens"), from: "the splits' tokens" },
    { field: "tokens.loss", computed: sumOverEntries(json.splits, "loss_tokens"), from: "the splits' loss_tokens" },
  ];
}

/** Samples in shards: one per row, or `documents` per packed row. */
const documentsOf = (file: ListedFile) => file.documents ?? file.rows;

const documentsField = (json: OutputManifest["json"]) =>
  valueAt(json, "counts.documents") === undefined ? "counts.samples_out" : "counts.documents";

function cptClaims(m: OutputManifest): TotalClaim[] {
  const { json, files } = m;
  return [
    { field: "tokens.total", computed: sumOf(files, "shard", (f) => f.tokens), from: "the shards' tokens" },
    { field: "tokens.loss", computed: sumOf(files, "shard", (f) => f.lossTokens), from: "the shards' loss_tokens" },
    // Unpacked, a row is a document: a sample, or a mixture's repeat of one (manifests from
    // before documents were counted had one row per sample). Packing puts several in a row.
    ...(m.packed ? [] : [{ field: documentsField(json), computed: sumOf(files, "shard", (f) => f.rows), from: "the shards' rows" }]),
    ...(valueAt(json, "counts.documents") === undefined
      ? []
      : [{ field: "counts.documents", computed: sumOf(files, "shard", documentsOf), from: "the shards' documents" }]),
    { field: "counts.quarantined", computed: sumOf(files, "quarantine", (f) => f.rows), from: "the quarantine files' entries" },
    // Manifests from before curation have no counts.filtered: records were written or quarantined.
    valueAt(json, "counts.filtered") === undefined
      ? {
          field: "counts.records_in",
          computed: num(json, "counts.samples_out") + num(json, "counts.quarantined"),
          from: "counts.samples_out + counts.quarantined",
        }
      : {
          field: "counts.records_in",
          computed:
            num(json, "counts.samples_out") +
            num(json, "counts.quarantined") +
            num(json, "counts.filtered") +
            num(json, "counts.dropped_by_mixture"),
          from: "counts.samples_out + counts.quarantined + counts.filtered + counts.dropped_by_mixture",
        },
    { field: "counts.samples_out", computed: sumOverEntries(json.domains, "samples"), from: "the domains' samples" },
    { field: "tokens.total", computed: sumOverEntries(json.domains, "tokens"), from: "the domains' tokens" },
    { field: "tokens.loss", computed: sumOverEntries(json.domains, "loss_tokens"), from: "the domains' loss_tokens" },
    ...splitClaims(json, "counts.samples_out"),
  ];
}

function cptStageClaims(m: OutputManifest): TotalClaim[] {
  const byStage = valueAt(m.json, "counts.quarantined_by_stage");
  const stages = typeof byStage === "object" && byStage !== null ? Object.values(byStage) : [];
  return [
    {
      field: "counts.quarantined",
      computed: sum(stages.map((n) => (typeof n === "number" ? n : 0))),
      from: "counts.quarantined_by_stage",
    },
    // One stats row per masked turn: the turn counts are that table's row count.
    {
      field: "masking.stats_files rows",
      computed: sumOverEntries(valueAt(m.json, "masking.by_domain_class"), "turns", 2),
      from: "masking.by_domain_class turns",
    },
  ];
}

const keysOf = (json: unknown): string[] => (typeof json === "object" && json !== null ? Object.keys(json) : []);
const numbersIn = (json: unknown): number[] =>
  typeof json === "object" && json !== null ? Object.values(json).map((n) => (typeof n === "number" ? n : 0)) : [];

/**
 * Curation: counts.filtered is its stages' sum and the filtered files' entries; the curation block
 * repeats those counts per stage, splits them per domain, and its cluster histogram adds up.
 */
function curationClaims(m: OutputManifest): TotalClaim[] {
  const { json, files } = m;
  const claims: TotalClaim[] = [];
  const filtered = valueAt(json, "counts.filtered");
  const curation = valueAt(json, "curation");
  if (filtered === undefined && curation === undefined) return claims;
  claims.push({ field: "counts.filtered", computed: sumOf(files, "filtered", (f) => f.rows), from: "the filtered files' entries" });
  const byStage = valueAt(json, "counts.filtered_by_stage");
  if (byStage !== undefined) claims.push({ field: "counts.filtered", computed: sum(numbersIn(byStage)), from: "counts.filtered_by_stage" });
  if (curation === undefined) return claims;
  claims.push({ field: "curation.filtered", computed: num(json, "counts.filtered"), from: "counts.filtered", single: true });
  const curationByStage = valueAt(json, "curation.by_stage");
  for (const stage of new Set([...keysOf(byStage), ...keysOf(curationByStage)]))
    claims.push({
      field: `curation.by_stage.${stage}`,
      computed: num(json, `counts.filtered_by_stage.${stage}`),
      from: `counts.filtered_by_stage.${stage}`,
      zeroIfAbsent: true,
      single: true,
    });
  const byDomain = valueAt(json, "curation.by_domain");
  for (const stage of keysOf(curationByStage))
    claims.push({
      field: `curation.by_stage.${stage}`,
      computed: sum(keysOf(byDomain).map((domain) => num(byDomain, `${domain}.${stage}`))),
      from: `the domains' ${stage} (curation.by_domain)`,
    });
  // sizes: cluster size → clusters of that size.
  const sizes = Object.entries(valueAt(json, "curation.clusters.sizes") ?? {}).map(([size, n]) => ({
    size: Number(size),
    clusters: typeof n === "number" ? n : 0,
  }));
  claims.push(
    { field: "curation.clusters.count", computed: sum(sizes.map((s) => s.clusters)), from: "curation.clusters.sizes" },
    {
      field: "curation.clusters.records",
      computed: sum(sizes.map((s) => s.size * s.clusters)),
      from: "size × clusters over curation.clusters.sizes",
    },
    {
      field: "curation.clusters.largest",
      computed: Math.max(0, ...sizes.filter((s) => s.clusters > 0).map((s) => s.size)),
      from: "the largest size in curation.clusters.sizes",
      single: true,
    },
  );
  return claims;
}

function sftClaims(m: OutputManifest): TotalClaim[] {
  const { json, files } = m;
  return [
    { field: "tokens.total", computed: sumOf(files, "shard", (f) => f.tokens), from: "the shards' tokens" },
    { field: "tokens.loss", computed: sumOf(files, "shard", (f) => f.lossTokens), from: "the shards' loss_tokens" },
    { field: "counts.kept", computed: sumOf(files, "shard", documentsOf), from: "the shards' samples" },
    { field: "counts.quarantined", computed: sumOf(files, "quarantine", (f) => f.rows), from: "the quarantine file's entries" },
    {
      field: "counts.prompts",
      computed: num(json, "counts.kept") + num(json, "counts.rejected") + num(json, "counts.failed"),
      from: "counts.kept + counts.rejected + counts.failed",
    },
    { field: "counts.prompts", computed: sumOverEntries(json.by_domain, "prompts"), from: "by_domain prompts" },
    { field: "counts.kept", computed: sumOverEntries(json.by_domain, "kept"), from: "by_domain kept" },
    { field: "counts.candidates", computed: sumOverEntries(json.by_domain, "candidates"), from: "by_domain candidates" },
    ...splitClaims(json, "counts.kept"),
  ];
}

/** The candidates table has a row per candidate, plus one per failed prompt (candidate_index −1). */
function sftTableClaim(m: OutputManifest): TotalClaim[] {
  const rows = num(m.json, "counts.candidates") + num(m.json, "counts.failed");
  return [{ field: "candidates_table rows", computed: rows, from: "counts.candidates + counts.failed" }];
}

/** What the manifest states for a claim: a field, or for file lists the sum of their rows. */
function claimed(m: OutputManifest, claim: TotalClaim): number | undefined {
  const { field } = claim;
  if (field === "masking.stats_files rows") return sumOf(m.files, "stats", (f) => f.rows);
  if (field === "candidates_table rows") return sumOf(m.files, "candidates", (f) => f.rows);
  const value = valueAt(m.json, field);
  if (value === undefined && claim.zeroIfAbsent) return 0;
  return typeof value === "number" ? value : undefined;
}

/** The manifest's totals against the sums of its own parts (files, domains, stages). */
export function totalsProblems(m: OutputManifest): VerifyProblem[] {
  const claims =
    m.format === SFT_MANIFEST_FORMAT
      ? [...sftClaims(m), ...sftTableClaim(m)]
      : [...cptClaims(m), ...cptStageClaims(m), ...curationClaims(m)];
  const problems: VerifyProblem[] = [];
  const reportedMissing = new Set<string>();
  for (const claim of claims) {
    const value = claimed(m, claim);
    if (value === undefined) {
      if (!reportedMissing.has(claim.field))
        problems.push({ path: MANIFEST_FILE, check: "manifest", message: `${claim.field} is missing or not a number` });
      reportedMissing.add(claim.field);
    } else if (value !== claim.computed) {
      problems.push({
        path: MANIFEST_FILE,
        check: "totals",
        expected: claim.computed,
        actual: value,
        message: `${claim.field} is ${value}, but ${claim.from} ${claim.single ? "is" : "sum to"} ${claim.computed}`,
      });
    }
  }
  return problems;
}
