import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { tableFromIPC } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Manifest } from "../src/output/manifest.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { expectSameBytes, products, writeCorpus } from "./scale-helpers.ts";
import { MotoServer, S3_KEY_ID, S3_SECRET } from "./support/moto-server.ts";
import { type ProxyLogEntry, S3FaultProxy } from "./support/s3-fault-proxy.ts";

// Reading inputs from S3-compatible storage when the storage misbehaves: moto's server behind a
// fault-injecting proxy (test/support/s3-fault-proxy.ts), the real CLI pointed at the proxy.

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const BUCKET = "faults";
const moto = new MotoServer();
let proxy: S3FaultProxy;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI as a child process (asynchronously: the proxy runs in this process). */
async function cli(args: string[], env: NodeJS.ProcessEnv = {}, nodeFlags: string[] = []): Promise<Ran> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [...nodeFlags, CLI, ...args], {
      cwd: ROOT,
      env: { ...moto.env(proxy.endpoint), ...env },
      maxBuffer: 1 << 26,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === "number" ? failed.code : 1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

async function put(key: string, body: Uint8Array | string): Promise<void> {
  await moto.client().send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
}

/** Every file under `dir`, relative, sorted. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

function plain(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value === null || typeof value !== "object") return value;
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>);
  if (Array.isArray(value)) return value.map(plain);
  const vector = value as { toArray?: () => unknown; toJSON?: () => unknown };
  if (typeof vector.toArray === "function") return plain(vector.toArray());
  if (typeof vector.toJSON === "function") return plain(vector.toJSON());
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
}

/** An output's shards as comparable values (per shard file, its metadata and every column): a difference shows as values. */
function shardContent(out: string): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const name of files(join(out, "data"))) {
    const table = tableFromIPC(parquet.readParquet(new Uint8Array(readFileSync(join(out, "data", name)))).intoIPCStream());
    const columns: Record<string, unknown> = {};
    for (const field of table.schema.fields) {
      const column = table.getChild(field.name);
      columns[field.name] = Array.from({ length: table.numRows }, (_, row) => plain(column?.get(row)));
    }
    content[name] = { rows: table.numRows, metadata: Object.fromEntries(table.schema.metadata), columns };
  }
  return content;
}

function manifest(out: string): Manifest {
  return JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as Manifest;
}

/** The job's quarantine entries (every quarantine file's lines). */
function quarantine(out: string): string[] {
  const dir = join(out, "quarantine");
  let names: string[];
  try {
    names = files(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) =>
    readFileSync(join(dir, name), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== ""),
  );
}

/** No credential in the run's stdout/stderr or in any file of its output. */
function expectNoSecrets(out: string, ...logs: Ran[]): void {
  for (const ran of logs) {
    const text = `${ran.stdout}${ran.stderr}`;
    expect(text.includes(S3_SECRET) || text.includes(S3_KEY_ID), "a CLI log names a credential").toBe(false);
  }
  for (const name of existsSync(out) ? files(out) : []) {
    const bytes = readFileSync(join(out, name)).toString("latin1");
    expect(bytes.includes(S3_SECRET) || bytes.includes(S3_KEY_ID), name).toBe(false);
  }
}

/**
 * A JSONL corpus of `records` trajectories, each followed by whitespace-only lines (which every
 * reader skips) to about `bytesPerRecord`: an object of many bytes (for byte offsets, byte-range
 * tasks and what a read holds in memory) with few records to tokenize, which take the time.
 */
function paddedCorpus(dir: string, records: number, bytesPerRecord: number, seed = 7): Buffer {
  const plainPath = join(dir, `corpus-${records}.jsonl`);
  writeCorpus(plainPath, records, seed);
  const padLine = `${" ".repeat(255)}\n`;
  const lines = readFileSync(plainPath, "utf8")
    .split("\n")
    .filter((line) => line !== "");
  return Buffer.from(
    lines.map((line) => `${line}\n${padLine.repeat(Math.max(0, Math.floor((bytesPerRecord - line.length - 1) / 256)))}`).join(""),
  );
}

/**
 * A local folder with a JSONL corpus and the demo's gzip MCP file, and the same objects under
 * `s3://faults/<prefix>/`; with `bytesPerRecord`, the corpus is padded (paddedCorpus).
 */
async function stage(
  prefix: string,
  records: number,
  seed: number,
  bytesPerRecord?: number,
): Promise<{ local: string; corpusBytes: number }> {
  const local = tempDir("lwm-s3-faults-");
  if (bytesPerRecord === undefined) writeCorpus(join(local, "corpus.jsonl"), records, seed);
  else writeFileSync(join(local, "corpus.jsonl"), paddedCorpus(tempDir("lwm-s3-faults-plain-"), records, bytesPerRecord, seed));
  const mcp = join(ROOT, "data/demo/mcp/everything.jsonl.gz");
  mkdirSync(join(local, "mcp"));
  writeFileSync(join(local, "mcp/everything.jsonl.gz"), readFileSync(mcp));
  const corpus = readFileSync(join(local, "corpus.jsonl"));
  await put(`${prefix}/corpus.jsonl`, corpus);
  await put(`${prefix}/mcp/everything.jsonl.gz`, readFileSync(mcp));
  return { local, corpusBytes: corpus.length };
}

/**
 * The same job over the local folder and over the bucket, each with `input.root` naming where its
 * inputs are: labels relative to it match, so the two outputs can match byte for byte.
 */
function jobs(local: string, prefix: string, settings: string): { localConfig: string; s3Config: string } {
  const inputs = "inputs:\n  - path: corpus.jsonl\n  - path: mcp/*\n";
  const localConfig = writeConfig(`${inputs}${settings.replace("input: {", `input: { root: ${local},`)}`, local);
  const s3Config = writeConfig(
    `${inputs}${settings.replace("input: {", `input: { root: s3://${BUCKET}/${prefix},`)}`,
    tempDir("lwm-s3-faults-job-"),
  );
  return { localConfig, s3Config };
}

const outOf = (config: string) => join(config, "..", "out");

const savedEnv = { ...process.env };

beforeAll(async () => {
  await moto.start();
  proxy = await new S3FaultProxy(moto.endpoint).start();
  await moto.createBucket(BUCKET);
  // openS3 in this process (the in-process tests below) reads through the proxy too.
  Object.assign(process.env, moto.env(proxy.endpoint));
});

afterAll(async () => {
  process.env = savedEnv;
  await proxy?.stop();
  moto.stop();
});

describe("S3 inputs through a faulty connection", () => {
  it("throttling (503 SlowDown) and 500s on list and GET requests are retried: the job equals the same job on local files", async () => {
    const { local } = await stage("a", 400, 3);
    const settings = "input: { task_bytes: 150000 }\noutput: { dir: out, num_buckets: 2 }\n";
    const { localConfig, s3Config } = jobs(local, "a", settings);
    proxy.reset();
    const faults = [
      // Each throttling answer costs a second or two: the SDK's throttling backoff, then its adaptive
      // rate limiter holds the following requests back a while.
      proxy.inject({ operation: "list", fault: { kind: "slowdown" }, times: 1 }),
      proxy.inject({ operation: "get", key: "a/corpus.jsonl", fault: { kind: "slowdown" }, times: 2 }),
      proxy.inject({ operation: "get", key: "a/mcp/everything.jsonl.gz", fault: { kind: "internal" }, times: 2 }),
    ];
    // Side by side: the local run takes no request, and the S3 run spends seconds waiting out the SDK's backoff.
    const [localRun, s3Run] = await Promise.all([
      cli(["run", localConfig, "--progress", "none"]),
      cli(["run", s3Config, "--progress", "none", "--workers", "2"]),
    ]);
    expect(localRun.code, localRun.stderr).toBe(0);
    expect(s3Run.code, s3Run.stderr).toBe(0);
    // Every fault was met (and retried past).
    expect(faults.map((fault) => fault.hits)).toEqual([1, 2, 2]);
    const [a, b] = [manifest(outOf(localConfig)), manifest(outOf(s3Config))];
    expect(b.tasks.count).toBeGreaterThan(2);
    expect(b.counts).toEqual(a.counts);
    expect(b.counts.quarantined).toBe(0);
    expect(files(join(outOf(s3Config), "data"))).toEqual(files(join(outOf(localConfig), "data")));
    expect(shardContent(outOf(s3Config))).toEqual(shardContent(outOf(localConfig)));
    expectSameBytes(products(outOf(s3Config)), products(outOf(localConfig)));
    expectNoSecrets(outOf(s3Config), s3Run);
  });

  it("a connection reset mid-object resumes from the next byte (If-Match on the ETag): same rows, nothing quarantined", async () => {
    // 1,000 records padded to over 4 MB: the object, byte offsets and byte-range tasks of 4,000
    // unpadded records, with a quarter of the records to tokenize.
    const { local, corpusBytes } = await stage("b", 1000, 4, 4200);
    expect(corpusBytes).toBeGreaterThan(4_000_000);
    // Byte-range tasks of ~1.5 MB: resets land in the first GET of a task and in resumed GETs.
    const settings = "input: { task_bytes: 1500000 }\noutput: { dir: out, num_buckets: 2 }\n";
    const { localConfig, s3Config } = jobs(local, "b", settings);
    // Each cut is in the middle of a record's line (not in the padding): a resumed GET continues a line cut in two.
    const corpus = readFileSync(join(local, "corpus.jsonl"));
    const inRecord = (near: number) => {
      const start = corpus.indexOf("{", near);
      return Math.floor((start + corpus.indexOf("\n", start)) / 2);
    };
    proxy.reset();
    const key = "b/corpus.jsonl";
    const resets = [
      proxy.inject({ key, fault: { kind: "reset", atByte: inRecord(700_000) } }),
      // Twice at the same byte: two failures in a row.
      proxy.inject({ key, fault: { kind: "reset", atByte: inRecord(2_000_000) }, times: 2 }),
      proxy.inject({ key, fault: { kind: "reset", atByte: inRecord(3_900_000) } }),
    ];
    const localRun = await cli(["run", localConfig, "--progress", "none"]);
    expect(localRun.code, localRun.stderr).toBe(0);
    const s3Run = await cli(["run", s3Config, "--progress", "none", "--workers", "2"]);
    expect(s3Run.code, s3Run.stderr).toBe(0);
    expect(resets.map((reset) => reset.hits)).toEqual([1, 2, 1]);
    // Each cut was followed by a ranged GET from the first byte not yet delivered (a reset drops what
    // the client had not read yet, so that can be before the cut) to the object's end, pinned to its ETag.
    const etag = proxy.requests("get", key).find((request) => request.ifMatch)?.ifMatch;
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    const resumed = proxy.requests("get", key).filter((request) => request.ifMatch !== undefined);
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    for (const request of resumed) {
      expect(request.ifMatch).toBe(etag);
      expect(request.range).toMatch(new RegExp(`^bytes=\\d+-${corpusBytes - 1}$`));
    }
    const [a, b] = [manifest(outOf(localConfig)), manifest(outOf(s3Config))];
    expect(b.tasks.count).toBe(a.tasks.count);
    expect(b.tasks.count).toBeGreaterThanOrEqual(3);
    expect(b.counts).toEqual(a.counts);
    expect(quarantine(outOf(s3Config))).toEqual([]);
    expect(shardContent(outOf(s3Config))).toEqual(shardContent(outOf(localConfig)));
    expectSameBytes(products(outOf(s3Config)), products(outOf(localConfig)));
    expectNoSecrets(outOf(s3Config), s3Run);
  });

  it("a failure that does not pass is a clear error naming the object (and byte), never a credential", async () => {
    const { local } = await stage("c", 1500, 5);
    const settings = "input: {}\noutput: { dir: out, num_buckets: 2 }\n";
    const env = { AWS_MAX_ATTEMPTS: "3" };

    // A connection that always breaks at the same byte: the records before it are kept, the break is quarantined.
    proxy.reset();
    const cut = proxy.inject({ key: "c/corpus.jsonl", fault: { kind: "reset", atByte: 600_000 }, times: Number.POSITIVE_INFINITY });
    let { s3Config } = jobs(local, "c", settings);
    const broken = await cli(["run", s3Config, "--progress", "none"], env);
    expect(broken.code, broken.stderr).toBe(0);
    // At least the last AWS_MAX_ATTEMPTS reads stopped at the byte itself (earlier ones may have made progress).
    expect(cut.hits).toBeGreaterThanOrEqual(3);
    const entries = quarantine(outOf(s3Config));
    expect(entries).toHaveLength(1);
    // The byte named is the cut's (or, if a reset dropped bytes the reader had not taken three times in a row, just before it).
    const stopped =
      /file unreadable after line \d+: s3:\/\/faults\/c\/corpus\.jsonl: reading stopped at byte (\d+) after 3 attempt\(s\) \(AWS_MAX_ATTEMPTS=3\): /.exec(
        entries[0] ?? "",
      );
    expect(stopped, entries[0]).not.toBeNull();
    expect(Number(stopped?.[1])).toBeGreaterThan(0);
    expect(Number(stopped?.[1])).toBeLessThanOrEqual(600_000);
    expect(manifest(outOf(s3Config)).counts.records_in).toBeGreaterThan(400);
    expectNoSecrets(outOf(s3Config), broken);

    // Every GET of the object answered 500 (after the SDK's retries).
    proxy.reset();
    proxy.inject({ operation: "get", key: "c/corpus.jsonl", fault: { kind: "internal" }, times: Number.POSITIVE_INFINITY });
    s3Config = jobs(local, "c", settings).s3Config;
    const failing = await cli(["run", s3Config, "--progress", "none"], env);
    // The plan reads the object's first bytes (to detect its format and compression): the job stops there, naming it.
    expect(failing.code).not.toBe(0);
    expect(failing.stderr).toMatch(
      /^lwm-data: s3:\/\/faults\/c\/corpus\.jsonl: cannot read the object: InternalError \(HTTP 500\): We encountered an internal error/,
    );
    expectNoSecrets(outOf(s3Config), failing);

    // A bucket that cannot be listed: the job stops before it starts, naming the location.
    proxy.reset();
    proxy.inject({ operation: "list", fault: { kind: "slowdown" }, times: Number.POSITIVE_INFINITY });
    s3Config = jobs(local, "c", settings).s3Config;
    const unlisted = await cli(["run", s3Config, "--progress", "none"], env);
    expect(unlisted.code).not.toBe(0);
    expect(unlisted.stderr).toMatch(/s3:\/\/faults\/c\/corpus\.jsonl: cannot list the bucket: SlowDown \(HTTP 503\)/);
    expectNoSecrets(outOf(s3Config), unlisted);
    expect(proxy.requests("list").length).toBe(3);
  });
});

describe("openS3 resuming a broken body", () => {
  it("a byte range read across two resets gives exactly its bytes", async () => {
    const { openS3 } = await import("../src/io/s3/s3-objects.ts");
    const bytes = Buffer.alloc(3_000_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
    await put("d/range.bin", bytes);
    proxy.reset();
    const resets = [
      proxy.inject({ key: "d/range.bin", fault: { kind: "reset", atByte: 250_000 } }),
      proxy.inject({ key: "d/range.bin", fault: { kind: "reset", atByte: 1_999_999 } }),
    ];
    const stream = await openS3(`s3://${BUCKET}/d/range.bin`, { start: 100_000, end: 2_500_000 });
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    expect(resets.map((reset) => reset.hits)).toEqual([1, 1]);
    expect(Buffer.concat(chunks).equals(bytes.subarray(100_000, 2_500_000))).toBe(true);
    // The first GET, then one from each cut (or a little before it: a reset drops what the reader had not taken yet).
    const starts = proxy.requests("get", "d/range.bin").map((request) => {
      expect(request.range).toMatch(/^bytes=\d+-2499999$/);
      return Number(/^bytes=(\d+)/.exec(request.range ?? "")?.[1]);
    });
    expect(starts).toHaveLength(3);
    expect(starts[0]).toBe(100_000);
    expect(starts[1]).toBeGreaterThan(100_000);
    expect(starts[1]).toBeLessThanOrEqual(250_000);
    expect(starts[2]).toBeGreaterThan(250_000);
    expect(starts[2]).toBeLessThanOrEqual(1_999_999);
  });

  it("an object replaced between a reset and the resumed GET is an error, never a mix of two versions", async () => {
    const { openS3 } = await import("../src/io/s3/s3-objects.ts");
    const key = "d/replaced.jsonl";
    await put(key, "a".repeat(1_000_000));
    proxy.reset();
    proxy.inject({ key, fault: { kind: "reset", atByte: 300_000 } });
    // The resumed GET waits at the proxy while the object is replaced.
    let replaced: Promise<void> | undefined;
    const onFault = (entry: ProxyLogEntry) => {
      if (entry.fault === "reset") replaced ??= put(key, "b".repeat(1_000_000));
    };
    proxy.on("fault", onFault);
    const delay = proxy.inject({ operation: "get", key, fault: { kind: "delay", ms: 400 }, times: Number.POSITIVE_INFINITY });
    const stream = await openS3(`s3://${BUCKET}/${key}`);
    let read = "";
    const failure = await (async () => {
      for await (const chunk of stream as AsyncIterable<Buffer>) read += chunk.toString("latin1");
    })().then(
      () => undefined,
      (err: Error) => err.message,
    );
    proxy.off("fault", onFault);
    await replaced;
    expect(delay.hits).toBeGreaterThanOrEqual(2);
    expect(failure).toMatch(/^s3:\/\/faults\/d\/replaced\.jsonl: the object changed while it was read .*stopped at byte \d+$/);
    // Only the first version's bytes, up to the byte named (the cut, or before it if the reset dropped some).
    expect(read.length).toBe(Number(/byte (\d+)$/.exec(failure ?? "")?.[1]));
    expect(read.length).toBeLessThanOrEqual(300_000);
    expect(read).toBe("a".repeat(read.length));
  });
});

describe("memory of S3 reads", () => {
  /** A preload that writes the process's peak RSS (KiB) to $LWM_PEAK_RSS at exit; it survives the launcher's re-exec. */
  function peakRssPreload(): string {
    const path = join(tempDir("lwm-peak-rss-"), "peak-rss.mjs");
    writeFileSync(
      path,
      [
        'import { appendFileSync } from "node:fs";',
        'import { isMainThread } from "node:worker_threads";',
        "const file = process.env.LWM_PEAK_RSS;",
        'if (file && isMainThread) process.on("exit", () => appendFileSync(file, String(process.resourceUsage().maxRSS) + "\\n"));',
        "",
      ].join("\n"),
    );
    return pathToFileURL(path).href;
  }

  it("peak RSS of a job over a 10× larger object stays within 1.3× of the 1× run", async () => {
    const preload = peakRssPreload();
    const dir = tempDir("lwm-s3-memory-");
    const sizes: Record<string, number> = {};
    // Objects of ~8 and ~80 MB (the bytes streamed grow past what the pipeline's own per-record
    // memory would hide: a read that buffered an object, or ignored backpressure, shows), with
    // 100 and 1,000 records of ~80 KB each to tokenize.
    for (const [name, records] of [
      ["small", 100],
      ["large", 1000],
    ] as const) {
      const body = paddedCorpus(dir, records, 80_000);
      sizes[name] = body.length;
      await put(`m/${name}.jsonl`, body);
    }
    expect(sizes.small).toBeGreaterThan(7_000_000);
    expect(sizes.large).toBeGreaterThan(9.5 * (sizes.small ?? 0));
    const peaks: Record<string, number> = {};
    for (const name of ["small", "large"]) {
      // Same task size for both: the 1× run is one task, the 10× run ten, one after another (one
      // worker). Straight to the server, not through the proxy.
      const config = writeConfig(
        `inputs:\n  - path: s3://${BUCKET}/m/${name}.jsonl\ninput: { task_bytes: ${sizes.small} }\noutput: { dir: out, num_buckets: 2 }\n`,
        tempDir("lwm-s3-memory-job-"),
      );
      const report = join(dir, `${name}.rss`);
      const env = { LWM_PEAK_RSS: report, AWS_ENDPOINT_URL: moto.endpoint };
      const ran = await cli(["run", config, "--progress", "none", "--workers", "1"], env, ["--import", preload]);
      expect(ran.code, ran.stderr).toBe(0);
      expect(manifest(outOf(config)).counts.records_in).toBe(name === "small" ? 100 : 1000);
      peaks[name] = Number(readFileSync(report, "utf8").trim().split("\n").at(-1));
    }
    const [small, large] = [peaks.small ?? 0, peaks.large ?? 0];
    console.log(
      `S3 reads, peak RSS: ${(small / 1024).toFixed(0)} MiB over ${(sizes.small ?? 0) >> 20} MiB, ${(large / 1024).toFixed(0)} MiB over ${(sizes.large ?? 0) >> 20} MiB (${(large / small).toFixed(2)}×)`,
    );
    expect(small).toBeGreaterThan(0);
    expect(large / small).toBeLessThan(1.3);
  });
});
