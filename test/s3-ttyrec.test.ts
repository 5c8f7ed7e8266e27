/**
 * ttyrec recordings in S3-compatible object storage (src/read/ttyrec.ts, src/read/registry.ts
 * `detectFormat`): told from the object's first bytes as they are from a local file's, plain or
 * gzip-compressed; other objects are not taken. moto's server stands in for the bucket.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectFormat } from "../src/read/registry.ts";
import { ttyrecReader } from "../src/read/ttyrec.ts";
import { collect, ROOT } from "./helpers.ts";
import { MotoServer } from "./support/moto-server.ts";

const BUCKET = "recordings";
const SESSION = join(ROOT, "test/fixtures/recorded/ttyrec/session.ttyrec");
const moto = new MotoServer();
let restoreEnv = () => {};

beforeAll(async () => {
  await moto.start();
  // detectFormat runs in this process on the bucket's URIs (the S3 client reads these).
  restoreEnv = moto.useInProcess();
  await moto.createBucket(BUCKET);
  const put = (Key: string, Body: Buffer) => moto.client().send(new PutObjectCommand({ Bucket: BUCKET, Key, Body }));
  const session = readFileSync(SESSION);
  await put("games/session.rec", session);
  await put("games/session.rec.gz", gzipSync(session));
  // The first two frames, then a header that cannot be one: not a recording.
  const broken = Buffer.from(session.subarray(0, 200));
  broken.writeUInt32LE(0xffffffff, 4 + 12 + session.readUInt32LE(8) + 12 + session.readUInt32LE(12 + session.readUInt32LE(8) + 8));
  await put("games/broken.rec", broken);
  await put("games/notes.txt", Buffer.from("not a recording\n"));
}, 60_000);

afterAll(() => {
  moto.stop();
  restoreEnv();
});

async function formatOf(path: string): Promise<string> {
  const detection = await detectFormat(path);
  return detection.kind === "format" ? detection.reader.name : detection.kind;
}

describe("ttyrec recordings in a bucket", () => {
  it("are told from the object's bytes, plain or gzip-compressed, and read as the local file is", async () => {
    expect(await formatOf(`s3://${BUCKET}/games/session.rec`)).toBe("ttyrec");
    expect(await formatOf(`s3://${BUCKET}/games/session.rec.gz`)).toBe("ttyrec");
    const [local] = await collect(ttyrecReader.read(SESSION, { maxLineBytes: 1 << 20 }));
    const [remote] = await collect(ttyrecReader.read(`s3://${BUCKET}/games/session.rec.gz`, { maxLineBytes: 1 << 20 }));
    expect(remote?.kind).toBe("trajectory");
    if (local?.kind !== "trajectory" || remote?.kind !== "trajectory") return;
    expect(remote.trajectory.id).toBe(local.trajectory.id);
  });

  it("negative controls: a broken recording and a text object are not taken", async () => {
    expect(await formatOf(`s3://${BUCKET}/games/broken.rec`)).toBe("unrecognized");
    expect(await formatOf(`s3://${BUCKET}/games/notes.txt`)).toBe("unrecognized");
  });
});
