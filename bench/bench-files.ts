import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;

/** A results file, formatted the way the project's formatter writes JSON (bench/** is linted). */
export function writeResultsJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
  const biome = join(ROOT, "node_modules/.bin/biome");
  if (existsSync(biome)) spawnSync(biome, ["format", "--write", path], { cwd: ROOT, stdio: "ignore" });
}

/**
 * Writes a benchmark's section of docs/benchmarks.md between its start and end markers
 * (`<!-- <name>:start … -->` / `<!-- <name>:end -->`), leaving the prose around it alone; a
 * section not there yet is appended under `heading`.
 */
export function replaceDocsSection(docsPath: string, name: string, writer: string, lines: string[], heading = `## ${name}`): void {
  const start = `<!-- ${name}:start (written by ${writer}) -->`;
  const end = `<!-- ${name}:end -->`;
  const section = [start, ...lines, end].join("\n");
  mkdirSync(dirname(docsPath), { recursive: true });
  const current = existsSync(docsPath) ? readFileSync(docsPath, "utf8") : "# Benchmarks\n";
  const at = current.indexOf(`<!-- ${name}:start`);
  const until = current.indexOf(end);
  writeFileSync(
    docsPath,
    at >= 0 && until > at
      ? `${current.slice(0, at)}${section}${current.slice(until + end.length)}`
      : `${current.trimEnd()}\n\n${heading}\n\n${section}\n`,
  );
}

/** Ends a benchmark on a bad argument: the message on stderr, prefixed by the script, exit 2. */
export function argumentError(script: string, message: string): never {
  console.error(`${script}: ${message}`);
  process.exit(2);
}

/** A command-line value that must be a positive integer (`--repeat 3`), or argumentError. */
export function positiveArgument(script: string, name: string, text: string): number {
  const n = Number(text);
  return Number.isInteger(n) && n >= 1 ? n : argumentError(script, `${name} must be a positive integer, got "${text}"`);
}
