/**
 * Deterministic synthetic corpus for the pipeline benchmark: canonical JSONL trajectories of all
 * seven domains, shaped by the measured parameters in params.ts, split into several files per
 * domain so a run has several tasks.
 *
 *   node bench/synthetic/generate.ts --bytes 50MB --out DIR [--seed N]
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DOMAINS, type Domain } from "../../src/core/trajectory.ts";
import { androidTrajectory } from "./domains/android.ts";
import { mcpTrajectory } from "./domains/mcp.ts";
import { osTrajectory } from "./domains/os.ts";
import { searchTrajectory } from "./domains/search.ts";
import { sweTrajectory } from "./domains/swe.ts";
import { terminalTrajectory } from "./domains/terminal.ts";
import { webTrajectory } from "./domains/web.ts";
import { type CanonicalRecord, type DomainParams, PARAMS } from "./params.ts";
import { Rng, seedOf } from "./random.ts";

const GENERATORS: Record<Domain, (rng: Rng, id: string, p: DomainParams) => CanonicalRecord> = {
  swe: sweTrajectory,
  terminal: terminalTrajectory,
  web: webTrajectory,
  search: searchTrajectory,
  mcp: mcpTrajectory,
  android: androidTrajectory,
  os: osTrajectory,
};

export interface CorpusFile {
  path: string;
  domain: Domain;
  bytes: number;
  trajectories: number;
}

export interface Corpus {
  dir: string;
  files: CorpusFile[];
  bytes: number;
  trajectories: number;
}

export interface CorpusOptions {
  dir: string;
  /** Total size to write, in bytes (the result overshoots by at most one record per file). */
  bytes: number;
  seed?: number;
}

/** About 16 files in all, so there are tasks to spread over workers; never files under 256 KiB. */
function fileTarget(total: number): number {
  return Math.max(total / 16, 256 << 10);
}

function writeFile(path: string, domain: Domain, target: number, rng: Rng, idPrefix: string): CorpusFile {
  const fd = openSync(path, "w");
  let bytes = 0;
  let trajectories = 0;
  let pending: string[] = [];
  let pendingBytes = 0;
  try {
    while (bytes < target) {
      const line = `${JSON.stringify(GENERATORS[domain](rng, `${idPrefix}-${trajectories}`, PARAMS[domain]))}\n`;
      const size = Buffer.byteLength(line);
      pending.push(line);
      pendingBytes += size;
      bytes += size;
      trajectories += 1;
      if (pendingBytes >= 1 << 20) {
        writeSync(fd, pending.join(""));
        pending = [];
        pendingBytes = 0;
      }
    }
    writeSync(fd, pending.join(""));
  } finally {
    closeSync(fd);
  }
  return { path, domain, bytes, trajectories };
}

/** Writes `<domain>-NNNNN.jsonl` files into `dir`; same options → same bytes. */
export function generateCorpus({ dir, bytes, seed = 1 }: CorpusOptions): Corpus {
  mkdirSync(dir, { recursive: true });
  const files: CorpusFile[] = [];
  for (const domain of DOMAINS) {
    const domainBytes = bytes * PARAMS[domain].share;
    const count = Math.max(1, Math.round(domainBytes / fileTarget(bytes)));
    for (let i = 0; i < count; i++) {
      const path = join(dir, `${domain}-${String(i).padStart(5, "0")}.jsonl`);
      files.push(writeFile(path, domain, domainBytes / count, new Rng(seedOf(seed, domain, i)), `syn-${seed}-${domain}-${i}`));
    }
  }
  return {
    dir,
    files,
    bytes: files.reduce((sum, f) => sum + f.bytes, 0),
    trajectories: files.reduce((sum, f) => sum + f.trajectories, 0),
  };
}

const UNITS: Record<string, number> = { "": 1, B: 1, KB: 1e3, MB: 1e6, GB: 1e9, KIB: 1024, MIB: 1024 ** 2, GIB: 1024 ** 3 };

/** `50MB` (decimal), `64MiB` (binary), `1e6` or a plain number of bytes. */
export function parseBytes(text: string): number {
  const match = /^\s*([\d.e+]+)\s*([kmg]i?b|b)?\s*$/i.exec(text);
  const unit = UNITS[(match?.[2] ?? "").toUpperCase()];
  const value = Number(match?.[1]);
  if (!match || unit === undefined || !Number.isFinite(value) || value <= 0)
    throw new Error(`not a size: "${text}" (e.g. 50MB, 64MiB, 1000000)`);
  return Math.round(value * unit);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { bytes: { type: "string", default: "50MB" }, out: { type: "string" }, seed: { type: "string", default: "1" } },
  });
  if (!values.out) {
    console.error("usage: node bench/synthetic/generate.ts --bytes 50MB --out DIR [--seed N]");
    process.exit(2);
  }
  let bytes: number;
  try {
    bytes = parseBytes(values.bytes);
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
  const started = performance.now();
  const corpus = generateCorpus({ dir: values.out, bytes, seed: Number(values.seed) });
  const seconds = (performance.now() - started) / 1000;
  for (const f of corpus.files)
    console.log(`${f.path}  ${f.domain.padEnd(8)} ${(f.bytes / 1e6).toFixed(2).padStart(8)} MB  ${f.trajectories} trajectories`);
  console.log(
    `${corpus.files.length} files, ${(corpus.bytes / 1e6).toFixed(1)} MB, ${corpus.trajectories} trajectories in ${seconds.toFixed(1)} s`,
  );
}
