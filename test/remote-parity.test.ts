/**
 * Issue 34 "Done when": the same job over DroidBot, terminal-bench, BrowserGym, Harbor (ATIF) and
 * OSWorld folders gives byte-identical shards from a local folder and from an S3 bucket (moto). Side files
 * (DroidBot states, a trial's recording and panes, a BrowserGym run's summary_info.json, a Harbor
 * trial's result.json and verifier/, an OSWorld example's result.txt and config) are found through
 * src/io/side-files.ts the same way in both places; a side file missing from the bucket changes the
 * output and is reported.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { DeleteObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { forgetFolderListings } from "../src/io/side-files.ts";
import type { Manifest } from "../src/output/manifest.ts";
import { atifReader } from "../src/read/atif.ts";
import { osworldReader } from "../src/read/osworld.ts";
import type { Reader } from "../src/read/reader.ts";
import { terminalBenchReader } from "../src/read/terminal-bench.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { MotoServer } from "./support/moto-server.ts";
import { filesUnder, shardRows } from "./support/output-rows.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const BUCKET = "parity";
const moto = new MotoServer();
const ANDROID = join(ROOT, "data/demo/android");

async function cli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return exec(process.execPath, [CLI, ...args], { cwd: ROOT, env: moto.env(), maxBuffer: 1 << 26 });
}

/** The four folders, as their tools write them (files made by this project, see each source). */
function writeInputs(raw: string): void {
  // A DroidBot output folder: events/, states/, utg.js, a screenshot (the demo's hand-written run).
  const run = join(raw, "droidbot", "quicknotes-out");
  mkdirSync(join(run, "events"), { recursive: true });
  mkdirSync(join(run, "states"), { recursive: true });
  for (const name of readdirSync(ANDROID)) {
    if (name.startsWith("event_")) cpSync(join(ANDROID, name), join(run, "events", name));
    if (name.startsWith("state_")) cpSync(join(ANDROID, name), join(run, "states", name));
  }
  writeFileSync(join(run, "states", "screen_2026-01-15_120000.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
  writeFileSync(join(run, "utg.js"), 'var utg = {"num_nodes": 4, "num_edges": 3, "app_package": "org.example.quicknotes"}\n');
  // The project's recorded terminal-bench run (test/fixtures/terminal-bench).
  cpSync(join(ROOT, "test/fixtures/terminal-bench/2026-01-15__12-00-00"), join(raw, "terminal-bench", "2026-01-15__12-00-00"), {
    recursive: true,
  });
  // A Harbor job folder: two trials, each agent/trajectory.json (ATIF) with result.json, verifier/, config.json …
  cpSync(join(ROOT, "test/fixtures/handmade/atif/harbor-job"), join(raw, "atif", "harbor-job"), { recursive: true });
  // OSWorld result folders: traj.jsonl with result.txt and the example's config beside it.
  cpSync(join(ROOT, "test/fixtures/handmade/osworld/results"), join(raw, "osworld", "results"), { recursive: true });
  // A BrowserGym experiment folder: the demo's analysis dump, with a summary and a log written here.
  const exp = join(raw, "browsergym", "2026-01-15_12-00-00_DemoAgentArgs_on_stockroom.add-item_0");
  mkdirSync(exp, { recursive: true });
  cpSync(join(ROOT, "data/demo/web/stockroom.add-item__experiment_analysis.md"), join(exp, "experiment_analysis.md"));
  writeFileSync(
    join(exp, "summary_info.json"),
    JSON.stringify(
      { n_steps: 3, cum_reward: 1, cum_raw_reward: 1, err_msg: null, stack_trace: null, terminated: true, truncated: false },
      null,
      4,
    ),
  );
  writeFileSync(
    join(exp, "experiment.log"),
    "2026-01-15 12:00:00,000 - 1 - browsergym.experiments.loop - INFO - Running experiment DemoAgentArgs_on_stockroom.add-item_0 in:\n  results/x\n",
  );
}

async function upload(dir: string, prefix: string): Promise<void> {
  const client = moto.client();
  for (const name of filesUnder(dir))
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}${name}`, Body: readFileSync(join(dir, name)) }));
}

const ALL = ["droidbot", "terminal-bench", "browsergym", "atif", "osworld"];
const TB_TRIALS = ["count-errors", "fix-permissions", "hello-world"].map(
  (task) => `terminal-bench/2026-01-15__12-00-00/${task}/${task}.1-of-1.2026-01-15__12-00-00/results.json`,
);
const HARBOR_TRIALS = ["count-errors__Vb3kQ9x", "swebench-calc-1__Qx7wP2d"].map(
  (trial) => `atif/harbor-job/${trial}/agent/trajectory.json`,
);
/** OSWorld examples with a result.txt (and, for the first, an accessibility tree per step: trained; the second is screenshot-only, filtered). */
const OSWORLD_EXAMPLES = [
  "osworld/results/computer_13/screenshot_a11y_tree/claude-3-7-sonnet/chrome/7b1f0e22-3c4d-4e5f-8a9b-0c1d2e3f4a5b/traj.jsonl",
  "osworld/results/pyautogui/screenshot/gpt-4o/os/0c2a6a4d-7f1e-4b1e-9d53-1a2b3c4d5e6f/traj.jsonl",
];
const JOB = (root: string, out: string, inputs = ALL) =>
  `inputs:\n${inputs.map((path) => `  - path: ${path}\n`).join("")}input: { root: ${root}, task_bytes: 40000 }\noutput: { dir: ${out}, num_buckets: 2 }\n`;

/** The job over `inputs` from the local folder and from the bucket: both outputs. */
async function twin(raw: string, inputs: string[]): Promise<{ localOut: string; remoteOut: string }> {
  const local = tempDir("lwm-parity-");
  const remoteDir = tempDir("lwm-parity-remote-");
  const localConfig = writeConfig(JOB(raw, join(local, "out"), inputs), local);
  const remoteConfig = writeConfig(JOB(`s3://${BUCKET}/raw`, join(remoteDir, "out"), inputs), remoteDir);
  await cli("run", localConfig, "--progress", "none");
  await cli("run", remoteConfig, "--progress", "none", "--workers", "2");
  return { localOut: join(local, "out"), remoteOut: join(remoteDir, "out") };
}

function expectSameOutput(localOut: string, remoteOut: string): void {
  const a = JSON.parse(readFileSync(join(localOut, "manifest.json"), "utf8")) as Manifest;
  const b = JSON.parse(readFileSync(join(remoteOut, "manifest.json"), "utf8")) as Manifest;
  expect(b.counts).toEqual(a.counts);
  expect(b.domains).toEqual(a.domains);
  const [mine, theirs] = [shards(localOut), shards(remoteOut)];
  expect([...theirs.keys()]).toEqual([...mine.keys()]);
  for (const [name, bytes] of mine) expect(theirs.get(name)?.equals(bytes), name).toBe(true);
  expect(quarantine(remoteOut)).toEqual(quarantine(localOut));
}

let raw = "";

/** Every output file under data/ (the shards) as bytes. */
function shards(out: string): Map<string, Buffer> {
  return new Map(filesUnder(join(out, "data")).map((name) => [name, readFileSync(join(out, "data", name))]));
}

function quarantine(out: string): string[] {
  return filesUnder(out)
    .filter((name) => name.startsWith("quarantine") && name.endsWith(".jsonl"))
    .flatMap((name) => readFileSync(join(out, name), "utf8").split("\n").filter(Boolean));
}

/** The one trajectory `reader` reads from `path`, its id and the keys every reader shares. */
async function provenanceOf(reader: Reader, path: string): Promise<Record<string, unknown>> {
  const items = await collect(reader.read(path, { maxLineBytes: 64 << 20 }));
  const item = items[0];
  if (item?.kind !== "trajectory") throw new Error(`${path}: ${JSON.stringify(item)}`);
  const { id, meta = {} } = item.trajectory as Trajectory;
  const keys = ["outcome", "agent", "model", "task_id", "attempt"].filter((key) => key in meta);
  return { id, ...Object.fromEntries(keys.map((key) => [key, meta[key]])) };
}

let restoreEnv = () => {};

beforeAll(async () => {
  await moto.start();
  // The readers are also run in this process on the bucket's URIs (the S3 client reads these).
  restoreEnv = moto.useInProcess();
  await moto.createBucket(BUCKET);
  raw = join(tempDir("lwm-parity-raw-"), "raw");
  writeInputs(raw);
  await upload(raw, "raw/");
});

afterAll(() => {
  moto.stop();
  restoreEnv();
});

describe("side files resolve the same on a disk and in a bucket", () => {
  it("DroidBot and BrowserGym folders give byte-identical shards from a folder and from S3; a state missing from the bucket is reported", async () => {
    const inputs = ["droidbot", "browsergym"];
    const remoteDir = tempDir("lwm-parity-validate-");
    const validate = await cli("validate", writeConfig(JOB(`s3://${BUCKET}/raw`, join(remoteDir, "out"), inputs), remoteDir));
    // Each record's file named once with its format; the run's states, utg.js and screenshot are its side files.
    expect(validate.stdout).toMatch(/quicknotes-out\/events\/event_2026-01-15_120002\.json .*format=droidbot/);
    expect(validate.stdout).toMatch(/experiment_analysis\.md .*format=browsergym/);
    expect(validate.stdout).not.toMatch(/state_2026-01-15_120000\.json .*format=/);
    expect(validate.stdout).not.toMatch(/summary_info\.json .*format=/);

    const { localOut, remoteOut } = await twin(raw, inputs);
    // The job read what it was meant to: one DroidBot run (3 events chained), one experiment, nothing quarantined.
    const rows = await shardRows(localOut);
    expect(rows.sources.map((s) => s.replace(/#.*$/, "")).sort()).toEqual([
      "browsergym/2026-01-15_12-00-00_DemoAgentArgs_on_stockroom.add-item_0/experiment_analysis.md",
      "droidbot/quicknotes-out/events/event_2026-01-15_120002.json",
    ]);
    expect(quarantine(localOut)).toEqual([]);
    expectSameOutput(localOut, remoteOut);

    // Negative control: the stop state of the run's last event is gone from the bucket.
    await moto
      .client()
      .send(new DeleteObjectCommand({ Bucket: BUCKET, Key: "raw/droidbot/quicknotes-out/states/state_2026-01-15_120009.json" }));
    const brokenDir = tempDir("lwm-parity-broken-");
    await cli("run", writeConfig(JOB(`s3://${BUCKET}/raw`, join(brokenDir, "out"), inputs), brokenDir), "--progress", "none");
    const brokenOut = join(brokenDir, "out");
    const missing = quarantine(brokenOut);
    expect(missing).toHaveLength(1);
    expect(missing[0]).toContain("droidbot/quicknotes-out/events/event_2026-01-15_120008.json");
    expect(missing[0]).toMatch(/stop_state e63bbe0811148e601f8ceeb7c610e155 has no state_\*\.json/);
    const mine = shards(localOut);
    expect([...shards(brokenOut)].some(([name, bytes]) => !mine.get(name)?.equals(bytes))).toBe(true);
    await upload(raw, "raw/");
  });

  it("terminal-bench and Harbor (ATIF) folders give byte-identical shards from a folder and from S3", async () => {
    const remoteDir = tempDir("lwm-parity-validate-");
    const validate = await cli(
      "validate",
      writeConfig(JOB(`s3://${BUCKET}/raw`, join(remoteDir, "out"), ["terminal-bench", "atif"]), remoteDir),
    );
    // From the bucket each trial is one record; its cast, panes, result.json, verifier/ are side files, never inputs of their own.
    for (const trial of [...TB_TRIALS, ...HARBOR_TRIALS]) expect(validate.stdout).toContain(trial);
    expect(validate.stdout).toMatch(/count-errors__Vb3kQ9x\/agent\/trajectory\.json .*format=atif/);
    expect(validate.stdout).not.toMatch(
      /(agent\.cast|post-agent\.txt|result\.json|reward\.(txt|json)|config\.json|recording\.cast) .*format=/,
    );
    expect(validate.stdout).not.toMatch(/unrecognized|unknown input/i);
    expect(validate.stdout).toMatch(
      /recording\.cast, \.\.\/config\.json, \.\.\/result\.json, \.\.\/verifier\/reward\.txt +\(Harbor trial count-errors__Vb3kQ9x\)/,
    );
    expect(validate.stdout).toMatch(/\.\.\/verifier\/reward\.json +\(Harbor trial swebench-calc-1__Qx7wP2d\)/);
    expect(validate.stdout).toMatch(
      /commands\.txt, panes\/post-agent\.txt, .*\(terminal-bench trial hello-world\.1-of-1\.2026-01-15__12-00-00\)/,
    );
    // 32 files of the terminal-bench run (as read from the folder, test/read-terminal-bench.test.ts) + 6 of the Harbor job.
    expect(validate.stdout).toContain("covered      38 file(s)");

    const { localOut, remoteOut } = await twin(raw, ALL);
    const rows = await shardRows(localOut);
    const sources = rows.sources.map((s) => s.replace(/#.*$/, ""));
    for (const trial of [...TB_TRIALS, ...HARBOR_TRIALS, `${OSWORLD_EXAMPLES[0]}:1`]) expect(sources).toContain(trial);
    expect(quarantine(localOut)).toEqual([]);
    expectSameOutput(localOut, remoteOut);
  });

  it("outcome, agent, model, task and attempt read the same from the bucket as from the folder", async () => {
    forgetFolderListings();
    const cases: [Reader, string][] = [
      ...TB_TRIALS.map((trial): [Reader, string] => [terminalBenchReader, trial]),
      ...HARBOR_TRIALS.map((trial): [Reader, string] => [atifReader, trial]),
      ...OSWORLD_EXAMPLES.map((example): [Reader, string] => [osworldReader, example]),
    ];
    for (const [reader, trial] of cases) {
      const local = await provenanceOf(reader, join(raw, trial));
      expect(await provenanceOf(reader, `s3://${BUCKET}/raw/${trial}`), trial).toEqual(local);
      // Each trial's outcome comes from a side file (results.json; result.json or verifier/); the task and
      // attempt from results.json / result.json (the swebench trial has only verifier/reward.json).
      expect(local, trial).toHaveProperty("outcome");
      if (!trial.includes("swebench")) expect(local, trial).toHaveProperty("task_id");
    }
    expect(await provenanceOf(terminalBenchReader, `s3://${BUCKET}/raw/${TB_TRIALS[1]}`)).toEqual({
      id: "fix-permissions.1-of-1.2026-01-15__12-00-00",
      outcome: { resolved: false, failure_mode: "agent_timeout" },
      agent: "terminus-2",
      model: "scripted (no model)",
      task_id: "fix-permissions",
      attempt: "fix-permissions.1-of-1.2026-01-15__12-00-00",
    });
    expect(await provenanceOf(atifReader, `s3://${BUCKET}/raw/${HARBOR_TRIALS[0]}`)).toMatchObject({
      outcome: { reward: 1, success: true },
      task_id: "terminal-bench/count-errors",
      attempt: "count-errors__Vb3kQ9x",
    });
  });

  it("a trial's recording missing from the bucket changes what is read (the side file is really used remotely)", async () => {
    const trial = `s3://${BUCKET}/raw/${TB_TRIALS[2]}`;
    const turnsFrom = async () => {
      forgetFolderListings();
      const [item] = await collect(terminalBenchReader.read(trial, { maxLineBytes: 64 << 20 }));
      if (item?.kind !== "trajectory") throw new Error(JSON.stringify(item));
      return (item.trajectory.meta?.terminal_bench as { turns_from?: string } | undefined)?.turns_from;
    };
    expect(await turnsFrom()).toBe("agent.cast");
    const cast = `raw/${TB_TRIALS[2]?.replace(/results\.json$/, "sessions/agent.cast")}`;
    await moto.client().send(new DeleteObjectCommand({ Bucket: BUCKET, Key: cast }));
    try {
      expect(await turnsFrom()).toBe("commands.txt + panes");
    } finally {
      await upload(raw, "raw/");
      forgetFolderListings();
    }
  });
});
