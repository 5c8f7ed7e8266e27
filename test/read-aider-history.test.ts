/** The aider chat-history reader (src/read/aider-history.ts) on hand-written fixtures, hostile variants and the real shared sample. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { aiderHistoryReader } from "../src/read/aider-history.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { READERS } from "../src/read/registry.ts";
import { collect, expectClaimsNoOtherFixture, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS = { maxLineBytes: 1 << 20 };
const HANDMADE = join(ROOT, "test/fixtures/handmade/aider");
const TWO_RUNS = join(HANDMADE, "two-runs.aider.chat.history.md");
const UDIFF = join(HANDMADE, "udiff-echoed-output.aider.chat.history.md");

const read = (path: string, options: { maxLineBytes: number; domain?: Trajectory["domain"] } = OPTIONS) =>
  collect(aiderHistoryReader.read(path, options));
const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantines = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const filtered = (items: ReadItem[]) => trajectories(items).filter((t) => t.meta?.read_filter !== undefined);
const readFilter = (t: Trajectory | undefined) => t?.meta?.read_filter as { stage: string; reason: string } | undefined;

describe("aider-history reader", () => {
  it("reads a run's edits and shell commands as turns with aider's reports", async () => {
    const items = await read(TWO_RUNS);
    expect(items).toHaveLength(2);
    const [t] = trajectories(items);
    expect(t?.meta?.read_filter).toBeUndefined();
    if (!t) throw new Error("no trajectory");
    expect(t.id).toMatch(/^aider-20250314T100211-[0-9a-f]{12}$/);
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("make divide() raise ValueError on a zero divisor\nand add a test for it");
    expect(t.turns.map((turn) => turn.meta?.kind)).toEqual(["edit", "shell", "edit", "edit"]);
    const [edit, shell, failed, retry] = t.turns;
    expect(edit?.action.startsWith("calc.py\n<<<<<<< SEARCH\ndef divide(a, b):\n    return a / b\n=======\n")).toBe(true);
    expect(edit?.action).toContain("\n\ntests/test_calc.py\n<<<<<<< SEARCH\n=======\nimport pytest");
    // A line shaped like user input inside the fence stays part of the edit.
    expect(edit?.action).toContain("#### not a user line inside a fence  ");
    expect(edit?.observation).toBe(
      "tests/test_calc.py\nCreate new file? (Y)es/(N)o [Yes]: y\nApplied edit to tests/test_calc.py\nApplied edit to calc.py\nCommit 3f9a2c1 fix: raise ValueError on zero divisor",
    );
    expect(edit?.thinking).toBe("I'll guard the division and add a test.\n\nRun the tests:\n\n```bash\npython -m pytest -q\n```");
    expect(edit?.meta).toMatchObject({ files: ["calc.py", "tests/test_calc.py"], edits: 2, user_messages: ["/add calc.py"] });
    expect(shell).toMatchObject({
      action: "python -m pytest -q",
      observation: "[output not recorded in the chat history]",
      meta: { output_recorded: false, output_added_to_chat: true, output_lines: 6 },
    });
    expect(failed?.observation).toContain("The LLM did not conform to the edit format.\n");
    expect(failed?.observation).toContain("# 1 SEARCH/REPLACE block failed to match!");
    expect(failed?.meta?.user_messages).toEqual(["/run git log --oneline -1", "what does the test check?", "also reject None"]);
    expect(failed?.meta?.assistant_messages).toEqual([
      "It checks that `divide(1, 0)` raises `ValueError`.\n\n> A quoted line of the model's own Markdown",
    ]);
    expect(retry).toMatchObject({ observation: "Applied edit to calc.py\nCommit 8b1d0e4 fix: reject None divisor" });
    expect(t.meta).toMatchObject({
      agent: "aider",
      model: "anthropic/claude-3-7-sonnet-20250219",
      edit_format: "diff",
      version: "0.75.2",
      started_at: "2025-03-14 10:02:11",
      commits: 2,
    });
    expect((t.meta?.skipped as Record<string, number> | undefined)?.token_report).toBe(4);
    // No cost line reaches an observation.
    for (const turn of t.turns) expect(turn.observation).not.toMatch(/Tokens:/);
  });

  it("filters a run with no environment interaction (no turns, meta.read_filter saying what it held)", async () => {
    const items = await read(TWO_RUNS);
    expect(quarantines(items)).toEqual([]);
    const [run] = filtered(items);
    expect(run?.source.line).toBe(109);
    expect(run?.turns).toEqual([]);
    expect(run?.meta).toMatchObject({ agent: "aider", version: "0.75.2", started_at: "2025-03-14 11:40:02" });
    expect(readFilter(run)?.stage).toBe("no-environment-interaction");
    expect(readFilter(run)?.reason).toMatch(
      /^no environment interaction in the aider run started at 2025-03-14 11:40:02 .*KeyboardInterrupt/,
    );
    expect(trajectories(items)[0]?.meta?.read_filter).toBeUndefined();
  });

  it("reads udiff edits, echoed command output, CRLF lines; a declined command makes no turn", async () => {
    const [t] = trajectories(await read(UDIFF));
    if (!t) throw new Error("no trajectory");
    expect(t.task).toBe("bump the version to 1.2.0");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      [
        '--- pkg/__init__.py\n+++ pkg/__init__.py\n@@ ... @@\n-__version__ = "1.1.0"\n+__version__ = "1.2.0"',
        "Applied edit to pkg/__init__.py\nCommit 1a2b3c4 Bump version to 1.2.0",
      ],
      ["grep -n version pkg/__init__.py", '1:__version__ = "1.2.0"'],
      ["ls missing-dir", "ls: cannot access 'missing-dir': No such file or directory"],
    ]);
    expect(t.turns[0]?.meta?.user_messages).toEqual(["/ask how is the version read?"]);
    expect(t.meta).toMatchObject({ model: "gpt-4-1106-preview", edit_format: "udiff", version: "0.21.1" });
    expect((t.meta?.skipped as Record<string, number> | undefined)?.declined_command).toBe(1);
  });

  it("architect mode and the whole-file format: the plan is context, the unparsed reply is the action", async () => {
    const lines = [
      "# aider chat started at 2025-05-01 08:00:00",
      "",
      "> Main model: o3 with architect edit format  ",
      "> Editor model: gpt-4.1 with editor-whole edit format  ",
      "",
      "#### rename greet to hello  ",
      "",
      "Rename the function in app.py and its call.",
      "",
      "> Edit the files? (Y)es/(N)o [Yes]: y  ",
      "",
      "app.py",
      "```python",
      "def hello():",
      '    print("hi")',
      "",
      "hello()",
      "```",
      "",
      "> Applied edit to app.py  ",
      "",
    ];
    const path = join(tempDir(), "arch.aider.chat.history.md");
    writeFileSync(path, `${lines.join("\n")}\n`);
    const [t] = trajectories(await read(path));
    expect(t?.task).toBe("rename greet to hello");
    expect(t?.meta?.edit_format).toBe("architect");
    expect(t?.turns).toEqual([
      {
        action: 'app.py\n```python\ndef hello():\n    print("hi")\n\nhello()\n```',
        observation: "Applied edit to app.py",
        meta: { kind: "edit", edit_format: "unparsed", assistant_messages: ["Rename the function in app.py and its call."] },
      },
    ]);
  });

  it("takes --domain; ids are stable and independent of the path", async () => {
    const dir = tempDir();
    const copy = join(dir, ".aider.chat.history.md");
    writeFileSync(copy, readFileSync(TWO_RUNS));
    const [a] = trajectories(await read(TWO_RUNS));
    const [b] = trajectories(await read(copy, { ...OPTIONS, domain: "terminal" }));
    expect(b?.id).toBe(a?.id);
    expect(b?.domain).toBe("terminal");
  });

  it("quarantines a run with a line over max_line_bytes, naming the line", async () => {
    const dir = tempDir();
    const path = join(dir, "big.aider.chat.history.md");
    writeFileSync(path, `# aider chat started at 2025-01-01 00:00:00\n\n#### ${"x".repeat(300)}  \n`);
    const items = await read(path, { maxLineBytes: 100 });
    expect(items).toHaveLength(1);
    expect(quarantines(items)[0]?.reason).toMatch(/^line 3 is \d+ bytes, over the 100-byte limit/);
  });

  it("a file cut mid-run keeps what it has: an edit without aider's report makes no turn", async () => {
    const text = readFileSync(TWO_RUNS, "utf8");
    const cut = text.slice(0, text.indexOf("> Tokens: 2.3k"));
    const dir = tempDir();
    const path = join(dir, "cut.aider.chat.history.md");
    writeFileSync(path, cut);
    const items = await read(path);
    expect(items).toHaveLength(1);
    expect(readFilter(filtered(items)[0])?.reason).toMatch(/1 edits_not_applied/);
  });

  it("a file whose lines end in bare CR (no line starts a run) is one item, not nothing", async () => {
    const path = join(tempDir("lwm-aider-cr-"), ".aider.chat.history.md");
    writeFileSync(path, readFileSync(TWO_RUNS, "utf8").replace(/\r?\n/g, "\r"));
    const items = await read(path);
    expect(items).toHaveLength(1);
    // Read as one run with no header: nothing reached the repo or shell, so filtered, with its reason.
    expect(readFilter(filtered(items)[0])?.stage).toBe("no-environment-interaction");
    // The same file read with a 16-byte line limit: its one line is over it, so no run at all.
    expect(quarantines(await read(path, { maxLineBytes: 16 })).map((entry) => entry.reason)).toEqual([
      expect.stringMatching(/^no aider run in the file/),
    ]);
  });

  it("sniff: claims its fixtures; no earlier reader claims them; claims no other fixture", () => {
    for (const path of [TWO_RUNS, UDIFF]) {
      const head = readFileSync(path, "utf8");
      expect(aiderHistoryReader.sniff(head, path)).toBe(true);
      expect(READERS.find((r) => r.sniff(head, path))?.name).toBe("aider-history");
    }
    expectClaimsNoOtherFixture(aiderHistoryReader, { own: "aider", at: "head" });
  });
});

describeThirdParty("aider-history on the real zen-mcp-server history", () => {
  it("filters its four runs: start-up, /add, /copy-context and KeyboardInterrupt only", async () => {
    const path = thirdParty("formats-2026/aider/zen-mcp-server__.aider.chat.history.md");
    expect(aiderHistoryReader.sniff(readFileSync(path, "utf8"), path)).toBe(true);
    const items = await read(path);
    expect(quarantines(items)).toEqual([]);
    const runs = filtered(items);
    expect(runs.map((t) => t.source.line)).toEqual([2, 6, 25, 43]);
    for (const t of runs) expect(readFilter(t)?.reason).toMatch(/^no environment interaction in the aider run started at 2025-10-2\d/);
    expect(runs[1]?.meta).toMatchObject({ model: "gemini/gemini-2.5-pro-preview-06-05", edit_format: "diff-fenced", version: "0.86.1" });
    expect(readFilter(runs[3])?.reason).toContain("7 user command(s) such as /add");
  });
});
