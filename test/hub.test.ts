import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { listFiles } from "@huggingface/hub";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UserError } from "../src/core/errors.ts";
import type { HubProgressEvent } from "../src/hub/hub-common.ts";
import { hubPull } from "../src/hub/hub-pull.ts";
import { type HubPushOptions, hubPush } from "../src/hub/hub-push.ts";
import { collect, tempDir } from "./helpers.ts";
import { FakeHubServer } from "./support/fake-hub-server.ts";

const TOKEN = "hf_fakeHubTestToken4f9a2c7e1b";
const REPO = "lwm/demo-shards";

/** Random bytes with a NUL up front, so the Hub's binary sniffing sends them to LFS whatever their size. */
function binary(size: number): Buffer {
  const bytes = randomBytes(size);
  bytes[0] = 0;
  return bytes;
}

/** What a finished run leaves behind, plus bookkeeping that must never be uploaded. */
function makeOutputFolder(): { dir: string; expected: Map<string, Buffer> } {
  const dir = tempDir("lwm-hub-out-");
  const expected = new Map<string, Buffer>([
    ["data/shard-00000-00000-0000.parquet", binary(1_500_000)],
    ["data/shard-00000-00001-0000.parquet", binary(2_100_000)],
    ["data/shard-00001-00000-0000.parquet", binary(1_200_000)],
    ["stats/turns-00000-0000.parquet", binary(4_000)],
    ["quarantine/task-00000.jsonl", Buffer.from('{"file":"a.jsonl","line":3,"reason":"no turns"}\n')],
    ["manifest.json", Buffer.from('{"counts":{"records_in":3,"samples_out":2,"quarantined":1}}\n')],
    ["README.md", Buffer.from("---\nlicense: other\n---\n# demo shards\n")],
  ]);
  const bookkeeping = new Map<string, Buffer>([
    ["tasks/plan.json", Buffer.from("{}")],
    ["launch/slurm-array.sbatch", Buffer.from("#!/bin/bash\n")],
    ["data/shard-00002-00000-0000.parquet.tmp", binary(10)],
  ]);
  for (const [path, content] of [...expected, ...bookkeeping]) writeFile(join(dir, path), content);
  return { dir, expected };
}

function writeFile(path: string, content: Buffer | string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join("/"))
    .sort();
}

function sha256(content: Buffer): string {
  return createHash("sha256").update(content).digest("hex");
}

/** Runs `promise` expecting it to fail, and returns the error for closer checks. */
async function failure(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(outcome instanceof Error)) throw new Error("expected a failure, the call succeeded");
  return outcome;
}

let hub: FakeHubServer;

beforeEach(async () => {
  // A small page size makes every listing use the Link-header pagination.
  hub = await new FakeHubServer({ token: TOKEN, pageSize: 3 }).start();
});

afterEach(async () => {
  expect(hub.unhandled).toEqual([]);
  await hub.stop();
});

function push(dir: string, extra: Partial<HubPushOptions> = {}) {
  return hubPush({ dir, repo: REPO, hubUrl: hub.url, token: TOKEN, batchSize: 2, ...extra });
}

function pull(destDir: string, extra: { include?: string[]; repo?: string; token?: string } = {}) {
  return hubPull({ repo: REPO, destDir, hubUrl: hub.url, token: TOKEN, ...extra });
}

function commitsWith(path: string): number[] {
  return hub
    .commits(REPO)
    .map((commit, index) => (commit.added.includes(path) ? index : -1))
    .filter((index) => index >= 0);
}

/** sha256 → upload count, for every LFS file of the output folder. */
function lfsUploadCounts(expected: Map<string, Buffer>): number[] {
  return [...expected]
    .filter(([path]) => hub.fileKind(REPO, path) === "lfs")
    .map(([, content]) => hub.uploadsByOid.get(sha256(content)) ?? 0);
}

function resolveGets(path: string): number {
  return hub.requests.filter((request) => request.method === "GET" && request.path.endsWith(`/resolve/main/${path}`)).length;
}

describe("hub push and pull round trip", () => {
  it("uploads an output folder (shards first, manifest and card last) and pulls it back byte-identical", async () => {
    const { dir, expected } = makeOutputFolder();
    const progress: HubProgressEvent[] = [];
    const pushed = await push(dir, { onProgress: (event) => progress.push(event) });

    expect([...pushed.uploaded].sort()).toEqual([...expected.keys()].sort());
    expect(pushed.skipped).toEqual([]);
    // 5 body files in batches of 2 → 3 commits, then the manifest commit.
    expect(pushed.commits).toBe(4);
    expect(pushed.uploaded.slice(-2)).toEqual(["manifest.json", "README.md"]);
    expect(progress.map((event) => event.done)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(progress.every((event) => event.total === 7 && event.bytes === expected.get(event.file)?.length)).toBe(true);

    const remote = hub.files(REPO);
    expect([...remote.keys()].sort()).toEqual([".gitattributes", ...expected.keys()].sort());
    for (const [path, content] of expected) expect(remote.get(path)?.equals(content), path).toBe(true);
    // Both upload paths were exercised: LFS for binary shards, inline base64 for small text.
    expect(hub.fileKind(REPO, "data/shard-00000-00001-0000.parquet")).toBe("lfs");
    expect(hub.fileKind(REPO, "stats/turns-00000-0000.parquet")).toBe("lfs");
    expect(hub.fileKind(REPO, "quarantine/task-00000.jsonl")).toBe("regular");
    expect(hub.fileKind(REPO, "manifest.json")).toBe("regular");

    const commits = hub.commits(REPO);
    expect(commits).toHaveLength(5); // the repo's initial commit + ours
    expect(commits.at(-1)?.added.sort()).toEqual(["README.md", "manifest.json"]);
    expect(commitsWith("manifest.json")).toEqual([commits.length - 1]);
    expect(commitsWith("README.md")).toEqual([commits.length - 1]);

    // Classic LFS only: the client never offered Xet to the server.
    expect(hub.batchTransfers.length).toBeGreaterThan(0);
    for (const transfers of hub.batchTransfers) expect(transfers).not.toContain("xet");

    const dest = tempDir("lwm-hub-pull-");
    const pulled = await pull(dest);
    expect(pulled.files.map((file) => file.path)).toEqual([".gitattributes", ...expected.keys()].sort());
    expect(pulled.files.every((file) => !file.skipped)).toBe(true);
    for (const [path, content] of expected) {
      expect(readFileSync(join(dest, path)).equals(content), path).toBe(true);
      expect(pulled.files.find((file) => file.path === path)?.sha256).toBe(sha256(content));
    }
    expect(filesUnder(dest).filter((path) => path.endsWith(".tmp"))).toEqual([]);
    // The listing took several pages.
    expect(hub.requests.filter((request) => request.path.includes("/tree/main")).length).toBeGreaterThan(1);
  });

  it("sends the token as a Bearer header on every Hub API call", async () => {
    const { dir } = makeOutputFolder();
    await push(dir);
    await pull(tempDir("lwm-hub-pull-"));
    // Upload URLs are pre-signed (like S3): the library sends no token there. (Downloads do send
    // it to the redirect target: same origin here, the Hub's own CDN in real life.)
    const storage = (path: string) => path.startsWith("/lfs-upload/") || path.startsWith("/lfs-objects/");
    const api = hub.requests.filter((request) => !storage(request.path));
    expect(api.length).toBeGreaterThan(10);
    for (const request of api) expect(request.authorization, `${request.method} ${request.path}`).toBe(`Bearer ${TOKEN}`);
    const puts = hub.requests.filter((request) => request.method === "PUT");
    expect(puts.length).toBeGreaterThan(0);
    for (const request of puts) expect(request.authorization).toBeUndefined();
  });

  it("pulls only the files matching the include globs", async () => {
    const { dir } = makeOutputFolder();
    await push(dir);

    const shards = tempDir("lwm-hub-pull-");
    const result = await pull(shards, { include: ["data/**/*.parquet"] });
    const shardPaths = [
      "data/shard-00000-00000-0000.parquet",
      "data/shard-00000-00001-0000.parquet",
      "data/shard-00001-00000-0000.parquet",
    ];
    expect(result.files.map((file) => file.path)).toEqual(shardPaths);
    expect(filesUnder(shards)).toEqual(shardPaths);

    const small = tempDir("lwm-hub-pull-");
    await pull(small, { include: ["**/*.json", "quarantine/*"] });
    expect(filesUnder(small)).toEqual(["manifest.json", "quarantine/task-00000.jsonl"]);
  });
});

describe("hub push resumes", () => {
  it("an interrupted upload fails clearly; the rerun uploads only what is missing and the manifest only at the end", async () => {
    const { dir, expected } = makeOutputFolder();
    hub.injectFaults({ failAfterUploads: 2, mode: "status" });
    const err = await failure(push(dir));

    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toContain(`datasets/${REPO}`);
    expect(err.message).toContain("commit 2 of 4 (data/shard-00001-00000-0000.parquet and 1 more)");
    expect(err.message).toContain("injected upload failure");
    expect(err.message).toContain("rerun to resume");
    expect(err.message).not.toContain(TOKEN);
    // Only the first batch landed, and no manifest claims the repo is complete.
    expect([...hub.files(REPO).keys()].sort()).toEqual([
      ".gitattributes",
      "data/shard-00000-00000-0000.parquet",
      "data/shard-00000-00001-0000.parquet",
    ]);

    hub.resetCounters();
    const rerun = await push(dir);
    expect(rerun.skipped).toEqual(["data/shard-00000-00000-0000.parquet", "data/shard-00000-00001-0000.parquet"]);
    expect(rerun.uploaded).toEqual([
      "data/shard-00001-00000-0000.parquet",
      "quarantine/task-00000.jsonl",
      "stats/turns-00000-0000.parquet",
      "manifest.json",
      "README.md",
    ]);
    expect(rerun.commits).toBe(3);
    expect(lfsUploadCounts(expected)).toEqual([1, 1, 1, 1]);
    expect(commitsWith("manifest.json")).toEqual([hub.commits(REPO).length - 1]);
    for (const [path, content] of expected) expect(hub.files(REPO).get(path)?.equals(content), path).toBe(true);
  });

  it("a commit cut by a connection reset is retried without uploading its LFS objects again", async () => {
    const { dir, expected } = makeOutputFolder();
    hub.injectFaults({ failAfterCommits: 1, mode: "reset" });
    const err = await failure(push(dir));
    expect(err.message).toContain("commit 2 of 4");
    expect(err.message).toMatch(/fetch failed \(.+\)/); // the network cause, not just "fetch failed"
    // Commit 2's shard reached LFS storage, but no commit references it yet.
    expect(hub.uploadsByOid.get(sha256(expected.get("data/shard-00001-00000-0000.parquet") as Buffer))).toBe(1);
    expect(hub.files(REPO).has("data/shard-00001-00000-0000.parquet")).toBe(false);

    hub.resetCounters();
    await push(dir);
    // The LFS batch answered "already stored" for that shard: only the stats file was PUT.
    expect(hub.lfsPutAttempts).toBe(1);
    expect(lfsUploadCounts(expected)).toEqual([1, 1, 1, 1]);
    for (const [path, content] of expected) expect(hub.files(REPO).get(path)?.equals(content), path).toBe(true);
  });

  it("a push of an unchanged folder uploads nothing and makes no commit", async () => {
    const { dir, expected } = makeOutputFolder();
    await push(dir);
    hub.resetCounters();
    const again = await push(dir);
    expect(again).toEqual({ uploaded: [], skipped: [...expected.keys()].sort(), commits: 0 });
    expect(hub.lfsPutAttempts + hub.commitAttempts).toBe(0);
  });

  it("an old manifest is removed by the first commit of a changed push, so it never vouches for half-replaced shards", async () => {
    const { dir, expected } = makeOutputFolder();
    await push(dir);
    const changed = ["data/shard-00000-00000-0000.parquet", "data/shard-00001-00000-0000.parquet"];
    for (const path of changed) writeFile(join(dir, path), binary(1_300_000));
    writeFile(join(dir, "manifest.json"), '{"counts":{"records_in":4}}\n');

    hub.injectFaults({ failAfterUploads: 1 });
    await failure(push(dir, { batchSize: 1 }));
    const midway = hub.files(REPO);
    expect(midway.has("manifest.json")).toBe(false);
    expect(midway.get(changed[0] as string)?.equals(readFileSync(join(dir, changed[0] as string)))).toBe(true);

    hub.resetCounters();
    const rerun = await push(dir, { batchSize: 1 });
    expect(rerun.uploaded).toEqual([changed[1], "manifest.json"]);
    expect(hub.files(REPO).get("manifest.json")?.toString()).toBe('{"counts":{"records_in":4}}\n');
    expect(
      hub
        .files(REPO)
        .get("README.md")
        ?.equals(expected.get("README.md") as Buffer),
    ).toBe(true);
  });

  it("creates a private repo when asked, and needs a token to create one", async () => {
    const { dir } = makeOutputFolder();
    await push(dir, { private: true, files: ["manifest.json"] });
    expect(hub.visibility(REPO)).toBe("private");
    expect([...hub.files(REPO).keys()].sort()).toEqual([".gitattributes", "manifest.json"]);

    const open = await new FakeHubServer().start();
    try {
      const err = await failure(hubPush({ dir, repo: "lwm/other", hubUrl: open.url }));
      expect(err.message).toContain("creating it needs a token");
    } finally {
      await open.stop();
    }
  });
});

describe("hub pull resumes and checks what it writes", () => {
  it("does not download again a file already present with the same content", async () => {
    const { dir, expected } = makeOutputFolder();
    await push(dir);
    const dest = tempDir("lwm-hub-pull-");
    await pull(dest);

    const deleted = "data/shard-00000-00001-0000.parquet";
    const damaged = "data/shard-00001-00000-0000.parquet"; // same size, other bytes: must be fetched again
    rmSync(join(dest, deleted));
    writeFile(join(dest, damaged), binary(expected.get(damaged)?.length ?? 0));
    writeFile(join(dest, `${deleted}.tmp`), binary(100)); // what a killed pull leaves behind
    hub.resetCounters();

    const again = await pull(dest);
    const fetched = again.files.filter((file) => !file.skipped).map((file) => file.path);
    expect(fetched).toEqual([deleted, damaged]);
    for (const path of [...expected.keys(), ".gitattributes"])
      expect(resolveGets(path), path).toBe([deleted, damaged].includes(path) ? 1 : 0);
    for (const [path, content] of expected) expect(readFileSync(join(dest, path)).equals(content), path).toBe(true);
    expect(existsSync(join(dest, `${deleted}.tmp`))).toBe(false);
  });

  it("refuses a download whose bytes do not match the listing, leaving no file behind", async () => {
    const { dir } = makeOutputFolder();
    await push(dir);
    hub.injectFaults({ corruptDownloads: true });
    const dest = tempDir("lwm-hub-pull-");
    const err = await failure(pull(dest, { include: ["data/shard-00000-00000-0000.parquet"] }));
    expect(err.message).toMatch(/data\/shard-00000-00000-0000\.parquet arrived damaged/);
    expect(filesUnder(dest)).toEqual([]);
  });

  it.each([
    ["../escape.txt", "it contains '..'"],
    ["data/../../escape.txt", "it contains '..'"],
    ["/tmp/escape.txt", "it is absolute"],
  ])("refuses the server path %s before writing anything", async (hostilePath, reason) => {
    hub.seedFile("evil/repo", "innocent.txt", "fine");
    hub.seedFile("evil/repo", hostilePath, "pwned");
    const root = tempDir("lwm-hub-evil-");
    const dest = join(root, "dest");
    const err = await failure(pull(dest, { repo: "evil/repo" }));
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toBe(`hub datasets/evil/repo: refusing file path ${JSON.stringify(hostilePath)}: ${reason}`);
    expect(hub.requests.filter((request) => request.path.includes("/resolve/"))).toEqual([]);
    expect(existsSync(dest) ? filesUnder(dest) : []).toEqual([]);
    expect(filesUnder(root)).toEqual([]);
  });

  it("names the repo when it does not exist", async () => {
    const err = await failure(pull(tempDir("lwm-hub-pull-"), { repo: "lwm/missing" }));
    expect(err.message).toContain("hub pull datasets/lwm/missing: listing the repo's files failed: HTTP 404");
  });
});

describe("hub errors never show the token", () => {
  const WRONG = "hf_wrongTokenThatMustStaySecret42";

  it("the library alone would leak a token a server echoes back: the check below can fail", async () => {
    const { dir } = makeOutputFolder();
    await push(dir);
    hub.injectFaults({ echoAuthorization: true });
    const raw = await failure(collect(listFiles({ repo: { type: "dataset", name: REPO }, hubUrl: hub.url, accessToken: WRONG })));
    expect(raw.message).toContain(WRONG);
  });

  it("push and pull scrub it from their errors", async () => {
    const { dir } = makeOutputFolder();
    await push(dir);
    hub.injectFaults({ echoAuthorization: true });

    const pushErr = await failure(push(dir, { token: WRONG }));
    const pullErr = await failure(pull(tempDir("lwm-hub-pull-"), { token: WRONG }));
    for (const err of [pushErr, pullErr]) {
      expect(err.message).toContain("HTTP 401");
      expect(err.message).toContain(`datasets/${REPO}`);
      expect(err.message).not.toContain(WRONG);
      expect(err.message).not.toContain(WRONG.slice(3));
      expect(err.stack ?? "").not.toContain(WRONG);
    }
  });
});
