/** The Cline / Roo Code task-folder reader (src/read/cline.ts) on the hand-written fixtures in test/fixtures/handmade/cline/ and variants built here. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { clineReader, xmlToolUses } from "../src/read/cline.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const HANDMADE = join(ROOT, "test/fixtures/handmade/cline");
const XML_TASK = join(HANDMADE, "1718000000000/api_conversation_history.json");
const UI = join(HANDMADE, "1718000000000/ui_messages.json");
const NATIVE_TASK = join(HANDMADE, "roo-0197a1b2-native/api_conversation_history.json");

async function only(path: string): Promise<ReadItem> {
  const items = await collect(clineReader.read(path, OPTIONS));
  expect(items).toHaveLength(1);
  return items[0] as ReadItem;
}

async function trajectory(path: string): Promise<Trajectory> {
  const item = await only(path);
  if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
  expect(trajectoryInputSchema.safeParse(item.trajectory).success).toBe(true);
  return item.trajectory;
}

/** A task folder `<dir>/<id>/api_conversation_history.json` holding `messages`. */
function task(messages: unknown, id = "1700000000000"): string {
  const dir = join(tempDir("lwm-cline-"), id);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "api_conversation_history.json");
  writeFileSync(path, typeof messages === "string" ? messages : JSON.stringify(messages));
  return path;
}

const ENV = { type: "text", text: "<environment_details>\n# Current Working Directory (/w) Files\na.txt\n</environment_details>" };
const TASK = { role: "user", content: [{ type: "text", text: "<task>\nshow a.txt\n</task>" }, ENV] };
const cat = { role: "assistant", content: [{ type: "text", text: "<execute_command>\n<command>cat a.txt</command>\n</execute_command>" }] };

describe("cline reader", () => {
  it("reads a Cline task with XML tools: results by header, framing and environment details taken off, denials and dialogue not turns", async () => {
    const t = await trajectory(XML_TASK);
    expect(t.id).toBe("1718000000000");
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("The test in tests/test_sum.py fails. Fix it.");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["python -m pytest -q", "F\n=== FAILURES ===\nE   assert 5 == 4\n1 failed in 0.01s"],
      ['read_file {"path":"src/sum.py"}', "def add(a, b):\n    return a + b + 1\n"],
      [
        'write_to_file {"path":"src/sum.py","content":"def add(a, b):\\n    return a + b"}',
        "The content was successfully saved to src/sum.py.",
      ],
      ["python -m pytest -q tests/missing.py", "Error executing command: ERROR: file or directory not found: tests/missing.py"],
      ["python -m pytest -q", ".\n1 passed in 0.01s"],
    ]);
    expect(t.turns[0]?.thinking).toBe("I should run the tests first to see the failure.");
    expect(t.turns[2]?.meta).toEqual({ tool: "write_to_file", user_messages: ["Use write_to_file instead."] });
    expect(t.turns[3]?.meta).toEqual({ tool: "execute_command", is_error: true });
    expect(t.meta).toEqual({
      agent: "cline",
      task_id: "1718000000000",
      model: "claude-sonnet-4-20250514",
      final_message: "Fixed the off-by-one in add(); the test passes.",
      skipped: { environment_details: 7, denied_call: 1, attempt_completion_call: 1 },
    });
  });

  it("reads native tool_use / tool_result blocks (Roo Code): header off, Roo's exit code to meta, is_error kept", async () => {
    const t = await trajectory(NATIVE_TASK);
    expect(t.task).toBe("List the files and show the README");
    expect(t.turns.map((turn) => [turn.action, turn.observation, turn.meta])).toEqual([
      ['list_files {"path":".","recursive":"false"}', "README.md\nsrc/", { tool: "list_files", tool_use_id: "toolu_01" }],
      ["cat README.md", "# Demo\n", { tool: "execute_command", tool_use_id: "toolu_02", cwd: "/w", exit_code: 0 }],
      [
        "cat MISSING.md",
        "cat: MISSING.md: No such file or directory\n",
        { tool: "execute_command", tool_use_id: "toolu_03", is_error: true, cwd: "/w", exit_code: 1 },
      ],
    ]);
    expect(t.turns[0]?.thinking).toBe("Listing files.");
    expect(t.meta?.final_message).toBe("The README says # Demo.");
  });

  it("reads the newest single-block result form and a command that printed nothing; names the fork from the path", async () => {
    const file = task(
      [TASK, cat, { role: "user", content: [{ type: "text", text: "[execute_command for 'cat a.txt'] Result:\nCommand executed." }, ENV] }],
      "rooveterinaryinc.roo-cline/tasks/0197b2c3",
    );
    const t = await trajectory(file);
    expect(t.turns).toEqual([{ action: "cat a.txt", observation: "[no output]", meta: { tool: "execute_command" } }]);
    expect(t.meta?.agent).toBe("roo-code");
  });

  it("reads ui_messages.json alone: commands and their output, other messages counted", async () => {
    const t = await trajectory(UI);
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["python -m pytest -q", "F\n=== FAILURES ===\nE   assert 5 == 4\n1 failed in 0.01s"],
      ["python -m pytest -q", ".\n1 passed in 0.01s"],
    ]);
    expect(t.meta).toMatchObject({ ui_messages: true, skipped: { api_req_started: 1, text: 1, tool: 1, completion_result: 1 } });
  });

  it("parses XML parameters whose value holds tags, and an unclosed call at the end", () => {
    const parts = xmlToolUses(
      "<thinking>write it</thinking>\n<write_to_file>\n<path>a.html</path>\n<content>\n<p>hi</p>\n</content>\n</write_to_file>\ntrailing words",
    );
    expect(parts).toEqual([
      { kind: "text", text: "write it" },
      { kind: "call", call: { name: "write_to_file", params: { path: "a.html", content: "<p>hi</p>" } } },
      { kind: "text", text: "trailing words" },
    ]);
    expect(xmlToolUses("<read_file>\n<path>b.txt</path>")).toEqual([
      { kind: "call", call: { name: "read_file", params: { path: "b.txt" } } },
    ]);
  });

  it("detects the task files and the UI log as cline; covers the folder's side files", async () => {
    for (const path of [XML_TASK, NATIVE_TASK, UI]) {
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name).toBe("cline");
    }
    const companions = await clineReader.companions?.(XML_TASK);
    expect(companions?.files.map((file) => file.slice(HANDMADE.length + 1))).toEqual([
      "1718000000000/ui_messages.json",
      "1718000000000/task_metadata.json",
      "1718000000000/context_history.json",
      "1718000000000/settings.json",
    ]);
    expect((await clineReader.companions?.(UI))?.files).toEqual([]);
  });

  it("negative control: a bare message array without Cline's framing is not claimed", async () => {
    const plain = [
      { role: "user", content: "list files" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: { command: "ls" } }] },
    ];
    expect(clineReader.sniff(JSON.stringify(plain), "/x/conversation.json")).toBe(false);
    expect(clineReader.sniff(JSON.stringify([{ role: "system", content: "<task>" }]), "/x/a.json")).toBe(false);
    const detection = await detectFormat(task(plain));
    expect(detection.kind === "format" ? detection.reader.name : detection.kind).not.toBe("cline");
  });

  it("quarantines bad messages naming the element and field, and a task without a tool result", async () => {
    const badRole = await only(task([TASK, { role: "system", content: "x" }]));
    expect(badRole).toMatchObject({ kind: "quarantine", entry: { id: "1700000000000", field: "1.role", stage: "read" } });
    const badBlock = await only(task([TASK, { role: "assistant", content: [{ text: "no type" }] }]));
    expect(badBlock).toMatchObject({ kind: "quarantine", entry: { field: "1.content.0" } });
    const cut = await only(task(`${JSON.stringify([TASK, cat]).slice(0, -20)}`));
    expect(cut).toMatchObject({
      kind: "quarantine",
      entry: { reason: expect.stringMatching(/^not a Cline api_conversation_history\.json: invalid JSON/) },
    });
    const chat = await only(task([TASK, { role: "assistant", content: [{ type: "text", text: "It says hello." }] }]));
    expect(chat).toMatchObject({
      kind: "quarantine",
      entry: { field: "content", reason: expect.stringMatching(/no tool call with a result/) },
    });
    const unanswered = await only(task([TASK, cat]));
    expect(unanswered).toMatchObject({ kind: "quarantine", entry: { reason: expect.stringMatching(/1 call_without_result/) } });
  });
});
