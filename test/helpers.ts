import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "vitest";
import type { NormalizeSettings } from "../src/normalize/normalizer.ts";
import type { Reader, ReaderOptions, ReadItem } from "../src/read/reader.ts";

export const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
export const DEMO_CONFIG = join(ROOT, "configs/demo.yaml");

/** The demo data's folders, one per domain (data/demo/<domain>/; every file in one is an input). */
export const DEMO_DOMAINS = ["terminal", "swe", "mcp", "search", "web", "android", "os"] as const;

/** The demo's inputs as config YAML list items (absolute paths), as configs/demo.yaml lists them. */
export function demoInputsYaml(): string[] {
  return DEMO_DOMAINS.map((domain) => `  - path: ${join(ROOT, "data/demo", domain)}/*`);
}

export function tempDir(prefix = "lwm-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes a job config into a fresh folder and returns its path. */
export function writeConfig(yaml: string, dir = tempDir()): string {
  const path = join(dir, "job.yaml");
  writeFileSync(path, yaml);
  return path;
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** Reader options whose line limit no test record comes near. */
export const READ_OPTIONS: ReaderOptions = { maxLineBytes: 1 << 24 };

/** Every item a reader reads from one file (with READ_OPTIONS unless given others). */
export function readItems(reader: Reader, path: string, options: ReaderOptions = READ_OPTIONS): Promise<ReadItem[]> {
  return collect(reader.read(path, options));
}

/** The rows of a JSONL file (a path from the repository root): each non-blank line, parsed. */
export function jsonlRows(file: string): Record<string, unknown>[] {
  return readFileSync(join(ROOT, file), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

/** Rows as JSONL text, one `JSON.stringify` line each (a row's hash id depends on its text). */
export function jsonlText(rows: readonly unknown[]): string {
  return rows.map((row) => `${JSON.stringify(row)}\n`).join("");
}

/**
 * What a read gives, its sources aside (a JSONL line, an array element and a Parquet or Arrow row
 * are named differently): trajectories and documents whole but for their source; a quarantine
 * entry as `{ quarantine: reason }`, or with `quarantines: "entry"`, whole but for its source and excerpt.
 */
export function withoutSources(items: readonly ReadItem[], quarantines: "reason" | "entry" = "reason"): unknown[] {
  return items.map((item) => {
    if (item.kind === "trajectory") {
      const { source: _source, ...rest } = item.trajectory;
      return rest;
    }
    if (item.kind === "document") {
      const { source: _source, ...rest } = item.document;
      return rest;
    }
    if (quarantines === "reason") return { quarantine: item.entry.reason };
    const { source: _source, excerpt: _excerpt, ...rest } = item.entry;
    return rest;
  });
}

/** Normalization with full trees, no redaction and no size caps: the observations as the normalizers make them. */
export const UNCAPPED_NORMALIZE_SETTINGS: NormalizeSettings = {
  tree_target: "full",
  collapse_empty_wrappers: true,
  redact_secrets: false,
  invalid_utf8: "repair",
  max_observation_chars: { mcp: 1e9, search: 1e9, terminal: 1e9, swe: 1e9, android: 1e9, web: 1e9, os: 1e9 },
};

/** The files under a folder, at any depth, sorted. */
function filesIn(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/**
 * Expects `reader`'s sniff to refuse every other format's fixture: each file of data/demo, of
 * test/fixtures/handmade/* but the reader's own folder (`own`), and of the folders in `also`
 * (paths from the repository root). It is given each file's first 64 KiB from each of its first
 * line starts, as detection probes them, or with `at: "head"` from the file's start only.
 * Returns how many files were checked; `atLeast` fails the test when fewer were.
 */
export function expectClaimsNoOtherFixture(
  reader: Pick<Reader, "sniff">,
  { own, also = [], at = "line-starts", atLeast = 1 }: { own: string; also?: string[]; at?: "line-starts" | "head"; atLeast?: number },
): number {
  const handmade = join(ROOT, "test/fixtures/handmade");
  const dirs = [
    join(ROOT, "data/demo"),
    ...readdirSync(handmade)
      .filter((name) => name !== own)
      .map((name) => join(handmade, name)),
    ...also.map((dir) => join(ROOT, dir)),
  ];
  let checked = 0;
  for (const dir of dirs)
    for (const path of filesIn(dir)) {
      const text = readFileSync(path).subarray(0, 65536).toString("utf8");
      const starts = at === "head" ? [0] : [0, ...[...text.matchAll(/\n/g)].slice(0, 8).map((m) => (m.index as number) + 1)];
      for (const start of starts) expect(reader.sniff(text.slice(start), path), `${path}@${start}`).toBe(false);
      checked += 1;
    }
  expect(checked).toBeGreaterThanOrEqual(atLeast);
  return checked;
}

const CLI = join(ROOT, "bin/lwm-data.js");
const execFileAsync = promisify(execFile);

/** The counts of a run's manifest.json that the end-to-end tests check. */
export interface ManifestCounts {
  records_in: number;
  samples_out: number;
  quarantined: number;
  filtered: number;
  quarantined_by_stage: Record<string, number>;
}

/**
 * `lwm-data validate`, then `lwm-data run`, on a job config (node_modules/.bin on PATH, as `npm`
 * puts it). Expects validate to warn of nothing and the run's counts to add up (records in = samples
 * out + quarantined + filtered); returns validate's output and the manifest (in `outDir`, the config's `out/` unless given).
 */
export async function validateAndRun(
  config: string,
  outDir = join(dirname(config), "out"),
): Promise<{ validate: string; manifest: { counts: ManifestCounts; inputs: { path: string }[] } }> {
  const env = { ...process.env, PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH ?? ""}` };
  const validate = await execFileAsync(process.execPath, [CLI, "validate", config], { env });
  expect(validate.stdout).not.toMatch(/warning/);
  await execFileAsync(process.execPath, [CLI, "run", config, "--progress", "none"], { env });
  const manifest = JSON.parse(readFileSync(join(outDir, "manifest.json"), "utf8"));
  const { counts } = manifest;
  expect(counts.records_in).toBe(counts.samples_out + counts.quarantined + counts.filtered);
  return { validate: validate.stdout, manifest };
}
