import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir } from "./helpers.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const HOOK = join(ROOT, "test/support/module-load-log.ts");

/**
 * A stage process loads what its stage uses (issue 36: start-up is paid by every process of a
 * cluster job). Planning a job — which every stage process does — reads the config, lists the
 * inputs and picks their readers, but decodes no Parquet, parses no XML, streams no JSON and
 * finds no phone numbers, decodes no protobuf and opens no zip: those libraries load with the first file or text that needs them.
 * Checked on the modules real CLI processes load (a `node --import` hook logs every load).
 */
const LOADED_ON_DEMAND = [
  "apache-arrow",
  "parquet-wasm",
  "libphonenumber-js",
  "saxes",
  "fast-xml-parser",
  "stream-json",
  "entities",
  "protobufjs",
  "yauzl",
  "csv-parse",
];

async function loadedPackages(args: string[]): Promise<Set<string>> {
  const log = join(tempDir("lwm-modules-"), "modules.txt");
  await exec(process.execPath, ["--import", HOOK, CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, LWM_MODULE_LOG: log },
    maxBuffer: 64 << 20,
  });
  const packages = readFileSync(log, "utf8")
    .split("\n")
    .map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
    .filter((name): name is string => name !== undefined);
  return new Set(packages);
}

describe("what a stage process loads", () => {
  it("curation's clusters and select stages load none of the readers' heavy libraries; signatures loads the XML parser when it parses XML", async () => {
    const out = tempDir("lwm-stage-modules-");
    const run = (stage: string) =>
      loadedPackages(["run", join(ROOT, "configs/curate.yaml"), "--output", out, "--progress", "none", "--workers", "1", "--stage", stage]);
    const signatures = await run("signatures");
    const clusters = await run("clusters");
    const select = await run("select");
    // The hook sees what loads on demand, by require() too: the demo's OS observations are AT-SPI
    // XML, which the strict XML pass (saxes) reads.
    expect(signatures.has("saxes")).toBe(true);
    for (const name of LOADED_ON_DEMAND) {
      expect(clusters.has(name), `clusters loaded ${name}`).toBe(false);
      expect(select.has(name), `select loaded ${name}`).toBe(false);
    }
  });

  it("reading a Parquet file loads apache-arrow (negative control: the hook sees the on-demand import)", async () => {
    // format: auto looks into the file: its footer and first rows decide between text and rows.
    const loaded = await loadedPackages([
      "validate",
      join(ROOT, "configs/curate.yaml"),
      "--input",
      join(ROOT, "data/knowledge/explainers.parquet"),
    ]);
    expect(loaded.has("apache-arrow")).toBe(true);
  });
});
