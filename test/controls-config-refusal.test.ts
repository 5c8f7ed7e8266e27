/**
 * Issue 37: a config that combines controls.synthesis.target_shares with mixture target shares is
 * refused when it is loaded, before any stage writes output, with both keys named (the records
 * stage replays the mixture count's records, made before the synthesis quota).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");

function config(mixture: string, enabled = true): string {
  return writeConfig(`inputs:
  - path: ${join(ROOT, "data/demo/terminal")}/*
  - path: ${join(ROOT, "data/demo/search")}/*
controls:
  enabled: ${enabled}
  synthesis:
    target_shares: { permission_denied: 0.2 }
mixture:
  seed: 0
  sources:
${mixture}
`);
}

describe("synthesis target shares with mixture target shares", () => {
  it("`run` exits non-zero before writing anything, naming both keys", async () => {
    const out = join(tempDir(), "out");
    const error = await exec(
      process.execPath,
      [CLI, "run", config("    terminal: { share: 0.5 }"), "--output", out, "--progress", "none"],
      {
        cwd: ROOT,
      },
    ).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(error?.code).not.toBe(0);
    expect(error?.stderr).toContain("controls.synthesis.target_shares (permission_denied)");
    expect(error?.stderr).toContain("mixture.sources.terminal.share");
    expect(existsSync(out)).toBe(false);
  });

  it("negative control: mixture factors with synthesis targets load", () => {
    expect(loadConfig(config("    terminal: { factor: 2 }")).config.mixture.sources.terminal).toEqual({ factor: 2 });
  });

  it("loading refuses it too (plan, validate and every other command), and controls off is not refused", () => {
    expect(() => loadConfig(config("    search: { share: 0.3 }"))).toThrow(/mixture\.sources\.search\.share/);
    expect(loadConfig(config("    search: { share: 0.3 }", false)).config.controls.enabled).toBe(false);
  });
});
