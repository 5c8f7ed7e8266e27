import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_FILE_LINES, validateCommand } from "../src/cli/validate-command.ts";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";

async function validateOutput(configPath: string): Promise<string> {
  const lines: string[] = [];
  const spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
    lines.push(args.map(String).join(" "));
  });
  try {
    await validateCommand(configPath, { input: [], benchmark: [] });
  } finally {
    spy.mockRestore();
  }
  return lines.join("\n");
}

describe("validate names each input file's format and domain (issue 34)", () => {
  afterEach(() => vi.restoreAllMocks());

  it("a table per format and domain, and each file's format and domain", async () => {
    const dir = tempDir("lwm-validate-");
    const rows = readFileSync(join(ROOT, "data/demo/swe/swe-smith__ft.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "");
    writeFileSync(
      join(dir, "smith-array.json"),
      JSON.stringify(
        rows.map((row) => JSON.parse(row)),
        null,
        2,
      ),
    );
    writeFileSync(join(dir, "smith.jsonl"), `${rows.join("\n")}\n`);
    const out = await validateOutput(
      writeConfig(`inputs:\n  - path: ${dir}/*.json*\n  - path: ${ROOT}/data/demo/os/*\n    domain: os\noutput: { dir: out }\n`),
    );
    expect(out).toMatch(/^ {2}format +domain +files +bytes$/m);
    expect(out).toMatch(/^ {2}swe-smith +swe +2 +\S/m);
    expect(out).toMatch(/^ {2}os-a11y +os +1 +\S/m);
    expect(out).toMatch(/smith-array\.json .*format=swe-smith \(detected; a JSON array, read element by element\) domain=swe$/m);
    expect(out).toMatch(/smith\.jsonl .*format=swe-smith \(detected\) domain=swe$/m);
  });

  it(`lists at most ${MAX_FILE_LINES} files one by one; the table counts them all`, async () => {
    const dir = tempDir("lwm-validate-many-");
    const line = readFileSync(join(ROOT, "data/demo/swe/swe-smith__ft.jsonl"), "utf8").split("\n")[0];
    for (let i = 0; i < MAX_FILE_LINES + 7; i++) writeFileSync(join(dir, `f${String(i).padStart(3, "0")}.jsonl`), `${line}\n`);
    const out = await validateOutput(writeConfig(`inputs:\n  - path: ${dir}/*.jsonl\n    domain: swe\noutput: { dir: out }\n`));
    expect(out).toMatch(/^ {2}swe-smith +swe +57 +\S/m);
    expect(out.match(/format=swe-smith/g)?.length).toBe(MAX_FILE_LINES);
    expect(out).toContain("  … and 7 more file(s)");
  });
});
