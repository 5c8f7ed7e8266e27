import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
export const DEMO_CONFIG = join(ROOT, "configs/demo.yaml");

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
