import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Manifest } from "../src/output/manifest.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { MotoServer, S3_KEY_ID, S3_SECRET } from "./support/moto-server.ts";
import { filesUnder, shardRows } from "./support/output-rows.ts";
import { S3FaultProxy } from "./support/s3-fault-proxy.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const BUCKET = "knowledge";
const PARQUET = join(ROOT, "data/knowledge/explainers.parquet");
const moto = new MotoServer();
let proxy: S3FaultProxy;

async function cli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return exec(process.execPath, [CLI, ...args], { cwd: ROOT, env: moto.env(), maxBuffer: 1 << 26 });
}

/** The CLI reaching the bucket through the fault proxy. */
async function cliViaProxy(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return cliViaProxyWith({}, ...args);
}

/** cliViaProxy with more environment variables. */
async function cliViaProxyWith(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return exec(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...moto.env(proxy.endpoint), ...env }, maxBuffer: 1 << 26 });
}

beforeAll(async () => {
  await moto.start();
  proxy = await new S3FaultProxy(moto.endpoint).start();
  await moto.createBucket(BUCKET);
  await moto.client().send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: readFileSync(PARQUET) }));
});

afterAll(async () => {
  await proxy?.stop();
  moto.stop();
});

const KEY = "fineweb/explainers.parquet";
// Small tasks: each of the file's row groups is its own task, which fetches only that group's chunks.
const SETTINGS = "input: { task_bytes: 20000 }\noutput: { dir: out, num_buckets: 2 }\n";

let localRun: Promise<string> | undefined;
/** The job over the local file, run once: the output folder every read of the object is compared with. */
function localOutput(): Promise<string> {
  localRun ??= (async () => {
    const local = writeConfig(`inputs:\n  - path: ${PARQUET}\n${SETTINGS}`, tempDir());
    await cli("run", local, "--progress", "none");
    return join(local, "..", "out");
  })();
  return localRun;
}

describe("Parquet text inputs in S3-compatible object storage", () => {
  it("reads a FineWeb-layout Parquet object by ranges, row groups cut into byte-range tasks, to the same rows as the local file", async () => {
    const remote = writeConfig(`inputs:\n  - path: s3://${BUCKET}/fineweb/*.parquet\n${SETTINGS}`, tempDir());

    const validate = await cli("validate", remote);
    expect(validate.stdout).toMatch(/s3:\/\/knowledge\/fineweb\/explainers\.parquet .*format=text-parquet \(detected\)/);
    const localOut = await localOutput();
    const ran = await cli("run", remote, "--progress", "none", "--workers", "2");
    const remoteOut = join(remote, "..", "out");
    const a = JSON.parse(readFileSync(join(localOut, "manifest.json"), "utf8")) as Manifest;
    const b = JSON.parse(readFileSync(join(remoteOut, "manifest.json"), "utf8")) as Manifest;
    expect(b.tasks.count).toBe(a.tasks.count);
    expect(b.tasks.count).toBeGreaterThan(1);
    expect(b.counts).toEqual(a.counts);
    expect(b.counts.quarantined).toBe(0);
    expect(b.tokens).toEqual(a.tokens);
    expect(b.inputs.map((input) => input.path)).toEqual([`s3://${BUCKET}/fineweb/explainers.parquet`]);
    expect(filesUnder(join(remoteOut, "data"))).toEqual(filesUnder(join(localOut, "data")));
    const [localRows, remoteRows] = [await shardRows(localOut), await shardRows(remoteOut)];
    expect(remoteRows.byId.size).toBe(9);
    expect([...remoteRows.byId]).toEqual([...localRows.byId]);
    for (const source of remoteRows.sources) expect(source).toMatch(/^s3:\/\/knowledge\/fineweb\/explainers\.parquet#row=\d+$/);
    expect(`${ran.stdout}${ran.stderr}`).not.toContain(S3_SECRET);
    expect(`${ran.stdout}${ran.stderr}`).not.toContain(S3_KEY_ID);
  });

  it("fetches only ranges of the object, and rides out throttling and a connection reset mid-chunk", async () => {
    // format named: no sniff reads the head, so every GET of the object below is the decoder's (or the 4-byte compression probe).
    const remote = writeConfig(`inputs:\n  - path: s3://${BUCKET}/${KEY}\n    format: text-parquet\n${SETTINGS}`, tempDir());
    proxy.reset();
    proxy.inject({ operation: "get", key: KEY, fault: { kind: "slowdown" }, times: 2 });
    // Inside the first row group's text chunk: its body is cut there once, and fetched again.
    const reset = proxy.inject({ operation: "get", key: KEY, fault: { kind: "reset", atByte: 9000 }, times: 1 });
    const localOut = await localOutput();
    await cliViaProxy("run", remote, "--progress", "none", "--workers", "2");
    expect(reset.hits).toBe(1);
    const gets = proxy.requests("get", KEY);
    expect(gets.length).toBeGreaterThan(4);
    for (const get of gets) expect(get.range, "every GET asks for a range").toMatch(/^bytes=\d+-\d+$/);
    const size = readFileSync(PARQUET).length;
    for (const get of gets) {
      const [start, end] = (get.range?.match(/^bytes=(\d+)-(\d+)$/) ?? []).slice(1).map(Number);
      expect((end as number) - (start as number)).toBeLessThan(size / 2);
    }
    const remoteOut = join(remote, "..", "out");
    expect([...(await shardRows(remoteOut)).byId]).toEqual([...(await shardRows(localOut)).byId]);
  });

  it("reports a range that cannot be read after its retries as the file failing to read, not as undecodable rows", async () => {
    const remote = writeConfig(`inputs:\n  - path: s3://${BUCKET}/${KEY}\n    format: text-parquet\n${SETTINGS}`, tempDir());
    proxy.reset();
    proxy.inject({ operation: "get", key: KEY, fault: { kind: "reset", atByte: 9000 }, times: Number.POSITIVE_INFINITY });
    // 3 attempts, not the default 8: the same give-up path, without waiting out ~10 s of backoff (100 ms doubling to 5 s).
    const ran = await cliViaProxyWith({ AWS_MAX_ATTEMPTS: "3" }, "run", remote, "--progress", "none");
    proxy.reset();
    const out = join(remote, "..", "out");
    const entries = readdirSync(join(out, "quarantine")).flatMap((name) =>
      readFileSync(join(out, "quarantine", name), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { reason: string; source: { uri: string } }),
    );
    // The task holding row group 0 stops with one entry naming the object and the failed read; the other groups are read.
    expect(entries).toHaveLength(1);
    expect(entries[0]?.source.uri).toBe(`s3://${BUCKET}/${KEY}`);
    expect(entries[0]?.reason).toMatch(new RegExp(`^file unreadable: s3://${BUCKET}/${KEY}: reading the file failed: .*byte 9000`));
    expect(`${ran.stdout}${ran.stderr}`).not.toContain(S3_SECRET);
  });
});
