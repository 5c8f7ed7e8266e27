import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Manifest } from "../src/output/manifest.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";
import { writeCorpus } from "./scale-helpers.ts";
import { MotoServer, S3_KEY_ID, S3_SECRET } from "./support/moto-server.ts";
import { filesUnder, shardRows } from "./support/output-rows.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const KEY_ID = S3_KEY_ID;
const SECRET = S3_SECRET;
const BUCKET = "trajectories";
const moto = new MotoServer();

async function cli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return exec(process.execPath, [CLI, ...args], { cwd: ROOT, env: moto.env(), maxBuffer: 1 << 26 });
}

beforeAll(async () => {
  await moto.start();
});

afterAll(() => {
  moto.stop();
});

describe("inputs in S3-compatible object storage", () => {
  it("reads s3:// globs (plain, gzip, zstd; a large object cut into byte-range tasks) to the same rows as the local files", async () => {
    const dir = tempDir();
    const corpus = join(dir, "local", "corpus.jsonl");
    await import("node:fs").then((fs) => fs.mkdirSync(join(dir, "local"), { recursive: true }));
    writeCorpus(corpus, 240);
    const mcp = join(ROOT, "data/demo/mcp");
    const client = moto.client();
    await moto.createBucket(BUCKET);
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "raw/corpus.jsonl", Body: readFileSync(corpus) }));
    for (const name of readdirSync(mcp).sort())
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `raw/mcp/${name}`, Body: readFileSync(join(mcp, name)) }));
    // Not matched by the globs below: listing must filter by pattern, not just by prefix.
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "raw/mcp-notes.txt", Body: "not an input" }));

    const settings = "input: { task_bytes: 60000 }\noutput: { dir: out, num_buckets: 2 }\n";
    const local = writeConfig(`inputs:\n  - path: ${corpus}\n  - path: ${mcp}/*\n${settings}`, join(dir, "local"));
    const remote = writeConfig(
      `inputs:\n  - path: s3://${BUCKET}/raw/corpus.jsonl\n  - path: s3://${BUCKET}/raw/mcp/*\n${settings}`,
      tempDir(),
    );

    const validate = await cli("validate", remote);
    expect(validate.stdout).toMatch(/s3:\/\/trajectories\/raw\/corpus\.jsonl .*format=canonical-jsonl/);
    expect(validate.stdout).toMatch(/everything\.jsonl\.gz .*format=canonical-jsonl/);
    expect(validate.stdout).not.toMatch(/mcp-notes/);

    await cli("run", local, "--progress", "none");
    const ran = await cli("run", remote, "--progress", "none", "--workers", "2");
    const localOut = join(dir, "local", "out");
    const remoteOut = join(remote, "..", "out");
    const a = JSON.parse(readFileSync(join(localOut, "manifest.json"), "utf8")) as Manifest;
    const b = JSON.parse(readFileSync(join(remoteOut, "manifest.json"), "utf8")) as Manifest;
    // The big object was cut into byte-range tasks, read with HTTP Range requests.
    expect(b.tasks.count).toBe(a.tasks.count);
    expect(b.tasks.count).toBeGreaterThan(2);
    expect(b.counts).toEqual(a.counts);
    expect(b.tokens).toEqual(a.tokens);
    expect(b.domains).toEqual(a.domains);
    // Same shards, same rows in the same order, same tokens and masks; only the source labels name the bucket.
    expect(filesUnder(join(remoteOut, "data"))).toEqual(filesUnder(join(localOut, "data")));
    const [localRows, remoteRows] = [await shardRows(localOut), await shardRows(remoteOut)];
    expect([...remoteRows.byId]).toEqual([...localRows.byId]);
    expect(remoteRows.sources.every((source) => source.startsWith(`s3://${BUCKET}/raw/`))).toBe(true);

    // Credentials reach no output file and no log line.
    for (const name of filesUnder(remoteOut).filter((file) => !file.startsWith("data/"))) {
      const text = readFileSync(join(remoteOut, name), "utf8");
      expect(text.includes(SECRET) || text.includes(KEY_ID), name).toBe(false);
    }
    expect(`${ran.stdout}${ran.stderr}`).not.toContain(SECRET);
    expect(await cli("verify", remoteOut).then((r) => r.stdout)).toMatch(/OK/);
  });

  it("says which object location matched nothing, and why a bucket cannot be listed", async () => {
    const none = writeConfig(`inputs:\n  - path: s3://${BUCKET}/nothing-here/*.jsonl\noutput: { dir: out }\n`, tempDir());
    await expect(cli("validate", none)).rejects.toMatchObject({
      stderr: expect.stringMatching(/s3:\/\/trajectories\/nothing-here\/\*\.jsonl matched no objects/),
    });
    const missing = writeConfig(`inputs:\n  - path: s3://no-such-bucket/*.jsonl\noutput: { dir: out }\n`, tempDir());
    const failure = await cli("validate", missing).then(
      () => "",
      (err: { stderr: string }) => err.stderr,
    );
    expect(failure).toMatch(/s3:\/\/no-such-bucket\/\*\.jsonl: cannot list the bucket: NoSuchBucket/);
    expect(failure).not.toContain(SECRET);
  });
});
