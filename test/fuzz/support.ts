import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { Worker } from "node:worker_threads";
import fc from "fast-check";
import { parse } from "yaml";
import type { NormalizeSettings } from "../../src/normalize/normalizer.ts";
import { ROOT } from "../helpers.ts";
import type { Job, JobResult } from "./properties.ts";

/**
 * Fuzz campaign settings. The default run is small and deterministic (fixed seed) so it fits in
 * CI; FUZZ_SEED / FUZZ_RUNS / FUZZ_SECONDS make a longer one (test/fuzz/campaign.sh).
 */
export const FUZZ = {
  seed: envInt("FUZZ_SEED", 20_250_611),
  runs: envInt("FUZZ_RUNS", 100),
  /**
   * Wall-clock budget per property, shrinking included: runs stop at the budget or at FUZZ_RUNS,
   * whichever comes first (a budget cut counts as a pass; a failure found is still reported).
   */
  secondsPerProperty: envInt("FUZZ_SECONDS", 20),
  /**
   * Per-record limit: reading one record, or normalizing one trajectory, may take this long. In
   * `npm test` it is a hang net, not a judgement of speed (issue 36): the saved 16 MiB crasher
   * normalizes in ~1.5 s on an idle 2-core machine and must not fail on a loaded one. The campaign
   * (test/fuzz/campaign.sh), which hunts slow inputs, sets FUZZ_RECORD_MS=5000.
   */
  recordLimitMs: envInt("FUZZ_RECORD_MS", 60_000),
  /** Per-case watchdog: past it the worker is killed and the case reported as a hang (the campaign: 20 s). */
  caseTimeoutMs: envInt("FUZZ_CASE_TIMEOUT_MS", 120_000),
  /** Write shrunk failing inputs into test/fixtures/fuzz-crashers (the campaign sets this). */
  saveCrashers: process.env.FUZZ_SAVE_CRASHERS === "1",
};

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return value;
}

/** fast-check parameters for one property: its own seed (so properties do not depend on each other's order). */
export function fuzzParameters<T>(property: string): fc.Parameters<T> {
  const seed = (FUZZ.seed ^ createHash("sha256").update(property).digest().readInt32LE(0)) | 0;
  return {
    seed,
    numRuns: FUZZ.runs,
    // The limit covers shrinking too, which matters for hangs: each attempt costs a case timeout.
    plugins: [fc.interruptAfterTimeLimit(FUZZ.secondsPerProperty * 1000) as fc.Plugin<T>],
  };
}

/** Vitest timeout for one property test: its budget, one case that hangs, and the report (a rerun). */
export const PROPERTY_TIMEOUT_MS = FUZZ.secondsPerProperty * 1000 + 3 * FUZZ.caseTimeoutMs + 30_000;

/** The `normalize` section of configs/defaults.yaml (the config loader wants a whole job). */
export const DEFAULT_SETTINGS: NormalizeSettings = parse(readFileSync(join(ROOT, "configs/defaults.yaml"), "utf8")).normalize;

/**
 * Runs cases in a worker thread so that a hang, even a synchronous one (a regex, an endless loop),
 * is caught: past the case timeout the worker is terminated and the case reported. The pipeline
 * itself runs tasks in worker threads (piscina, default resource limits), so stack depth matches.
 */
export class CaseRunner {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private waiting: ((result: JobResult) => void) | undefined;
  /** One case at a time, in call order (a property still shrinking after its test timed out must not cross another's cases). */
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * Starts the worker (it loads every reader and normalizer) before the first property: its
   * start-up, seconds on a loaded machine, would otherwise use up the first property's time
   * limit, and a property interrupted before its first case passed counts as failed in fast-check.
   */
  async warmUp(): Promise<void> {
    await this.start();
  }

  run(job: Job): Promise<JobResult> {
    const result = this.queue.then(() => this.runNow(job));
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async runNow(job: Job): Promise<JobResult> {
    const worker = await this.start();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        void this.stop();
        resolve({ failure: `hang: no result within ${FUZZ.caseTimeoutMs} ms`, ms: FUZZ.caseTimeoutMs });
      }, FUZZ.caseTimeoutMs);
      this.waiting = (result) => {
        clearTimeout(timer);
        this.waiting = undefined;
        resolve(result);
      };
      worker.postMessage(job);
    });
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    await worker?.terminate();
  }

  private async start(): Promise<Worker> {
    if (!this.worker) {
      // A memory blow-up is a finding too: cap the heap so it fails the case, not the machine.
      const worker = new Worker(new URL("./fuzz-worker.ts", import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: 3072 } });
      this.worker = worker;
      this.ready = new Promise((resolve, reject) => {
        worker.once("message", () => resolve());
        worker.once("error", reject);
      });
      worker.on("message", (result: JobResult) => this.waiting?.(result));
      worker.on("error", (err) => {
        if (this.worker === worker) this.worker = undefined;
        this.waiting?.({ failure: `worker died: ${err.name}: ${err.message}`, ms: 0 });
      });
      worker.on("exit", (code) => {
        if (this.worker === worker) this.worker = undefined;
        if (code !== 0 && code !== 1) this.waiting?.({ failure: `worker exited with code ${code}`, ms: 0 });
      });
    }
    await this.ready;
    return this.worker as Worker;
  }
}

/** A scratch folder per test file; each case gets a fresh subfolder (some readers look beside the file). */
export class Scratch {
  readonly dir = mkdtempSync(join(tmpdir(), "lwm-fuzz-"));
  private n = 0;

  caseDir(): string {
    const dir = join(this.dir, `case-${this.n++}`);
    mkdirSync(dir);
    return dir;
  }

  clear(dir: string): void {
    rmSync(dir, { recursive: true, force: true });
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export const CRASHERS = join(ROOT, "test/fixtures/fuzz-crashers");

/** A saved crasher: the input that broke a property, and the one-line note of what it did. */
export interface Crasher {
  name: string;
  path: string;
  note: string;
  /** Extra reader options it needs (`NAME.options.json`), if any. */
  options?: Record<string, unknown>;
}

/** Every crasher saved for a target (`<reader>` or `normalize-<domain>`); notes and options are sidecars. */
export function listCrashers(target: string): Crasher[] {
  const dir = join(CRASHERS, target);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => !name.endsWith(".note") && !name.endsWith(".options.json"))
    .sort()
    .map((name) => {
      const path = join(dir, name);
      const notePath = `${path}.note`;
      const optionsPath = `${path}.options.json`;
      return {
        name,
        path,
        note: existsSync(notePath) ? readFileSync(notePath, "utf8").trim() : "",
        ...(existsSync(optionsPath) ? { options: JSON.parse(readFileSync(optionsPath, "utf8")) } : {}),
      };
    });
}

/** The folders of test/fixtures/fuzz-crashers: one per reader or `normalize-<domain>`. */
export function listCrasherTargets(): string[] {
  if (!existsSync(CRASHERS)) return [];
  return readdirSync(CRASHERS, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** Saves a shrunk failing input as a regression fixture (only when FUZZ_SAVE_CRASHERS=1); returns where. */
export function saveCrasher(target: string, stem: string, bytes: Uint8Array, note: string, options?: object): string | undefined {
  if (!FUZZ.saveCrashers) return undefined;
  const dir = join(CRASHERS, target);
  mkdirSync(dir, { recursive: true });
  // `local.traj.json` → `local-1a2b3c4d.traj.json`: the extension stays, for readers that look at it.
  const [, base, ext] = /^(.*?)((?:\.[A-Za-z][\w]*)*)$/.exec(basename(stem).replace(/[^\w.-]+/g, "_")) as RegExpExecArray;
  const name = `${base}-${createHash("sha256").update(bytes).digest("hex").slice(0, 8)}${ext}`;
  const path = join(dir, name);
  writeFileSync(path, bytes);
  writeFileSync(`${path}.note`, `${note.split("\n")[0]}\n`);
  if (options && Object.keys(options).length > 0) writeFileSync(`${path}.options.json`, `${JSON.stringify(options)}\n`);
  return path;
}

/** What a failing property reports: the failure, the input, and how to replay the campaign. */
export function failureReport(property: string, failure: string, input: string, saved: string | undefined): string {
  return [
    `${property}: ${failure}`,
    `input: ${input.length > 4000 ? `${input.slice(0, 4000)}…` : input}`,
    saved ? `saved as ${saved}` : "rerun with FUZZ_SAVE_CRASHERS=1 to keep it as a regression fixture",
    `replay: FUZZ_SEED=${FUZZ.seed} FUZZ_RUNS=${FUZZ.runs} npx vitest run test/fuzz`,
  ].join("\n");
}
