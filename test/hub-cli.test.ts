import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "./helpers.ts";
import { FakeHubServer } from "./support/fake-hub-server.ts";

const run = promisify(execFile);
const NODE = join(ROOT, "node_modules/.bin/node");
const CLI = join(ROOT, "bin/lwm-data.js");
const TOKEN = "hf_cliTestToken9d8e7f6a5b4c3";

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(dir, path));
    }
  };
  walk(dir);
  return out.sort();
}

describe("lwm-data hub push / pull (CLI, against a local Hub server)", () => {
  let hub: FakeHubServer;
  beforeAll(async () => {
    // Files ≥ 64 KiB go through LFS here (the Hub uses 10 MiB), so the demo shards exercise it.
    hub = await new FakeHubServer({ token: TOKEN, lfsThreshold: 64 * 1024 }).start();
  });
  afterAll(async () => hub.stop());

  it("pushes a finished output with its card and pulls it back byte for byte; the token is never printed", async () => {
    const out = join(tempDir(), "packed");
    const env = { ...process.env, HF_TOKEN: TOKEN, HF_ENDPOINT: hub.url };
    await run(NODE, [CLI, "run", join(ROOT, "configs/demo-packed.yaml"), "--output", out, "--progress", "none"]);

    const pushed = await run(NODE, [CLI, "hub", "push", out, "lwm/demo-packed", "--batch-size", "2"], { env });
    expect(pushed.stdout).toMatch(/hub push: lwm\/demo-packed: \d+ file\(s\) uploaded in \d+ commit\(s\), 0 already there/);
    // The demo was made with normalize.pii off: said before publishing, not refused.
    expect(pushed.stderr).toContain("note: personal data was not redacted");
    const again = await run(NODE, [CLI, "hub", "push", out, "lwm/demo-packed", "--no-progress"], { env });
    expect(again.stdout).toContain("0 file(s) uploaded in 0 commit(s)");
    expect(again.stdout).toContain("the repo already matches this output");

    const dest = tempDir();
    const pulled = await run(NODE, [CLI, "hub", "pull", "lwm/demo-packed", "--dest", dest, "--include", "data/*", "--include", "*.md"], {
      env,
    });
    expect(pulled.stdout).toMatch(/hub pull: \d+ file\(s\) of lwm\/demo-packed/);
    const pulledFiles = filesUnder(dest);
    expect(pulledFiles).toContain("README.md");
    expect(pulledFiles.filter((f) => f.startsWith("data/"))).toEqual(filesUnder(out).filter((f) => f.startsWith("data/")));
    expect(pulledFiles).not.toContain("manifest.json"); // --include filtered it out
    for (const file of pulledFiles) expect(readFileSync(join(dest, file)).equals(readFileSync(join(out, file))), file).toBe(true);
    // The run's bookkeeping stays local: tasks/ is not part of a dataset.
    expect([...hub.files("lwm/demo-packed").keys()].some((f) => f.startsWith("tasks/"))).toBe(false);

    for (const text of [pushed.stdout, pushed.stderr, again.stdout, pulled.stdout, pulled.stderr]) expect(text).not.toContain(TOKEN);

    // A damaged output is checked (lwm-data verify) and refused before anything is uploaded.
    const shard = join(out, pulledFiles.find((f) => f.startsWith("data/")) as string);
    const bytes = readFileSync(shard);
    const middle = bytes.length >> 1;
    bytes[middle] = (bytes[middle] as number) ^ 0xff;
    writeFileSync(shard, bytes);
    const commitsBefore = hub.commits("lwm/demo-packed").length;
    const refused = await run(NODE, [CLI, "hub", "push", out, "lwm/demo-packed"], { env }).catch(
      (err: { code: number; stderr: string }) => err,
    );
    expect("code" in refused && refused.code).toBe(1);
    expect((refused as { stderr: string }).stderr).toMatch(/does not match its manifest .*not pushing[\s\S]*sha256/);
    expect(hub.commits("lwm/demo-packed").length).toBe(commitsBefore);
  });

  it("refuses to push a folder without a manifest, and a wrong token fails with the repo named and the token hidden", async () => {
    const notDone = tempDir();
    const refused = await run(NODE, [CLI, "hub", "push", notDone, "lwm/x"], { env: { ...process.env, HF_TOKEN: TOKEN } }).catch(
      (err: { code: number; stderr: string }) => err,
    );
    expect("code" in refused && refused.code).toBe(1);
    expect((refused as { stderr: string }).stderr).toContain("has no manifest.json");

    const wrong = "hf_wrongTokenAAAABBBBCCCC1234";
    const failed = await run(NODE, [CLI, "hub", "pull", "lwm/demo-packed", "--dest", tempDir(), "--hub-url", hub.url], {
      env: { ...process.env, HF_TOKEN: wrong },
    }).catch((err: { code: number; stderr: string }) => err);
    expect("code" in failed && failed.code).toBe(1);
    const stderr = (failed as { stderr: string }).stderr;
    expect(stderr).toContain("lwm/demo-packed");
    expect(stderr).not.toContain(wrong);
  });
});
