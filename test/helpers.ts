import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
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
