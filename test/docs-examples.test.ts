import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ROOT } from "./helpers.ts";
import { fencedBlocks, unclosedFence } from "./support/markdown.ts";

/**
 * The docs are tested: every ```bash block of README.md and docs/*.md runs, in page order, and must
 * exit 0; every ```yaml block parses. A block that needs what a test machine lacks (a model server,
 * a bucket, a cluster, the network, a GPU) is marked on the line before its fence with
 * `<!-- not-run: <why> -->`; it is not run (and not reported as a skipped test: the run's skip
 * summary is for tests a machine could not run). The generated pages (config.md,
 * benchmarks.md) are not examples.
 *
 * The blocks run in a copy of the checkout made of symlinks to every top-level entry but `out/`,
 * so what they write (`out/demo`, exports, dashboards) lands in a fresh folder, never in the
 * developer's `out/`, and a stale `out/` there cannot fail them.
 */
const GENERATED = new Set(["config.md", "benchmarks.md"]);
const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md") && !GENERATED.has(name))
    .map((name) => `docs/${name}`),
];

/**
 * README command 1 begins with `npm install` (the test run is already installed, and the registry
 * may be out of reach) and command 2 is `npm test` (this very run): those two steps are left out,
 * the rest of the block runs as written.
 */
function runnable(code: string): string {
  return code
    .split("\n")
    .filter((line) => line.trim() !== "npm test")
    .map((line) => line.replace(/^npm install && /, ""))
    .join("\n");
}

/**
 * Many pages start from the demo run; `run` on a finished output only re-checks it, so a block
 * leaves out a `npx lwm-data run <config>` line an earlier block already ran (keeps the test fast).
 */
const RUN_LINE = /^npx lwm-data run \S+\.yaml\s*(#.*)?$/;
function withoutRepeatedRuns(code: string, seen: Set<string>): string {
  return code
    .split("\n")
    .filter((line) => !(RUN_LINE.test(line) && seen.has(line.replace(/#.*$/, "").trim())))
    .join("\n");
}
const ranBefore = new Set<string>();

/**
 * `npx lwm-data …` runs this package's bin (package.json "bin"); npx itself costs ~0.9 CPU-s a call
 * (it loads npm), a third of this file's CPU over the docs' ~37 calls. So the blocks run with an `npx`
 * function that runs that bin directly, as npx would, for `lwm-data` (real npx for anything else);
 * the test "`npx lwm-data` runs the package's bin" checks once that real npx gives the same.
 */
const BIN = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { bin: Record<string, string> }).bin["lwm-data"];
const npxFunction = (checkout: string) =>
  `npx() { if [[ "\${1:-}" == lwm-data ]]; then shift; ${JSON.stringify(join(checkout, BIN ?? "no-bin"))} "$@"; else command npx "$@"; fi; }`;

const examples = PAGES.flatMap((page) =>
  fencedBlocks(readFileSync(join(ROOT, page), "utf8")).map((block) => ({ page, ...block, name: `${page}:${block.line}` })),
);
const shell = examples.filter((block) => block.lang === "bash" || block.lang === "sh");

let work = "";
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "lwm-docs-examples-"));
  for (const entry of readdirSync(ROOT)) if (entry !== "out" && entry !== ".git") symlinkSync(join(ROOT, entry), join(work, entry));
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the docs' examples", () => {
  it("every page but the generated ones starts with a runnable example (a ```bash block before its first section)", () => {
    const without = PAGES.filter((page) => page !== "README.md").filter((page) => {
      const text = readFileSync(join(ROOT, page), "utf8");
      const firstSection = text.split("\n").findIndex((line) => line.startsWith("## ")) + 1; // 0: none
      const first = fencedBlocks(text)[0];
      return first?.lang !== "bash" || (firstSection > 0 && first.line > firstSection);
    });
    expect(without).toEqual([]);
  });

  it("no page leaves a fence open (a ``` at a line start in prose would swallow the rest of the page)", () => {
    const open = [
      "README.md",
      ...readdirSync(join(ROOT, "docs"))
        .filter((name) => name.endsWith(".md"))
        .map((name) => `docs/${name}`),
    ]
      .map((page) => ({ page, line: unclosedFence(readFileSync(join(ROOT, page), "utf8")) }))
      .filter(({ line }) => line !== undefined);
    expect(open).toEqual([]);
    expect(unclosedFence("text\n```yaml block; in prose\nmore text\n")).toBe(2); // control
  });

  it("every ```yaml block parses", () => {
    const bad: string[] = [];
    for (const block of examples.filter((b) => b.lang === "yaml" && !b.notRun)) {
      try {
        parseYaml(block.code);
      } catch (error) {
        bad.push(`${block.name}: ${(error as Error).message.split("\n")[0]}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("the not-run marks are read (control: a marked block is skipped with its reason, an unmarked one runs)", () => {
    const [marked, plain] = fencedBlocks("<!-- not-run: needs a GPU -->\n```bash\nexit 1\n```\n\n```bash\ntrue\n```\n");
    expect(marked).toMatchObject({ lang: "bash", notRun: "needs a GPU", code: "exit 1" });
    expect(plain).toMatchObject({ lang: "bash", notRun: undefined, code: "true" });
    expect(runnable("npm install && npx lwm-data run configs/demo.yaml\nnpm test")).toBe("npx lwm-data run configs/demo.yaml");
    const seen = new Set(["npx lwm-data run configs/demo.yaml"]);
    expect(withoutRepeatedRuns("npx lwm-data run configs/demo.yaml   # again\nnpx lwm-data stats out/demo", seen)).toBe(
      "npx lwm-data stats out/demo",
    );
  });

  it("a block that fails fails its test (control: a failing command in the middle of a block, a bad lwm-data command)", async () => {
    expect(await runBlock("true\nfalse\ntrue")).toMatch(/^exit 1/);
    expect(await runBlock("npx lwm-data verify out/no-such-output")).toMatch(/^exit [1-9]/);
    expect(await runBlock("true")).toBe("ok");
  });

  it("`npx lwm-data` runs the package's bin: real npx prints what the blocks' npx function prints", async () => {
    expect(BIN).toBe("bin/lwm-data.js");
    const help = async (npx: string) =>
      promisify(execFile)("bash", ["-c", `${npxFunction(work)}\n${npx} lwm-data run --help`], {
        cwd: work,
        env: { ...process.env, PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH}`, NO_COLOR: "1" },
      }).then(({ stdout }) => stdout);
    const [real, shortcut] = [await help("command npx"), await help("npx")];
    expect(shortcut).toMatch(/^Usage: lwm-data run/);
    expect(real).toBe(shortcut);
  });

  it("the blocks left out each say why (a not-run mark with a reason), and they are the minority", () => {
    const left = shell.filter((block) => block.notRun).map((block) => `${block.name}: ${block.notRun}`);
    expect(left.every((line) => !line.endsWith(": "))).toBe(true);
    expect(left.length).toBeLessThan(shell.length - left.length);
  });

  for (const block of shell) {
    const title = `${block.name} ${block.code.split("\n").find((line) => line.trim() && !line.startsWith("#")) ?? ""}`;
    if (block.notRun) continue; // counted by the test above, with its reason
    it(title, async () => {
      const code = withoutRepeatedRuns(runnable(block.code), ranBefore);
      const outcome = await runBlock(code);
      if (outcome === "ok") for (const line of code.split("\n")) if (RUN_LINE.test(line)) ranBefore.add(line.replace(/#.*$/, "").trim());
      expect(outcome).toBe("ok");
    });
  }
});

/** Runs a block with bash (`-e`: the first failing command fails it) in the scratch checkout: "ok", or the exit and stderr. */
async function runBlock(code: string): Promise<string> {
  const run = await promisify(execFile)("bash", ["-eo", "pipefail", "-c", `${npxFunction(work)}\n${code}`], {
    cwd: work,
    env: { ...process.env, PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH}`, NO_COLOR: "1" },
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { code?: number; stderr?: string }) => error);
  const failed = "code" in run && run.code !== undefined && run.code !== 0;
  return failed ? `exit ${run.code}\n${String(run.stderr ?? "").slice(-3000)}` : "ok";
}
