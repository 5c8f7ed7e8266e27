import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "./helpers.ts";
import { startFakeJudge } from "./support/fake-judge.ts";
import type { FakeScoreServer } from "./support/fake-score-server.ts";
import { startFakeTeacher } from "./support/fake-synthesis-teacher.ts";

/**
 * Every job config in configs/ run on the bundled demo data gives the output recorded in
 * test/golden/config-outputs.json, file by file (sha256). A change that moves code without
 * meaning to change output (the stage contract, a refactor) must keep these; a change that means
 * to change output regenerates them (`UPDATE_GOLDEN=1 npx vitest run test/golden-outputs.test.ts`)
 * and says so in its commit.
 */
const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const GOLDEN = join(ROOT, "test/golden/config-outputs.json");
/** The job configs `run` takes (defaults.yaml is merged under them; sft-*.yaml are `sft` jobs needing a teacher). */
const CONFIGS = readdirSync(join(ROOT, "configs"))
  .filter((name) => name.endsWith(".yaml") && name !== "defaults.yaml" && !name.startsWith("sft-"))
  .sort();

type Digest = Record<string, string>;

/** Score markers hold what each run paid (cache hits, HTTP requests, retries): a rerun from the cache changes them, nothing else. */
const RUN_STATISTICS = /^score\/task-\d+\.done\.json$/;

function digestFolder(dir: string): Digest {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .filter((path) => !RUN_STATISTICS.test(path))
    .sort();
  return Object.fromEntries(
    files.map((file) => [
      file,
      createHash("sha256")
        .update(readFileSync(join(dir, file)))
        .digest("hex"),
    ]),
  );
}

/** The judge configs with scorers reach through LWM_JUDGE_URL (their `base_url_env`); its address is not part of the job. */
let judge: FakeScoreServer | undefined;
/**
 * The configs with controls.rephrase or controls.synthesis.teacher reach their teacher through LWM_TEACHER_URL
 * (`base_url_env`), likewise: one fake answers both (rephrase prompts as fake-rephraser.ts does).
 */
let teacher: FakeScoreServer | undefined;

async function runConfig(config: string, extra: string[] = []): Promise<string> {
  const out = join(tempDir("lwm-golden-"), "out");
  await exec(process.execPath, [CLI, "run", join(ROOT, "configs", config), "--output", out, "--progress", "none", ...extra], {
    cwd: ROOT,
    maxBuffer: 16 << 20,
    env: { ...process.env, LWM_JUDGE_URL: judge?.url ?? "", LWM_TEACHER_URL: teacher?.url ?? "" },
  });
  return out;
}

/** The files under `dir` whose bytes contain `path` (a Parquet footer's metadata is not compressed, so it is found too). */
function filesNaming(dir: string, path: string): string[] {
  const needle = Buffer.from(path.replace(/\/$/, ""));
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && readFileSync(join(entry.parentPath, entry.name)).includes(needle))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

const golden: Record<string, Digest> = JSON.parse(readFileSync(GOLDEN, "utf8"));
const update = process.env.UPDATE_GOLDEN === "1";
const fresh: Record<string, Digest> = {};

describe("existing configs give the recorded output, byte for byte", () => {
  beforeAll(async () => {
    judge = await startFakeJudge();
    teacher = await startFakeTeacher();
  });
  afterAll(async () => {
    await judge?.close();
    await teacher?.close();
  });

  it("has a recorded output for every config in configs/, and none for a config that is gone", () => {
    if (update) return;
    expect(Object.keys(golden).sort()).toEqual(CONFIGS);
  });

  for (const config of CONFIGS) {
    it(config, { timeout: 600_000 }, async () => {
      const out = await runConfig(config, ["--workers", "2"]);
      // Recorded digests hold wherever the project is checked out (CI clones it elsewhere): no output names its folder.
      expect(filesNaming(out, ROOT), `${config}: output files that hold the checkout's path ${ROOT}`).toEqual([]);
      const digest = digestFolder(out);
      fresh[config] = digest;
      if (update) {
        writeFileSync(GOLDEN, `${JSON.stringify({ ...golden, ...fresh }, null, 2)}\n`);
        return;
      }
      expect(
        digest,
        `${config}: output differs from test/golden/config-outputs.json; if the change is meant, rerun with UPDATE_GOLDEN=1`,
      ).toEqual(golden[config]);
    });
  }

  // More than two workers: the CLI starts the pool threads before it plans the job and every
  // pooled stage (curation's, the mixture's count, records) shares them; tasks run largest first.
  for (const config of ["curate.yaml", "demo-mixture.yaml"]) {
    it(`${config} with 4 workers (one early pool shared by the stages)`, { timeout: 600_000 }, async () => {
      if (update) return;
      expect(digestFolder(await runConfig(config, ["--workers", "4"]))).toEqual(golden[config]);
    });
  }

  it("the digest tells outputs apart: one changed byte in a shard is a different digest (negative control)", () => {
    const dir = tempDir("lwm-golden-control-");
    writeFileSync(join(dir, "a.parquet"), "PAR1 one");
    const before = digestFolder(dir);
    writeFileSync(join(dir, "a.parquet"), "PAR1 onf");
    expect(digestFolder(dir)).not.toEqual(before);
  });
});
