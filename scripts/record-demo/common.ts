/**
 * Shared by the demo-data recorders (scripts/record-demo/<domain>.ts): where recordings go, a
 * fixed clock, and scratch folders with fixed names, so two recordings of the same session differ
 * only where the real programs themselves differ.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));

/** The committed demo data: `data/demo/<domain>/…` and PROVENANCE.md. */
export const DEMO_DIR = join(ROOT, "data/demo");

/**
 * The fixed clock every recording uses instead of the wall clock (2026-01-15T12:00:00Z), for
 * timestamps in headers and logs; event times are counted from it in fixed steps.
 */
export const FIXED_EPOCH_SECONDS = 1_768_478_400;
export const FIXED_EPOCH_ISO = new Date(FIXED_EPOCH_SECONDS * 1000).toISOString();

/**
 * A fresh scratch folder with a fixed path (`/tmp/lwm-demo-record/<name>`): paths printed by the
 * programs under record (git, a shell prompt, an MCP server) are the same on every recording.
 */
export function freshWorkdir(name: string): string {
  const dir = join("/tmp/lwm-demo-record", name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Writes one demo file (path relative to data/demo/) and says so. */
export function writeDemoFile(relativePath: string, content: string | Uint8Array): string {
  const path = join(DEMO_DIR, relativePath);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  console.log(`  wrote ${relative(ROOT, path)} (${typeof content === "string" ? Buffer.byteLength(content) : content.byteLength} bytes)`);
  return path;
}
