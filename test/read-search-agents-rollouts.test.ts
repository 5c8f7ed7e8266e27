/**
 * Rows of several RL rollouts for one prompt (verl / OpenRLHF-style dumps: `responses`,
 * `completions` or `outputs` as a list of texts, `rewards` / `scores` per rollout) in the
 * tagged-search dialect (src/read/chat-rows/tagged-search.ts), and ASearcher's `<access>` page
 * visits. Fixture: test/fixtures/search-agents/rollout-groups.jsonl (hand-written; README.md).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { chatToolRowsReader, isChatRow } from "../src/read/chat-tool-rows.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const PATH = join(ROOT, "test/fixtures/search-agents/rollout-groups.jsonl");
const OPTIONS = { maxLineBytes: 1 << 22 };

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
const pairs = (t: Trajectory | undefined) => (t?.turns ?? []).map((turn) => [turn.action, turn.observation]);
const search = (query: string) => JSON.stringify({ name: "web_search", arguments: { query } });
const extract = (url: string) => JSON.stringify({ name: "web_extract", arguments: { url } });

async function read(path: string): Promise<ReadItem[]> {
  return collect(chatToolRowsReader.read(path, OPTIONS));
}

async function format(path: string): Promise<string> {
  const detection = await detectFormat(path);
  return detection.kind === "format" ? detection.reader.name : detection.kind;
}

describe("search agents: rows of several rollouts per prompt", () => {
  it("reads each rollout as its own trajectory, the row's id suffixed by the rollout's index, its reward from the row's list", async () => {
    expect(await format(PATH)).toBe("chat-tool-rows");
    const items = await read(PATH);
    const read1 = trajectories(items).filter((t) => t.source.line === 1);
    expect(read1.map((t) => t.id)).toEqual(["q-17/rollout-0", "q-17/rollout-2"]);
    const [r0, r2] = read1;
    expect(pairs(r0)).toEqual([
      [search("Amber Clock built town"), 'Doc 1(Title: "Amber Clock") The Amber Clock was built in Tessor in 1702.'],
      [search("Tessor river"), 'Doc 1(Title: "Tessor") Tessor lies on the river Lune.'],
    ]);
    expect(r0?.meta).toMatchObject({ rollout: 0, rollouts: 3, outcome: { reward: 1 }, final_answer: "Lune" });
    expect(pairs(r2)).toEqual([
      [search("Amber Clock town river"), 'Doc 1(Title: "Amber Clock") Built in Tessor, a town on the river Lune.'],
    ]);
    expect(r2?.meta).toMatchObject({ rollout: 2, rollouts: 3, outcome: { reward: 1 } });
    // Every rollout has the same task: the prompt (whose instruction names the tags, never a call).
    expect(r0?.task).toBe(r2?.task);
    expect(r0?.domain).toBe("search");
    // The rollout that never searched: quarantined, naming its line and rollout.
    expect(quarantined(items).map((q) => [q.source.uri, q.source.line, q.id, q.field, q.reason])).toEqual([
      [PATH, 1, "q-17/rollout-1", "responses.1", "responses.1: no tool call was followed by its result"],
    ]);
  });

  it("reads `completions` lists (ids from the row's hash, deterministic) with `scores`", async () => {
    const [first, again] = [await read(PATH), await read(PATH)].map((items) => trajectories(items).filter((t) => t.source.line === 2));
    expect(first?.map((t) => t.id)).toEqual(again?.map((t) => t.id));
    expect(first?.map((t) => t.id)).toEqual([
      expect.stringMatching(/^chat-[0-9a-f]{16}\/rollout-0$/),
      expect.stringMatching(/\/rollout-1$/),
    ]);
    expect(first?.map((t) => t.turns.length)).toEqual([1, 2]);
    expect(first?.map((t) => t.meta?.outcome)).toEqual([{ reward: 1 }, { reward: 1 }]);
  });

  it("ASearcher: <access> URL </access> answered by the page in <information> is a web_extract turn; `outputs` lists are rollouts", async () => {
    const rows = trajectories(await read(PATH)).filter((t) => t.source.line === 3);
    expect(rows.map((t) => t.id)).toEqual(["asr-3/rollout-0", "asr-3/rollout-1"]);
    const [o0, o1] = rows;
    expect(pairs(o0)).toEqual([
      [
        search("Skarholm ferry first service"),
        "[Doc 1](https://wiki.example.org/Skarholm_ferry):\nThe Skarholm ferry links Skarholm and Orren.",
      ],
      [
        extract("https://wiki.example.org/Skarholm_ferry"),
        ">>>> Page 1 >>>>\n\nThe Skarholm ferry began service in 1923 with the steamer Ilse.",
      ],
    ]);
    expect(o0?.meta?.final_answer).toBe("1923");
    // A rollout that only opened a page is still the search agent's.
    expect(pairs(o1)).toEqual([[extract("https://harbour.example.org/history"), "No More Information is Found for this URL."]]);
    expect(o1?.domain).toBe("search");
  });

  it("negative controls: rollouts without tagged calls are not claimed; a one-element list reads as before (no suffix); a row whose `messages` are the conversation keeps them", async () => {
    const dir = tempDir("lwm-rollouts-");
    const plain = join(dir, "plain.jsonl");
    writeFileSync(plain, `${JSON.stringify({ prompt: "2+2?", responses: ["4", "four"] })}\n`);
    expect(await format(plain)).not.toBe("chat-tool-rows");
    expect(
      isChatRow({ prompt: "Tell me about <search> tags", completions: ["They wrap queries.", "Use <search> x </search> to search."] }),
    ).toBe(false);
    const one = join(dir, "one.jsonl");
    const response = `<search> q </search>\n\n<information>Doc 1 result</information>\n\n<answer> a </answer>`;
    writeFileSync(one, `${JSON.stringify({ id: "single", prompt: "q?", responses: [response] })}\n`);
    expect(trajectories(await read(one)).map((t) => [t.id, t.meta?.rollout])).toEqual([["single", undefined]]);
    const chat = join(dir, "chat.jsonl");
    const messages = [
      { role: "user", content: "ls" },
      { role: "assistant", tool_calls: [{ id: "c1", function: { name: "bash", arguments: '{"command":"ls"}' } }] },
      { role: "tool", tool_call_id: "c1", content: "a.txt" },
    ];
    writeFileSync(chat, `${JSON.stringify({ id: "m", messages, responses: [response, response] })}\n`);
    expect(trajectories(await read(chat)).map((t) => [t.id, pairs(t)])).toEqual([["m", [["ls", "a.txt"]]]]);
  });
});
