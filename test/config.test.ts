import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { UserError } from "../src/core/errors.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { DEMO_CONFIG, ROOT, tempDir, writeConfig } from "./helpers.ts";

function configError(yaml: string): string {
  try {
    loadConfig(writeConfig(yaml));
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return (err as Error).message;
  }
  throw new Error("config was accepted");
}

describe("config", () => {
  it("fills defaults from configs/defaults.yaml and resolves paths against the config's folder", () => {
    const dir = tempDir();
    const { config } = loadConfig(writeConfig("inputs:\n  - path: data/*.jsonl\noutput:\n  dir: out\n", dir));
    expect(config.tokenizer.name).toBe("qwen3");
    expect(config.output.num_buckets).toBe(8);
    expect(config.inputs[0]?.path).toBe(join(dir, "data/*.jsonl"));
    expect(config.inputs[0]?.format).toBe("auto");
    expect(config.output.dir).toBe(join(dir, "out"));
    expect(config.render.system_prompts_dir).toBe(join(ROOT, "configs/system-prompts"));
  });

  it("names the key path and the expected type", () => {
    const message = configError("inputs:\n  - path: a.jsonl\noutput:\n  num_buckets: many\n");
    expect(message).toMatch(/output\.num_buckets: .*expected number/i);
  });

  it("rejects unknown keys, naming them", () => {
    expect(configError("inputs:\n  - path: a.jsonl\noutput:\n  shard_count: 3\n")).toMatch(/output: .*shard_count/);
  });

  it("requires inputs", () => {
    expect(configError("output:\n  dir: x\n")).toMatch(/inputs: /);
  });

  it("rejects an unknown input domain with the allowed values", () => {
    expect(configError("inputs:\n  - path: a.jsonl\n    domain: spreadsheet\n")).toMatch(/inputs\.0\.domain: .*terminal/);
  });

  it("reports YAML syntax errors with line and column", () => {
    expect(configError("inputs:\n  - path: [unclosed\n")).toMatch(/job\.yaml:\d+:\d+: invalid YAML/);
  });

  it("fails planning when a glob matches nothing, naming the input", async () => {
    const loaded = loadConfig(writeConfig("inputs:\n  - path: nothing-here/*.jsonl\n"));
    await expect(planJob(loaded)).rejects.toThrow(/inputs\.0\.path: pattern .*nothing-here.* matched no files/);
  });

  it("fails planning on an unknown tokenizer or mask policy", async () => {
    const input = join(ROOT, "test/fixtures/records/mixed-bad.jsonl");
    await expect(planJob(loadConfig(writeConfig(`inputs:\n  - path: ${input}\ntokenizer:\n  name: tiktoken:p99k\n`)))).rejects.toThrow(
      /tokenizer\.name: unknown tiktoken encoding "p99k"/,
    );
    expect(() => loadConfig(writeConfig(`inputs:\n  - path: ${input}\nmask:\n  policy: vibes\n`))).toThrow(/mask\.policy: .*"turn-stats"/);
  });

  it("the demo config plans: every bundled file found and its format detected from content", async () => {
    const plan = await planJob(loadConfig(DEMO_CONFIG));
    const formats = Object.fromEntries(plan.files.map((f) => [f.displayPath, f.reader.name]));
    expect(formats).toEqual({
      "../data/demo/terminal/session.tmux.jsonl": "tmux-log",
      "../data/demo/terminal/shell-session.cast": "asciicast",
      "../data/demo/swe/mini-swe-agent__slug-punctuation.traj.json": "mini-swe-agent",
      "../data/demo/swe/mini-swe-agent__stats-median.traj.json": "mini-swe-agent",
      "../data/demo/swe/openhands__slug-punctuation.json": "openhands",
      "../data/demo/swe/openhands__stats-median.json": "openhands",
      "../data/demo/swe/swe-agent__slug-punctuation.traj": "swe-agent-traj",
      "../data/demo/swe/swe-agent__stats-median.traj": "swe-agent-traj",
      "../data/demo/swe/swe-smith__ft.jsonl": "swe-smith",
      "../data/demo/swe/swe.jsonl.zst": "canonical-jsonl",
      "../data/demo/mcp/everything-agentworldbench.jsonl": "agentworldbench-jsonl",
      "../data/demo/mcp/everything-tools.jsonl": "mcp-jsonrpc",
      "../data/demo/mcp/everything-tools.txtar": "mcp-jsonrpc",
      "../data/demo/mcp/everything.jsonl.gz": "canonical-jsonl",
      "../data/demo/search/agent-trace.jsonl": "search-api",
      "../data/demo/search/brave-web-git-reset.json": "search-api",
      "../data/demo/search/brave-web-http-304.json": "search-api",
      "../data/demo/web/stockroom.add-item__experiment_analysis.md": "browsergym",
      "../data/demo/web/stockroom.delete-item__experiment_analysis.md": "browsergym",
      // The DroidBot run (3 events chained by state) is read once, from its first event.
      "../data/demo/android/event_2026-01-15_120002.json": "droidbot",
      "../data/demo/android/quicknotes.add-note.window_dumps.xml": "uiautomator-xml",
      "../data/demo/os/os-trajectories.jsonl": "os-a11y",
    });
    expect(plan.files.every((f) => f.detected)).toBe(true);
    // Its later events and its state files stand for that first event: covered, not records of their own.
    const run = plan.files.find((f) => f.displayPath === "../data/demo/android/event_2026-01-15_120002.json");
    expect(
      plan.covered
        .filter((c) => c.displayPath.startsWith("../data/demo/android/"))
        .map((c) => [c.displayPath, c.kind, c.by])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    ).toEqual(
      [
        "../data/demo/android/event_2026-01-15_120005.json",
        "../data/demo/android/event_2026-01-15_120008.json",
        "../data/demo/android/state_2026-01-15_120000.json",
        "../data/demo/android/state_2026-01-15_120003.json",
        "../data/demo/android/state_2026-01-15_120006.json",
        "../data/demo/android/state_2026-01-15_120009.json",
      ].map((displayPath) => [displayPath, "stands-for", run?.path]),
    );
  });

  it("the config hash ignores where inputs and output live, not what is done", async () => {
    const input = join(ROOT, "test/fixtures/records/mixed-bad.jsonl");
    const a = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${input}\noutput:\n  dir: a\n`)));
    const b = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${input}\noutput:\n  dir: b\n`)));
    const c = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${input}\noutput:\n  num_buckets: 3\n`)));
    expect(a.configSha256).toBe(b.configSha256);
    expect(c.configSha256).not.toBe(a.configSha256);
  });
});

describe("config defaults", () => {
  it("puts the default output folder next to the job config", () => {
    const dir = tempDir();
    const { config } = loadConfig(writeConfig("inputs:\n  - path: a.jsonl\n", dir));
    expect(config.output.dir).toBe(join(dir, "out"));
  });
});
