import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { BUILD_INFO, BUNDLE_DIR, changedSinceBundle, freshBundleEntry, sourceStamps } from "../bin/source-bundle.js";
import { demoInputsYaml, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { expectSameBytes, products } from "./scale-helpers.ts";
import { writePiiJob } from "./support/pii-job.ts";

// The CLI bundle (dist/, scripts/build-bundle.ts; rebuilt by test/support/bundle-setup.ts when src/
// changed) against the sources it was built from.

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const REPORTER = join(ROOT, "test/support/process-report.ts");

/** Runs the CLI from the bundle or from src/; returns the entry each pool thread reported. */
async function run(args: string[], from: "bundle" | "source"): Promise<string[]> {
  const report = join(tempDir("lwm-bundle-report-"), "report.jsonl");
  const env = { ...process.env, LWM_PROCESS_REPORT: report, LWM_DATA_FROM_SOURCE: from === "source" ? "1" : "0" };
  await exec(process.execPath, ["--import", REPORTER, CLI, ...args], { cwd: ROOT, env, maxBuffer: 1 << 26 });
  return readFileSync(report, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { mainThread: boolean; entry: string | null })
    .filter((line) => !line.mainThread)
    .map((line) => line.entry ?? "none");
}

describe("the CLI bundle", () => {
  it("is built from the sources as they are (the launcher would otherwise run src/)", () => {
    expect(freshBundleEntry(ROOT)).toMatch(new RegExp(`^${join(ROOT, BUNDLE_DIR)}/[0-9a-f]{14}/cli/main\\.js$`));
  });

  it("writes the same bytes as the sources, pool threads included (the demo in 4 KiB tasks on 2 workers)", async () => {
    const dir = tempDir("lwm-bundle-");
    const config = writeConfig(
      ["inputs:", ...demoInputsYaml(), "input:", "  task_bytes: 4096", "output:", "  include_messages: true"].join("\n"),
      dir,
    );
    const outputs = { bundle: join(dir, "bundle"), source: join(dir, "source") };
    for (const from of ["bundle", "source"] as const) {
      const threads = await run(["run", config, "-o", outputs[from], "--workers", "2", "--progress", "none"], from);
      // The threads ran what the launcher chose: the worker script is the bundle's or the source's.
      expect(threads.length).toBeGreaterThanOrEqual(1);
      expect(new Set(threads)).toEqual(new Set([from]));
    }
    expectSameBytes(products(outputs.bundle), products(outputs.source));
  });

  it("loads the modules it requires on first use (PII kinds) from the bundle, to the same bytes", async () => {
    const dir = tempDir("lwm-bundle-pii-");
    const config = writePiiJob(dir, "{ enabled: true, kinds: { person_name: true, national_id: true, postal_address: true } }");
    for (const from of ["bundle", "source"] as const) await run(["run", config, "-o", join(dir, from), "--progress", "none"], from);
    expectSameBytes(products(join(dir, "bundle")), products(join(dir, "source")));
  });
});

describe("freshBundleEntry", () => {
  /** A package folder with two sources and a bundle record for them as they are now. */
  function packageWithBundle(): string {
    const root = tempDir("lwm-bundle-fresh-");
    mkdirSync(join(root, "src/cli"), { recursive: true });
    writeFileSync(join(root, "src/cli/main.ts"), "export {};\n");
    writeFileSync(join(root, "src/other.ts"), "export const a = 1;\n");
    writeFileSync(join(root, "package.json"), "{}\n");
    mkdirSync(join(root, BUNDLE_DIR));
    const stamps = sourceStamps(root);
    writeFileSync(join(root, BUNDLE_DIR, BUILD_INFO), JSON.stringify({ entry: "cli/main.js", stamps }));
    return root;
  }

  it("gives the bundle built from the sources as they are", () => {
    const root = packageWithBundle();
    expect(freshBundleEntry(root)).toBe(join(root, BUNDLE_DIR, "cli/main.js"));
  });

  it("refuses a bundle older than an edited, added or removed source, or than the dependencies (negative controls)", () => {
    const edits: ((root: string) => void)[] = [
      (root) => writeFileSync(join(root, "src/other.ts"), "export const a = 22;\n"),
      (root) => writeFileSync(join(root, "src/new.ts"), "export {};\n"),
      (root) => writeFileSync(join(root, "package.json"), '{ "dependencies": {} }\n'),
      (root) => {
        mkdirSync(join(root, "node_modules"));
        writeFileSync(join(root, "node_modules/.package-lock.json"), "{}\n");
      },
    ];
    for (const edit of edits) {
      const root = packageWithBundle();
      edit(root);
      expect(freshBundleEntry(root)).toBeNull();
    }
  });

  it("is not made stale by data files beside the sources (Python's __pycache__ beside a .py)", () => {
    const root = packageWithBundle();
    mkdirSync(join(root, "src/__pycache__"));
    writeFileSync(join(root, "src/__pycache__/train_proxy.cpython-311.pyc"), "\0");
    writeFileSync(join(root, "src/kernel.wasm"), "\0asm");
    expect(freshBundleEntry(root)).toBe(join(root, BUNDLE_DIR, "cli/main.js"));
  });

  it("names what changed since the bundle was built", () => {
    const root = packageWithBundle();
    expect(changedSinceBundle(root)).toEqual([]);
    writeFileSync(join(root, "src/other.ts"), "export const a = 22;\n");
    writeFileSync(join(root, "src/new.ts"), "export {};\n");
    expect(changedSinceBundle(root)).toEqual(["src/new.ts", "src/other.ts"]);
  });

  it("refuses a missing or damaged record", () => {
    const root = packageWithBundle();
    writeFileSync(join(root, BUNDLE_DIR, BUILD_INFO), "{ not json");
    expect(freshBundleEntry(root)).toBeNull();
    writeFileSync(join(root, BUNDLE_DIR, BUILD_INFO), JSON.stringify({ entry: 1, stamps: [] }));
    expect(freshBundleEntry(root)).toBeNull();
    expect(freshBundleEntry(tempDir("lwm-bundle-none-"))).toBeNull();
    // A record but no src/ to vouch for it (a trimmed copy of the package).
    const trimmed = packageWithBundle();
    rmSync(join(trimmed, "src"), { recursive: true });
    expect(freshBundleEntry(trimmed)).toBeNull();
  });
});
