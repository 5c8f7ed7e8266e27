/** The Warp reader (src/read/warp-db.ts) on databases written with Warp's blocks table (test/support/warp-db.ts). */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { readFilterOf } from "../src/read/read-filter.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { warpDbReader } from "../src/read/warp-db.ts";
import { collect, READ_OPTIONS, tempDir, validateAndRun, writeConfig } from "./helpers.ts";
import { sampleWarpDbBytes, type WarpBlock, writeWarpDb } from "./support/warp-db.ts";

const PANE_A = "5a1b2c3d4e5f60718293a4b5c6d7e8f9";
const PANE_B = "0f9e8d7c6b5a49382716a5b4c3d2e1f0";
const BLOCKS: WarpBlock[] = [
  // Pane B starts later but is written first: panes come in the order they started.
  { pane: PANE_B, command: "git status --short", output: " M notes.md\n", start: "2026-05-01 10:00:00", aiConversation: "conv-7" },
  { pane: PANE_A, command: "", output: "", start: "2026-05-01 09:00:00" },
  {
    pane: PANE_A,
    command: "\u001b[1mls --color\u001b[0m",
    output: "\u001b[01;34mdocs\u001b[0m  notes.md\r\n",
    start: "2026-05-01 09:00:05",
  },
  {
    pane: PANE_A,
    command: "cat missing.txt",
    output: "cat: missing.txt: No such file or directory\n",
    exitCode: 1,
    start: "2026-05-01 09:00:09",
  },
  { pane: PANE_A, command: "false", output: "", exitCode: 1, start: "2026-05-01 09:00:12" },
  { pane: PANE_A, command: "sleep 100", output: "", executed: false, start: "2026-05-01 09:00:15" },
  { pane: PANE_A, command: "touch done", output: "", start: "2026-05-01 09:00:11", pwd: "/home/dev/notes/docs" },
];

function store(blocks: WarpBlock[]): string {
  const path = join(tempDir("lwm-warp-"), "warp.sqlite");
  writeWarpDb(path, blocks);
  return path;
}
const read = (path: string, options = READ_OPTIONS): Promise<ReadItem[]> => collect(warpDbReader.read(path, options));
function trajectories(items: readonly ReadItem[]): Trajectory[] {
  return items.map((item) => {
    if (item.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(trajectoryInputSchema.safeParse(item.trajectory).success).toBe(true);
    return item.trajectory;
  });
}

describe("warp reader: command blocks", () => {
  it("one trajectory per pane, in the order the panes started; blocks in the order they started, escapes taken out", async () => {
    const [a, b] = trajectories(await read(store(BLOCKS)));
    expect(a?.id).toBe(`warp-pane-${PANE_A}`);
    expect(a?.domain).toBe("terminal");
    expect(a?.turns.map((turn) => [turn.action, turn.observation, turn.meta?.exit_code])).toEqual([
      ["ls --color", "docs  notes.md", 0],
      ["cat missing.txt", "cat: missing.txt: No such file or directory", 1],
      ["touch done", "[no output]", 0],
      ["false", "[exit code 1, no output]", 1],
    ]);
    expect(a?.turns[2]?.meta).toMatchObject({ cwd: "/home/dev/notes/docs", git_branch: "main", start_time: "2026-05-01 09:00:11" });
    expect(a?.meta).toMatchObject({
      agent: "warp",
      pane: PANE_A,
      shell: "zsh",
      user: "dev",
      host: "laptop",
      skipped: { block_without_command: 1, block_not_executed: 1 },
    });
    expect(b?.turns).toEqual([
      expect.objectContaining({
        action: "git status --short",
        observation: " M notes.md",
        meta: expect.objectContaining({ agent_conversation: "conv-7" }),
      }),
    ]);
  });

  it("a pane where nothing ran is filtered; a block over input.max_line_bytes quarantines its pane only", async () => {
    const items = await read(store([{ pane: PANE_A, command: "", output: "", start: "2026-05-01 09:00:00" }]));
    expect(readFilterOf(items[0] as ReadItem)?.reason).toMatch(/no command ran in the pane \(1 block_without_command\)/);
    // Read anyway, a database without blocks is one entry saying so, not nothing.
    expect(await read(store([]))).toEqual([
      expect.objectContaining({ kind: "quarantine", entry: expect.objectContaining({ field: "blocks" }) }),
    ]);
    const big = await read(
      store([...BLOCKS, { pane: PANE_B, command: "yes | head -c 5000", output: "y\n".repeat(2500), start: "2026-05-01 10:00:05" }]),
      { maxLineBytes: 1000 },
    );
    expect(big.map((item) => item.kind)).toEqual(["trajectory", "quarantine"]);
    expect(big[1]).toMatchObject({
      entry: {
        id: `warp-pane-${PANE_B}`,
        field: expect.stringMatching(/^blocks\.\d+\.stylized_output$/),
        reason: expect.stringMatching(/5000 bytes, over the 1000-byte limit/),
      },
    });
  });
});

describe("warp reader: detection", () => {
  it("a database with blocks is warp's; one without is empty; another blocks table is not Warp's", async () => {
    const detection = await detectFormat(store(BLOCKS));
    expect(detection.kind === "format" && detection.reader.name).toBe("warp");
    expect(await detectFormat(store([]))).toMatchObject({ kind: "empty", note: "a Warp database with no command block" });
    const other = join(tempDir("lwm-warp-"), "chain.db");
    const db = new DatabaseSync(other);
    db.exec("CREATE TABLE blocks (height INTEGER PRIMARY KEY, hash TEXT); INSERT INTO blocks VALUES (1, 'ab');");
    db.close();
    expect((await detectFormat(other)).kind).toBe("unrecognized");
  });

  it("lwm-data run: records in = out + quarantined + filtered", async () => {
    const work = tempDir("lwm-warp-run-");
    mkdirSync(join(work, "data"));
    writeFileSync(join(work, "data/warp.sqlite"), sampleWarpDbBytes());
    const config = writeConfig("inputs:\n  - path: data/warp.sqlite\noutput: { dir: out }\n", work);
    const { manifest } = await validateAndRun(config);
    expect(manifest.counts).toMatchObject({ records_in: 2, samples_out: 2, quarantined: 0, filtered: 0 });
  }, 120_000);
});
