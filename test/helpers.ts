import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { NormalizeSettings } from "../src/normalize/normalizer.ts";

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

/** Normalization with full trees, no redaction and no size caps: the observations as the normalizers make them. */
export const UNCAPPED_NORMALIZE_SETTINGS: NormalizeSettings = {
  tree_target: "full",
  collapse_empty_wrappers: true,
  redact_secrets: false,
  invalid_utf8: "repair",
  max_observation_chars: { mcp: 1e9, search: 1e9, terminal: 1e9, swe: 1e9, android: 1e9, web: 1e9, os: 1e9 },
};
