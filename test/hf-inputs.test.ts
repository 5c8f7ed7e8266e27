import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hfUri, parseHfUri } from "../src/io/hf/hf-uri.ts";
import type { Manifest } from "../src/output/manifest.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { writeCorpus } from "./scale-helpers.ts";
import { FakeHubServer } from "./support/fake-hub-server.ts";
import { filesUnder, shardRows } from "./support/output-rows.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const TOKEN = "hf_inputsTestToken7c6b5a4d3e2f1";
const REPO = "lwm/trajectories";
const MCP = join(ROOT, "data/demo/mcp");
const PARQUET = join(ROOT, "data/knowledge/explainers.parquet");
// LFS content is served from another origin, as the Hub's CDN is: the token must not follow the redirect there.
const hub = new FakeHubServer({ token: TOKEN, lfsThreshold: 64 * 1024, storageOrigin: true });
/** The local copies of the repo's files. */
const local = tempDir();

/** The CLI's environment: the fake Hub's endpoint, and `token` as HF_TOKEN (null: no token at all). */
function hubEnv(token: string | null = TOKEN): NodeJS.ProcessEnv {
  const { HF_TOKEN: _a, HUGGING_FACE_HUB_TOKEN: _b, ...env } = process.env;
  return { ...env, HF_ENDPOINT: hub.url, ...(token ? { HF_TOKEN: token } : {}) };
}

async function cli(args: string[], env = hubEnv()): Promise<{ stdout: string; stderr: string }> {
  return exec(process.execPath, [CLI, ...args], { cwd: ROOT, env, maxBuffer: 1 << 26 });
}

/** stderr of a CLI run that must fail. */
async function failure(args: string[], env = hubEnv()): Promise<string> {
  return cli(args, env).then(
    (ran) => {
      throw new Error(`expected a failure, got: ${ran.stdout}`);
    },
    (err: { stderr: string }) => err.stderr,
  );
}

function manifest(out: string): Manifest {
  return JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as Manifest;
}

/** Runs a job over `inputs` (YAML list items) into a fresh folder; returns the output folder and the run's text. */
async function runJob(inputs: string[], settings: string, env = hubEnv()): Promise<{ out: string; log: string }> {
  const config = writeConfig(`inputs:\n${inputs.map((path) => `  - path: ${path}`).join("\n")}\n${settings}`, tempDir());
  const ran = await cli(["run", config, "--progress", "none", "--workers", "2"], env);
  return { out: join(config, "..", "out"), log: `${ran.stdout}${ran.stderr}` };
}

/** The token reaches no output file (shards aside: binary, and made of the inputs only) and no log. */
function expectNoToken(out: string, log: string): void {
  for (const name of filesUnder(out).filter((file) => !file.startsWith("data/"))) {
    expect(readFileSync(join(out, name), "utf8").includes(TOKEN), name).toBe(false);
  }
  expect(log).not.toContain(TOKEN);
}

async function expectSameRows(remoteOut: string, localOut: string, sourcePrefix: string): Promise<void> {
  const [a, b] = [manifest(localOut), manifest(remoteOut)];
  expect(b.tasks.count).toBe(a.tasks.count);
  expect(b.counts).toEqual(a.counts);
  expect(b.tokens).toEqual(a.tokens);
  expect(filesUnder(join(remoteOut, "data"))).toEqual(filesUnder(join(localOut, "data")));
  const [localRows, remoteRows] = [await shardRows(localOut), await shardRows(remoteOut)];
  expect([...remoteRows.byId]).toEqual([...localRows.byId]);
  expect(remoteRows.sources.length).toBeGreaterThan(0);
  for (const source of remoteRows.sources) expect(source.startsWith(sourcePrefix), source).toBe(true);
}

const SETTINGS = "input: { task_bytes: 60000 }\noutput: { dir: out, num_buckets: 2 }\n";
/** The repo's corpus and MCP files, as the first two tests read them. */
const REMOTE_INPUTS = [`hf://datasets/${REPO}/data/corpus.jsonl`, `hf://datasets/${REPO}/data/mcp/*`];

let cleanRemote: Promise<{ out: string; log: string }> | undefined;
/**
 * The job over REMOTE_INPUTS with no fault injected, run once: the first test checks what it
 * asked the Hub for, the second compares the runs through faults with its rows.
 */
function cleanRemoteRun(): Promise<{ out: string; log: string }> {
  cleanRemote ??= runJob(REMOTE_INPUTS, SETTINGS);
  return cleanRemote;
}

beforeAll(async () => {
  await hub.start();
  writeCorpus(join(local, "corpus.jsonl"), 240);
  // Over the LFS threshold: its resolve URL redirects to the object store, as the Hub's do to its CDN.
  hub.seedFile(REPO, "data/corpus.jsonl", readFileSync(join(local, "corpus.jsonl")), { lfs: true });
  for (const name of readdirSync(MCP).sort())
    hub.seedFile(REPO, `data/mcp/${name}`, readFileSync(join(MCP, name)), { lfs: name.endsWith(".gz") });
  // Not matched by the globs below: the listing is filtered by pattern, not just by folder.
  hub.seedFile(REPO, "data/mcp-notes.txt", "not an input");
  hub.seedFile(REPO, "knowledge/explainers.parquet", readFileSync(PARQUET), { lfs: true });
});

afterAll(async () => {
  await hub.stop();
});

describe("inputs from the Hugging Face Hub (hf://datasets/…)", () => {
  it("reads an hf:// glob (plain and gzip; a large file cut into byte-range tasks) to the same rows as local copies, the commit pinned", async () => {
    const sha = hub.head(REPO);
    const validate = await cli(["validate", writeConfig(`inputs:\n  - path: hf://datasets/${REPO}/data/mcp/*\n${SETTINGS}`)]);
    expect(validate.stdout).toContain(`hf://datasets/${REPO}@${sha}/data/mcp/everything.jsonl.gz`);
    expect(validate.stdout).not.toMatch(/mcp-notes/);

    const localRun = await runJob([join(local, "corpus.jsonl"), `${MCP}/*`], SETTINGS);
    hub.resetCounters();
    // The requests checked below are this run's own: it is the first to run this job.
    expect(cleanRemote).toBeUndefined();
    const remote = await cleanRemoteRun();
    expect(hub.unhandled).toEqual([]);
    await expectSameRows(remote.out, localRun.out, `hf://datasets/${REPO}@${sha}/data/`);
    expect(manifest(remote.out).tasks.count).toBeGreaterThan(2);

    // The manifest names every input by its pinned URI: the revision `main` was resolved once, to its sha.
    const inputs = manifest(remote.out).inputs.map((input) => input.path);
    expect(inputs).toContain(`hf://datasets/${REPO}@${sha}/data/corpus.jsonl`);
    for (const path of inputs) expect(path.startsWith(`hf://datasets/${REPO}@${sha}/`), path).toBe(true);
    // Resolved once: not per input, not again in the worker threads (which plan the job for themselves).
    expect(hub.requests.filter((r) => r.path.includes("/revision/")).map((r) => r.path)).toEqual([`/api/datasets/${REPO}/revision/main`]);
    // Every read named the commit, never the branch; the byte-range tasks read from their offsets.
    const reads = hub.requests.filter((r) => r.path.includes("/resolve/"));
    expect(reads.length).toBeGreaterThan(0);
    for (const read of reads) expect(read.path).toContain(`/resolve/${sha}/`);
    const corpusReads = hub.requests.filter((r) => r.path.startsWith("/lfs-objects/") && r.range && !r.range.startsWith("bytes=0-"));
    expect(corpusReads.length).toBeGreaterThan(0);
    // The token went to the Hub's API and resolve URLs, and nowhere else.
    for (const request of hub.requests)
      expect(request.authorization, request.path).toBe(request.path.startsWith("/lfs-objects/") ? undefined : `Bearer ${TOKEN}`);
    expectNoToken(remote.out, remote.log);
    expect(await cli(["verify", remote.out]).then((r) => r.stdout)).toMatch(/OK/);
  });

  it("retries throttling, 5xx and connections cut mid-body (resuming from the last byte), to the same rows", async () => {
    const inputs = REMOTE_INPUTS;
    const clean = await cleanRemoteRun();
    hub.injectFaults({ failReads: 1, readStatus: 429 });
    const throttled = await runJob(inputs, SETTINGS);
    hub.injectFaults({ failReads: 2, readStatus: 503, cutReads: 3, cutAfterBytes: 700 });
    const cut = await runJob(inputs, SETTINGS);
    // A cut body is resumed from the first byte not delivered: 700 bytes after where its request started.
    const starts = hub.requests
      .filter((r) => r.method === "GET" && (r.path.startsWith("/lfs-objects/") || r.path.includes("/resolve/")))
      .map((r) => ({ path: r.path, start: Number(r.range?.match(/^bytes=(\d+)-/)?.[1] ?? 0) }));
    hub.resetCounters();
    const resumed = starts.filter(({ path, start }) => starts.some((other) => other.path === path && other.start + 700 === start));
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    const sha = hub.head(REPO);
    await expectSameRows(throttled.out, clean.out, `hf://datasets/${REPO}@${sha}/`);
    await expectSameRows(cut.out, clean.out, `hf://datasets/${REPO}@${sha}/`);
  });

  it("reads a tag or a sha, and keeps reading that commit after main moves", async () => {
    const repo = "lwm/moving";
    hub.seedFile(repo, "data/a.jsonl", readFileSync(join(local, "corpus.jsonl")));
    const v1 = hub.commitSeeded(repo, { tag: "v1" });
    writeCorpus(join(local, "later.jsonl"), 20, 2);
    hub.seedFile(repo, "data/b.jsonl", readFileSync(join(local, "later.jsonl")));
    const head = hub.head(repo);
    expect(head).not.toBe(v1);
    const tagged = await runJob([`hf://datasets/${repo}@v1/data/*.jsonl`], SETTINGS);
    expect(manifest(tagged.out).inputs.map((input) => input.path)).toEqual([`hf://datasets/${repo}@${v1}/data/a.jsonl`]);
    const bySha = await runJob([`hf://datasets/${repo}@${v1}/data/`], SETTINGS);
    expect(manifest(bySha.out).counts).toEqual(manifest(tagged.out).counts);
    const main = await cli(["validate", writeConfig(`inputs:\n  - path: hf://datasets/${repo}/data/*.jsonl\n${SETTINGS}`)]);
    expect(main.stdout).toContain(`hf://datasets/${repo}@${head}/data/b.jsonl`);
  });

  it("reads Parquet text from the Hub by ranges (row groups split into byte-range tasks) to the same rows as the local file", async () => {
    const settings = "input: { task_bytes: 20000 }\noutput: { dir: out, num_buckets: 2 }\n";
    const localRun = await runJob([PARQUET], settings);
    hub.resetCounters();
    const remote = await runJob([`hf://datasets/${REPO}/knowledge/*.parquet`], settings);
    await expectSameRows(remote.out, localRun.out, `hf://datasets/${REPO}@${hub.head(REPO)}/knowledge/explainers.parquet`);
    expect(manifest(remote.out).tasks.count).toBeGreaterThan(1);
    expect(manifest(remote.out).counts).toEqual(manifest(localRun.out).counts);
    // The decoder fetched the footer and the column chunks it decoded, each by a Range request
    // (whole-file GETs are only the format sniff's, which stops after its first bytes).
    const size = readFileSync(PARQUET).length;
    const ranges = hub.requests
      .filter((r) => r.path.startsWith("/lfs-objects/") && r.range)
      .map((r) => (r.range?.match(/^bytes=(\d+)-(\d+)$/) ?? []).slice(1).map(Number));
    expect(ranges).toContainEqual([size - 8, size - 1]);
    const chunks = ranges.filter(([start, end]) => (end as number) - (start as number) > 1000);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const [start, end] of chunks) expect((end as number) - (start as number)).toBeLessThan(size / 2);
    expectNoToken(remote.out, remote.log);
  });

  it("says which repo, revision or pattern is wrong, and asks for HF_TOKEN without printing it", async () => {
    const validate = (path: string, env = hubEnv()) =>
      failure(["validate", writeConfig(`inputs:\n  - path: ${path}\noutput: { dir: out }\n`)], env);
    expect(await validate("hf://datasets/lwm/no-such-repo/*.jsonl")).toMatch(
      /hf:\/\/datasets\/lwm\/no-such-repo\/\*\.jsonl: dataset repo lwm\/no-such-repo not found/,
    );
    expect(await validate(`hf://datasets/${REPO}@no-such-branch/data/*.jsonl`)).toMatch(
      /@no-such-branch\/data\/\*\.jsonl: revision "no-such-branch" not found in datasets\/lwm\/trajectories/,
    );
    const none = await validate(`hf://datasets/${REPO}/data/**/*.parquet`);
    expect(none).toMatch(
      new RegExp(`inputs\\.0\\.path: hf://datasets/${REPO}/data/\\*\\*/\\*\\.parquet matched no files \\(at commit ${hub.head(REPO)}\\)`),
    );
    expect(await validate(`hf://${REPO}/data/*.jsonl`)).toMatch(/only Hub dataset repos can be inputs: expected hf:\/\/datasets\//);

    const noToken = await validate(`hf://datasets/${REPO}/data/*.jsonl`, hubEnv(null));
    expect(noToken).toMatch(/access denied \(HTTP 401.*\); set HF_TOKEN to a token that can read datasets\/lwm\/trajectories/);
    const wrong = "hf_wrongTokenWrongToken123456";
    hub.injectFaults({ echoAuthorization: true });
    const refused = await validate(`hf://datasets/${REPO}/data/*.jsonl`, hubEnv(wrong));
    hub.resetCounters();
    expect(refused).toMatch(/access denied \(HTTP 401.*\); the token in HF_TOKEN was refused/);
    expect(refused).not.toContain(wrong);
    expect(refused).not.toContain(TOKEN);
  });
});

describe("hf:// URIs", () => {
  it("parse into repo, revision and path, and format back", () => {
    expect(parseHfUri("hf://datasets/org/name/data/*.jsonl")).toEqual({ repo: "org/name", revision: undefined, path: "data/*.jsonl" });
    expect(parseHfUri("hf://datasets/org/name@v1.0/a/b.parquet")).toEqual({ repo: "org/name", revision: "v1.0", path: "a/b.parquet" });
    expect(parseHfUri("hf://datasets/org/name")).toEqual({ repo: "org/name", revision: undefined, path: "" });
    // Refs holding `/`: percent-encoded, or the Hub's special refs as they are.
    for (const uri of [
      "hf://datasets/o/n@refs%2Fconvert%2Fparquet/default/*.parquet",
      "hf://datasets/o/n@refs/convert/parquet/default/*.parquet",
    ])
      expect(parseHfUri(uri)).toEqual({ repo: "o/n", revision: "refs/convert/parquet", path: "default/*.parquet" });
    expect(parseHfUri("hf://datasets/o/n@refs/pr/7/x.jsonl")).toEqual({ repo: "o/n", revision: "refs/pr/7", path: "x.jsonl" });
    expect(hfUri({ repo: "o/n", revision: "refs/convert/parquet", path: "x.parquet" })).toBe(
      "hf://datasets/o/n@refs%2Fconvert%2Fparquet/x.parquet",
    );
    const sha = "0123456789abcdef0123456789abcdef01234567";
    expect(hfUri({ repo: "o/n", revision: sha, path: "data/a b.jsonl" })).toBe(`hf://datasets/o/n@${sha}/data/a b.jsonl`);
    expect(() => parseHfUri("hf://org/name/x.jsonl")).toThrow(/only Hub dataset repos can be inputs/);
    expect(() => parseHfUri("hf://datasets/org")).toThrow(/expected hf:\/\/datasets\/<namespace>\/<name>/);
    expect(() => parseHfUri("hf://datasets/org/name@/x")).toThrow(/the revision after @ is empty/);
  });
});
