/**
 * The two jobs the benchmark times, each as the user would run it: `lwm-data run` through its
 * CLI (Node 24 from node_modules), and the datatrove baseline (bench/datatrove/run.py in its
 * own venv). Both run as subprocesses under timed().
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Timed, timed } from "./timed.ts";

export const ROOT = new URL("../..", import.meta.url).pathname;
const NODE = join(ROOT, "node_modules/.bin/node");
const CLI = join(ROOT, "bin/lwm-data.js");

export interface RunFlags {
  workers: boolean;
  overwrite: boolean;
}

/** Which optional `run` flags this checkout's CLI has (read from its --help, not assumed). */
export function runFlags(): RunFlags {
  const help = spawnSync(NODE, [CLI, "run", "--help"], { encoding: "utf8" }).stdout ?? "";
  return { workers: /--workers\b/.test(help), overwrite: /--overwrite\b/.test(help) };
}

export interface JobRun extends Timed {
  trajectories: number;
  tokens: number;
  /** Tasks the run's plan had (lwm-data manifests that record it). */
  tasks?: number;
}

/** Reads the counts from the manifest, or from the printed summary when there is none. */
function counts(outputDir: string, stdout: string): { trajectories: number; tokens: number; tasks?: number } {
  const manifest = join(outputDir, "manifest.json");
  if (existsSync(manifest)) {
    const m = JSON.parse(readFileSync(manifest, "utf8")) as {
      counts: { records_in: number };
      tokens: { total: number };
      tasks?: { count?: number };
    };
    const tasks = m.tasks?.count;
    return { trajectories: m.counts.records_in, tokens: m.tokens.total, ...(typeof tasks === "number" ? { tasks } : {}) };
  }
  const grab = (label: string) => Number(new RegExp(`${label}\\s+(\\d+)`).exec(stdout)?.[1] ?? Number.NaN);
  return { trajectories: grab("records in"), tokens: grab("tokens") };
}

export function runLwmData(configPath: string, outputDir: string, workers: number | undefined, flags: RunFlags): JobRun {
  const args = [CLI, "run", configPath, "--output", outputDir, "--progress", "none"];
  if (flags.workers && workers !== undefined) args.push("--workers", String(workers));
  if (flags.overwrite) args.push("--overwrite");
  const run = timed(NODE, args, { cwd: ROOT });
  return { ...run, ...counts(outputDir, run.stdout) };
}

/**
 * The machine's own 2-core ceiling for this job: the job split over two single-worker processes
 * (ranks 0 and 1) started together, sharing nothing but the hardware. Time is until both end.
 */
export function runTwoRanks(configPath: string, outputDir: string): JobRun {
  const rank = (r: number) =>
    [NODE, CLI, "run", configPath, "--output", outputDir, "--progress", "none", "--workers", "1", "--rank", String(r), "--world-size", "2"]
      .map((arg) => `'${arg.replaceAll("'", "'\\''")}'`)
      .join(" ");
  const run = timed("bash", ["-c", `${rank(0)} > /dev/null & ${rank(1)} > /dev/null; one=$?; wait $!; zero=$?; exit $((zero | one))`], {
    cwd: ROOT,
  });
  return { ...run, ...counts(outputDir, run.stdout) };
}

const VENV_PYTHON = join(ROOT, ".venv-bench/bin/python");

/** Makes sure .venv-bench has datatrove (bench/datatrove/setup.sh); the reason when it cannot. */
export function ensureDatatrove(): string | undefined {
  const setup = spawnSync("bash", [join(ROOT, "bench/datatrove/setup.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "inherit", "pipe"],
    env: { ...process.env, VENV: join(ROOT, ".venv-bench") },
  });
  if (setup.status === 0 && existsSync(VENV_PYTHON)) return undefined;
  return `bench/datatrove/setup.sh failed: ${(setup.stderr ?? "").trim().split("\n").slice(-3).join(" ")}`;
}

export function datatroveVersion(): string {
  const out = spawnSync(VENV_PYTHON, ["-c", "from importlib.metadata import version; print(version('datatrove'))"], { encoding: "utf8" });
  return out.stdout.trim();
}

export function runDatatrove(corpusDir: string, outputDir: string, tokenizerJson: string): JobRun {
  // One core, as in run.py; set here too so nothing in the venv can widen it.
  const env = { ...process.env, RAYON_NUM_THREADS: "1", TOKENIZERS_PARALLELISM: "false", OMP_NUM_THREADS: "1" };
  const run = timed(
    VENV_PYTHON,
    [join(ROOT, "bench/datatrove/run.py"), "--input", corpusDir, "--output", outputDir, "--tokenizer", tokenizerJson],
    { env },
  );
  const last = run.stdout.trim().split("\n").at(-1) ?? "{}";
  const parsed = JSON.parse(last) as { trajectories: number; tokens: number };
  return { ...run, trajectories: parsed.trajectories, tokens: parsed.tokens };
}
