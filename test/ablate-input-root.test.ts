import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { inputRootOverrides } from "../src/ablate/input-root.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { ROOT, tempDir } from "./helpers.ts";

/** A config in DIR/configs/ whose inputs lie under DIR/samples (input.root), plus one absolute input elsewhere. */
function configWithRoot(): { dir: string; path: string; elsewhere: string } {
  const dir = tempDir("lwm-ablate-root-");
  mkdirSync(join(dir, "configs"));
  const elsewhere = join(tempDir("lwm-ablate-elsewhere-"), "x.jsonl");
  const path = join(dir, "configs", "job.yaml");
  writeFileSync(
    path,
    `input:\n  root: ../samples\ninputs:\n  - path: swe/a.jsonl\n  - path: mcp/**/*\n    format: auto\n  - path: ${elsewhere}\n`,
  );
  return { dir, path, elsewhere };
}

describe("ablate --input-root", () => {
  it("moves the inputs under the config's input root to the same places under the new folder, and roots sources there", () => {
    const { dir, path, elsewhere } = configWithRoot();
    const moved = tempDir("lwm-ablate-moved-");
    const { config } = loadConfig(path, { set: inputRootOverrides(path, moved) });
    expect(config.inputs.map((input) => input.path)).toEqual([join(moved, "swe/a.jsonl"), join(moved, "mcp/**/*"), elsewhere]);
    expect(config.input.root).toBe(moved);
    // Negative control: without the override the config reads its own root.
    const plain = loadConfig(path).config;
    expect(plain.inputs[0]?.path).toBe(join(dir, "samples", "swe/a.jsonl"));
    // Per-input settings stay as the config has them.
    expect(config.inputs[1]).toEqual({ ...plain.inputs[1], path: join(moved, "mcp/**/*") });
  });

  it("re-roots the bench configs of the third-party samples (../shared/fixtures/real by default) every input", () => {
    const config = join(ROOT, "bench/ablate/real-novelty.yaml");
    const plain = loadConfig(config).config;
    expect(plain.input.root).toBe(join(ROOT, "../shared/fixtures/real"));
    const moved = loadConfig(config, { set: inputRootOverrides(config, "/data/samples") }).config;
    expect(moved.inputs.length).toBe(plain.inputs.length);
    for (const [i, input] of moved.inputs.entries())
      expect(input.path).toBe(join("/data/samples", (plain.inputs[i]?.path ?? "").slice(join(ROOT, "../shared/fixtures/real/").length)));
  });

  it("refuses a config none of whose inputs lies under its root, and a bucket location", () => {
    const dir = tempDir("lwm-ablate-root-none-");
    const path = join(dir, "job.yaml");
    writeFileSync(path, `inputs:\n  - path: /elsewhere/a.jsonl\n`);
    expect(() => inputRootOverrides(path, "/data")).toThrow(/no input of .* lies under its input root/);
    expect(() => inputRootOverrides(configWithRoot().path, "s3://bucket/samples")).toThrow(/a local folder/);
  });
});
