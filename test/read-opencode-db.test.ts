/**
 * The OpenCode reader on OpenCode ≥ 1.2's SQLite session store (src/read/opencode-db.ts), on the
 * database test/fixtures/generated/opencode-db/make-db.ts writes (with OpenCode's own DDL) and
 * variants of it built here: changed rows, a WAL still being written, damaged pages.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { gzipSync, zstdCompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema, turnSchema } from "../src/core/trajectory-schema.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { openCodeReader } from "../src/read/opencode.ts";
import { readFilterOf } from "../src/read/read-filter.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { CHAT, CHILD, exportDocument, PARENT, SESSIONS, writeOpenCodeDb } from "./fixtures/generated/opencode-db/make-db.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const DIR = join(ROOT, "test/fixtures/generated/opencode-db");
const DB = join(DIR, "opencode.db");
const exportPath = (id: string) => join(DIR, "export", `${id}.json`);

type Quarantine = Extract<ReadItem, { kind: "quarantine" }>["entry"];

const read = (path: string, options = OPTIONS) => collect(openCodeReader.read(path, options));

/** Every item is a trajectory that passes the canonical schema, or a located quarantine entry at the read stage. */
function checkItems(items: ReadItem[], path: string): void {
  for (const item of items) {
    if (item.kind === "trajectory") {
      const schema = readFilterOf(item) ? trajectoryInputSchema.extend({ turns: z.array(turnSchema) }) : trajectoryInputSchema;
      expect(schema.safeParse(item.trajectory).success, item.trajectory.id).toBe(true);
      expect(item.trajectory.source.uri).toBe(path);
    } else if (item.kind === "quarantine") {
      expect(item.entry.source.uri).toBe(path);
      expect(item.entry.stage).toBe("read");
      expect(item.entry.reason).not.toBe("");
    } else throw new Error(`unexpected item ${item.kind}`);
  }
}

const trajectories = (items: ReadItem[]): Trajectory[] => items.flatMap((item) => (item.kind === "trajectory" ? [item.trajectory] : []));
const quarantined = (items: ReadItem[]): Quarantine[] => items.flatMap((item) => (item.kind === "quarantine" ? [item.entry] : []));

/** A copy of the fixture database in a fresh folder. */
function dbCopy(name = "opencode.db"): string {
  const path = join(tempDir("lwm-opencode-db-"), name);
  copyFileSync(DB, path);
  return path;
}

/** Runs SQL on a database (foreign keys off, as a damaged or hand-edited file has no cascade). */
function edit(path: string, sql: string): void {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: false });
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

function sessionCount(path: string): number {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return Number((db.prepare("SELECT count(*) AS n FROM session").get() as { n: number }).n);
  } finally {
    db.close();
  }
}

/** A trajectory without its source, to compare one read from the database with one read from an export. */
const withoutSource = ({ source: _source, ...rest }: Trajectory) => rest;

describe("opencode reader: OpenCode ≥ 1.2's SQLite database (opencode.db)", () => {
  it("reads each session as the trajectory its `opencode export` document reads to, in creation order", async () => {
    const items = await read(DB);
    checkItems(items, DB);
    const fromDb = trajectories(items);
    expect(fromDb.map((t) => t.id)).toEqual([PARENT, CHILD, CHAT]);
    // The source names the session's place in the database's order.
    expect(fromDb.map((t) => t.source)).toEqual([0, 1, 2].map((row) => ({ uri: DB, format: "opencode", row })));
    for (const t of fromDb) {
      const [fromExport] = trajectories(await read(exportPath(t.id)));
      expect(withoutSource(t)).toEqual(withoutSource(fromExport as Trajectory));
    }
    const [parent, child, chat] = fromDb as [Trajectory, Trajectory, Trajectory];
    expect(parent.task).toBe("Checkout ignores discount codes. Make SAVE10 take 10% off the total.");
    expect(parent.turns.map((turn) => turn.action)).toEqual([
      "npm test -- checkout",
      'read {"filePath":"/home/dev/shop/src/discounts.ts"}',
      'read {"filePath":"/home/dev/shop/src/checkout.ts"}',
      expect.stringMatching(/^edit \{"filePath":"\/home\/dev\/shop\/src\/checkout\.ts"/),
      expect.stringMatching(/^task \{"description":"Find other total computations"/),
      "npm test",
    ]);
    const [run, missing, , edited, task, rerun] = parent.turns;
    expect(run?.thinking).toBe("I should run the checkout tests first to see what fails.\n\nRunning the checkout tests.");
    expect(run?.meta).toEqual({ tool: "bash", call_id: "toolu_01ShopRun1", exit_code: 1 });
    expect(missing?.observation).toBe("File not found: /home/dev/shop/src/discounts.ts");
    expect(missing?.meta?.is_error).toBe(true);
    expect(edited?.observation).toBe("Edit applied successfully.");
    expect(task?.meta).toMatchObject({
      child_session_id: CHILD,
      user_messages: ["Also check whether anything else computes order totals."],
    });
    expect(rerun?.observation).toBe("Tests  7 passed (7)\n");
    expect(parent.meta).toMatchObject({
      final_message: "SAVE10 now takes 10% off, and all 7 tests pass.",
      version: "1.2.10",
      mode: "build",
    });
    // The task's child session is a trajectory of its own, naming its parent.
    expect(child.meta).toMatchObject({ parent_session_id: PARENT, mode: "explore" });
    expect(child.turns).toHaveLength(2);
    // A chat is yielded without turns, filtered with its reason.
    expect(chat.turns).toEqual([]);
    expect(readFilterOf({ kind: "trajectory", trajectory: chat })?.rule).toBe("no-tool-calls");
  });

  it("the committed database and exports are what make-db.ts writes", async () => {
    const path = join(tempDir("lwm-opencode-db-"), "opencode.db");
    writeOpenCodeDb(path);
    const dump = (file: string) => {
      const db = new DatabaseSync(file, { readOnly: true });
      try {
        const tables = db.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all();
        const rows = tables
          .filter((table) => table.type === "table")
          .map((table) => db.prepare(`SELECT * FROM "${String(table.name)}" ORDER BY rowid`).all());
        return { tables, rows };
      } finally {
        db.close();
      }
    };
    expect(dump(path)).toEqual(dump(DB));
    for (const doc of SESSIONS)
      expect(JSON.parse(readFileSync(exportPath(doc.info.id), "utf8"))).toEqual(JSON.parse(JSON.stringify(exportDocument(doc))));
  });

  it("the order is the sessions' creation order, however the rows were inserted", async () => {
    const path = join(tempDir("lwm-opencode-db-"), "opencode.db");
    writeOpenCodeDb(path, [...SESSIONS].reverse());
    const first = await read(path);
    expect(trajectories(first).map((t) => t.id)).toEqual([PARENT, CHILD, CHAT]);
    expect(await read(path)).toEqual(first);
  });

  it("is detected by content as opencode (read whole), gzip- or zstd-compressed too, and read the same", async () => {
    const detection = await detectFormat(DB);
    expect(detection).toMatchObject({ kind: "format", cuttable: false });
    expect(detection.kind === "format" && detection.reader.name).toBe("opencode");
    const expected = (await read(DB)).map((item) => (item.kind === "trajectory" ? withoutSource(item.trajectory) : item));
    const dir = tempDir("lwm-opencode-db-");
    for (const [name, bytes] of [
      ["opencode.db.gz", gzipSync(readFileSync(DB))],
      ["opencode.db.zst", zstdCompressSync(readFileSync(DB))],
    ] as const) {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      const found = await detectFormat(path);
      expect(found.kind === "format" && found.reader.name, name).toBe("opencode");
      const items = await read(path);
      checkItems(items, path);
      expect(items.map((item) => (item.kind === "trajectory" ? withoutSource(item.trajectory) : item))).toEqual(expected);
    }
  });

  it("an OpenCode database with no session is empty at detection and reads to nothing", async () => {
    const path = dbCopy();
    edit(path, "DELETE FROM part; DELETE FROM message; DELETE FROM session;");
    expect(await detectFormat(path)).toEqual({ kind: "empty", note: "an OpenCode database with no session" });
    expect(await read(path)).toEqual([]);
  });

  it("a glob over OpenCode's data folder reads the database once; its -wal and -shm files are its companions", async () => {
    const path = dbCopy();
    writeFileSync(`${path}-wal`, "");
    writeFileSync(`${path}-shm`, Buffer.alloc(32768));
    const dir = join(path, "..");
    const plan = await planJob(loadConfig(writeConfig(`inputs:\n  - path: ${dir}/*\n`, tempDir())));
    expect(plan.files.map((file) => [file.path, file.reader.name])).toEqual([[path, "opencode"]]);
    expect(plan.covered.map((c) => [c.path, c.kind, c.by]).sort()).toEqual([
      [`${path}-shm`, "companion", path],
      [`${path}-wal`, "companion", path],
    ]);
  });
});

describe("opencode reader: a database OpenCode is still writing (WAL)", () => {
  it("rows still in opencode.db-wal are read, by OpenCode's side or in a copy of both files; a copy without the -wal has the checkpointed rows", async () => {
    const path = dbCopy();
    const writer = new DatabaseSync(path);
    try {
      writer.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;");
      const id = "ses_3e1f4e30dffeLate1Session2Ab";
      const time = 1767001000000;
      writer.exec("BEGIN");
      writer
        .prepare(
          "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .run(id, "5b8e2f0c7d1a4e6b9c3f0a2d8e7b6c5a4f3e2d1c", "late-tide", "/home/dev/shop", "Lint", "1.2.10", time, time);
      const message = writer.prepare("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)");
      const part = writer.prepare(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
      );
      message.run("msg_d0000000001", id, time, time, JSON.stringify({ role: "user", time: { created: time } }));
      part.run("prt_d0000000001", "msg_d0000000001", id, time, time, JSON.stringify({ type: "text", text: "Run the linter" }));
      message.run(
        "msg_d0000000002",
        id,
        time + 1,
        time + 1,
        JSON.stringify({ role: "assistant", time: { created: time + 1 }, modelID: "m" }),
      );
      const state = { status: "completed", input: { command: "npm run lint" }, output: "0 problems\n", metadata: { exit: 0 } };
      part.run(
        "prt_d0000000002",
        "msg_d0000000002",
        id,
        time + 1,
        time + 1,
        JSON.stringify({ type: "tool", tool: "bash", callID: "c1", state }),
      );
      writer.exec("COMMIT");
      expect(readFileSync(`${path}-wal`).length).toBeGreaterThan(0);
      // Read while OpenCode (the writer) still has the database open, nothing checkpointed.
      const live = trajectories(await read(path));
      expect(live.map((t) => t.id)).toEqual([PARENT, CHILD, CHAT, id]);
      expect(live[3]?.turns.map((turn) => [turn.action, turn.observation])).toEqual([["npm run lint", "0 problems\n"]]);
      // The database and its -wal copied elsewhere (as a backup of ~/.local/share/opencode would).
      const both = join(tempDir("lwm-opencode-db-"), "opencode.db");
      copyFileSync(path, both);
      copyFileSync(`${path}-wal`, `${both}-wal`);
      expect(trajectories(await read(both)).map((t) => t.id)).toEqual([PARENT, CHILD, CHAT, id]);
      // Without its -wal, the database holds what was checkpointed: the fixture's sessions.
      const alone = join(tempDir("lwm-opencode-db-"), "opencode.db");
      copyFileSync(path, alone);
      expect(trajectories(await read(alone)).map((t) => t.id)).toEqual([PARENT, CHILD, CHAT]);
    } finally {
      writer.close();
    }
  });
});

describe("opencode reader: what a database refuses, naming the session, table, row and field", () => {
  it("rows with malformed JSON or the wrong shape: each session quarantined alone; records in = out + quarantined", async () => {
    const path = dbCopy();
    edit(
      path,
      [
        // The child's grep part: JSON cut short.
        `UPDATE part SET data = substr(data, 1, 40) WHERE id = 'prt_c1a0e1100002Ef2Gh4Ij6Kl8Mn'`,
        // The chat's answer: a role OpenCode has not.
        `UPDATE message SET data = json_set(data, '$.role', 'system') WHERE id = 'msg_c1a0f2000002Op2Qr4St6Uv8Wx'`,
      ].join(";"),
    );
    const items = await read(path);
    checkItems(items, path);
    expect(trajectories(items).map((t) => t.id)).toEqual([PARENT]);
    const entries = quarantined(items);
    expect(entries).toEqual([
      expect.objectContaining({
        id: CHILD,
        source: { uri: path, format: "opencode", row: 1 },
        field: "part.prt_c1a0e1100002Ef2Gh4Ij6Kl8Mn.data",
        reason: expect.stringMatching(
          /^OpenCode session ses_3e1f6c10bffeW3xY7zA1bC5dEf: table part, row prt_c1a0e1100002Ef2Gh4Ij6Kl8Mn: data: invalid JSON/,
        ),
      }),
      expect.objectContaining({
        id: CHAT,
        source: { uri: path, format: "opencode", row: 2 },
        field: "message.msg_c1a0f2000002Op2Qr4St6Uv8Wx.data.role",
        reason: expect.stringContaining(
          'table message, row msg_c1a0f2000002Op2Qr4St6Uv8Wx: data.role: expected "user" or "assistant", got "system"',
        ),
      }),
    ]);
    expect(trajectories(items).length + entries.length).toBe(sessionCount(path));
  });

  it("a tool part with a broken state, data that is no JSON text or over the size limit, session columns of the wrong type", async () => {
    const cases: [string, RegExp, string, typeof OPTIONS?][] = [
      [
        `UPDATE part SET data = json_set(data, '$.state.status', 'done') WHERE id = 'prt_c1a0e0100005Kl2Mn4Op6Qr8St'`,
        /table part, row prt_c1a0e0100005Kl2Mn4Op6Qr8St: data\.state\.status: expected pending, running, completed or error, got "done"/,
        "part.prt_c1a0e0100005Kl2Mn4Op6Qr8St.data.state.status",
      ],
      [
        `UPDATE message SET data = CAST(data AS BLOB) WHERE id = 'msg_c1a0e0000003Ab3Cd5Ef7Gh9Ij'`,
        /table message, row msg_c1a0e0000003Ab3Cd5Ef7Gh9Ij: data: expected JSON text, got blob data/,
        "message.msg_c1a0e0000003Ab3Cd5Ef7Gh9Ij.data",
      ],
      [
        `UPDATE part SET data = '[1, 2]' WHERE id = 'prt_c1a0e0100004Kl2Mn4Op6Qr8St'`,
        /table part, row prt_c1a0e0100004Kl2Mn4Op6Qr8St: data: expected a JSON object, got an array/,
        "part.prt_c1a0e0100004Kl2Mn4Op6Qr8St.data",
      ],
      [
        `UPDATE session SET title = x'00ff' WHERE id = '${PARENT}'`,
        /table session, row ses_3e1f7a2b9ffeK4mN8pQ2rS6tUv: title: expected text, got a blob/,
        `session.${PARENT}.title`,
      ],
      [
        `UPDATE session SET revert = '{"messageID":' WHERE id = '${PARENT}'`,
        /table session, row ses_3e1f7a2b9ffeK4mN8pQ2rS6tUv: revert: invalid JSON/,
        `session.${PARENT}.revert`,
      ],
      [
        "SELECT 1",
        /table part, row prt_c1a0e0100005Kl2Mn4Op6Qr8St: data: \d+ bytes, over the 400-byte limit \(input\.max_line_bytes\)/,
        "part.prt_c1a0e0100005Kl2Mn4Op6Qr8St.data",
        { maxLineBytes: 400 },
      ],
    ];
    for (const [sql, reason, field, options] of cases) {
      const path = dbCopy();
      edit(path, sql);
      const items = await read(path, options);
      checkItems(items, path);
      const [entry] = quarantined(items);
      expect(entry, sql).toMatchObject({ id: PARENT, field, source: { row: 0 } });
      expect(entry?.reason, sql).toMatch(reason);
      expect(items.length, sql).toBe(sessionCount(path));
    }
  });

  it("a pending revert stored in the session row hides the messages after it, as in an export", async () => {
    const path = dbCopy();
    edit(path, `UPDATE session SET revert = '{"messageID":"msg_c1a0e0000005Ab3Cd5Ef7Gh9Ij"}' WHERE id = '${PARENT}'`);
    const [parent] = trajectories(await read(path));
    expect(parent?.turns.map((turn) => turn.action)).toHaveLength(4);
    expect(parent?.meta?.skipped).toMatchObject({ reverted_message: 3 });
  });

  it("message rows whose session row is missing are quarantined, one entry per session", async () => {
    const path = dbCopy();
    edit(path, `DELETE FROM session WHERE id = '${CHAT}'`);
    const items = await read(path);
    checkItems(items, path);
    expect(trajectories(items).map((t) => t.id)).toEqual([PARENT, CHILD]);
    expect(quarantined(items)).toEqual([
      {
        source: { uri: path, format: "opencode" },
        id: CHAT,
        stage: "read",
        field: "message.session_id",
        reason: `OpenCode session ${CHAT}: 2 message row(s) but no readable session row (a damaged or partly copied database)`,
      },
    ]);
  });

  it("damaged pages: the sessions they hide are quarantined, with SQLite's reason; the read never throws", async () => {
    const pageOf = (path: string, table: string) => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        const { rootpage } = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = ?").get(table) as { rootpage: number };
        const { page_size } = db.prepare("PRAGMA page_size").get() as { page_size: number };
        return { at: (rootpage - 1) * page_size, size: page_size };
      } finally {
        db.close();
      }
    };
    const damage = (table: string) => {
      const path = dbCopy();
      const { at, size } = pageOf(path, table);
      const bytes = readFileSync(path);
      bytes.fill(0xa5, at, at + size);
      writeFileSync(path, bytes);
      return path;
    };
    // The part table's root page: every session with parts fails where its parts are read.
    const parts = damage("part");
    const partItems = await read(parts);
    checkItems(partItems, parts);
    expect(quarantined(partItems).map((entry) => [entry.id, entry.source.row])).toEqual([
      [PARENT, 0],
      [CHILD, 1],
      [CHAT, 2],
    ]);
    expect(quarantined(partItems)[0]?.reason).toMatch(
      /^OpenCode session ses_3e1f7a2b9ffeK4mN8pQ2rS6tUv: the database could not be read on \(a damaged file\?\): database disk image is malformed/,
    );
    // The session table's root page: no session can be listed; each is named by its message rows instead.
    const sessions = damage("session");
    const sessionItems = await read(sessions);
    checkItems(sessionItems, sessions);
    expect(quarantined(sessionItems).map((entry) => entry.id ?? "")).toEqual(["", CHAT, CHILD, PARENT].sort());
    expect(quarantined(sessionItems).find((entry) => entry.id === undefined)?.reason).toMatch(
      /^the sessions could not be read \(a damaged database\?\): database disk image is malformed/,
    );
  });

  it("a truncated file and flipped bytes: quarantined with a reason, never thrown; what can be read is read", async () => {
    const bytes = readFileSync(DB);
    const dir = tempDir("lwm-opencode-db-");
    for (const cut of [100, 4096, 8192, Math.floor(bytes.length / 2), bytes.length - 4096]) {
      const path = join(dir, `cut-${cut}.db`);
      writeFileSync(path, bytes.subarray(0, cut));
      const items = await read(path);
      checkItems(items, path);
      expect(items.length, `cut at ${cut}`).toBeGreaterThan(0);
      // Every session is accounted for: read, or quarantined, or the file refused as a whole.
      const named = new Set([...trajectories(items).map((t) => t.id), ...quarantined(items).flatMap((entry) => entry.id ?? [])]);
      const whole = quarantined(items).some((entry) => entry.id === undefined);
      expect(whole || [PARENT, CHILD, CHAT].every((id) => named.has(id)), `cut at ${cut}`).toBe(true);
    }
    for (let seed = 1; seed <= 20; seed++) {
      const flipped = Buffer.from(bytes);
      let state = seed;
      for (let i = 0; i < 40; i++) {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        const at = 100 + (state % (flipped.length - 100));
        flipped[at] = (flipped[at] as number) ^ 0xff;
      }
      const path = join(dir, `flipped-${seed}.db`);
      writeFileSync(path, flipped);
      const items = await read(path);
      checkItems(items, path);
      expect(items.length, `seed ${seed}`).toBeGreaterThan(0);
    }
  });
});

describe("opencode reader: other SQLite files", () => {
  /** A database of another program: SQLite, but no OpenCode table. */
  function otherDb(): string {
    const path = join(tempDir("lwm-opencode-db-"), "history.db");
    const db = new DatabaseSync(path);
    db.exec(
      "CREATE TABLE messages (id INTEGER PRIMARY KEY, role TEXT, content TEXT); INSERT INTO messages (role, content) VALUES ('user', 'hi');",
    );
    db.close();
    return path;
  }

  it("are refused at detection with the advice to export the records (OpenCode's: `opencode export`)", async () => {
    const garbage = join(tempDir("lwm-opencode-db-"), "opencode.db");
    writeFileSync(garbage, Buffer.concat([Buffer.from("SQLite format 3\0"), Buffer.alloc(4080, 1)]));
    for (const path of [otherDb(), garbage]) {
      const detection = await detectFormat(path);
      expect(detection.kind, path).toBe("unrecognized");
      expect(detection.kind === "unrecognized" && detection.reason, path).toMatch(
        /^an SQLite database, which lwm-data does not unpack: lwm-data reads no database but OpenCode's own .*`opencode export <sessionID> > <sessionID>\.json`/,
      );
    }
  });

  it("a compressed one whose start shows no OpenCode table is refused, saying to set format: opencode (which then reads its tables)", async () => {
    const path = `${otherDb()}.gz`;
    writeFileSync(path, gzipSync(readFileSync(path.slice(0, -3))));
    const detection = await detectFormat(path);
    expect(detection.kind === "unrecognized" && detection.reason).toMatch(
      /^an SQLite database, compressed or remote, whose start shows no OpenCode, Crush, Cursor, Zed or Warp table: .*set inputs\[\]\.format \(or --format\) to opencode/,
    );
    expect(quarantined(await read(path))).toEqual([
      expect.objectContaining({ reason: "not OpenCode's session database: no table `session`, no table `message`, no table `part`" }),
    ]);
  });

  it("read as opencode anyway (format: opencode), one quarantine entry names what is missing", async () => {
    const path = otherDb();
    expect(await read(path)).toEqual([
      {
        kind: "quarantine",
        entry: {
          source: { uri: path, format: "opencode" },
          stage: "read",
          reason: "not OpenCode's session database: no table `session`, no table `message`, no table `part`",
        },
      },
    ]);
    // A database copied in WAL mode without its -wal: the reason says where the rows may be.
    const wal = join(tempDir("lwm-opencode-db-"), "opencode.db");
    const db = new DatabaseSync(wal);
    db.exec("CREATE TABLE kv (k TEXT); PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE session (id TEXT)");
    mkdirSync(join(wal, "..", "copy"));
    const copy = join(wal, "..", "copy", "opencode.db");
    copyFileSync(wal, copy);
    db.close();
    const [item] = await read(copy);
    expect(item?.kind === "quarantine" && item.entry.reason).toMatch(/no opencode\.db-wal is beside it/);
  });
});
