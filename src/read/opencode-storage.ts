import { baseName, beside, listFolder, parentOf } from "../io/side-files.ts";

/*
 * Where an OpenCode session's files lie in its storage folder (sst/opencode
 * `packages/opencode/src/storage/storage.ts`, whose migrations move one layout to the next):
 *
 * - global (OpenCode 0.4 – 1.1, `~/.local/share/opencode/storage/`): `session/<projectID>/<sessionID>.json`,
 *   `message/<sessionID>/<messageID>.json`, `part/<messageID>/<partID>.json`; beside them
 *   `project/<projectID>.json`, `session_diff/<sessionID>.json`, `todo/<sessionID>.json`,
 *   `session_share/<sessionID>.json`, `share/<sessionID>.json` and the `migration` counter.
 * - per project (OpenCode ≤ 0.3, `~/.local/share/opencode/project/<dir>/storage/session/`):
 *   `info/<sessionID>.json`, `message/<sessionID>/<messageID>.json` (whole MessageV1 messages with
 *   their parts at first, then the message alone) and `part/<sessionID>/<messageID>/<partID>.json`.
 *
 * OpenCode ≥ 1.2 keeps sessions in an SQLite database (`opencode.db`) instead, its first run
 * moving this folder into it (read by src/read/opencode-db.ts); `opencode export` prints a session
 * as a JSON document (read by src/read/opencode.ts).
 *
 * Ids sort in creation order (`ses_`/`msg_`/`prt_` + a timestamp in hex + random base62;
 * `id/id.ts`), and OpenCode lists message and part files sorted by name: so are they read here.
 * Everything is found through src/io/side-files.ts, the same on a disk, in a bucket or on the Hub.
 */

export type StorageLayout = "global" | "legacy";

export interface SessionFiles {
  layout: StorageLayout;
  sessionID: string;
  /** The session's info file, when it is there. */
  sessionFile: string | undefined;
  /** The folder of its message files. */
  messageDir: string;
  /** The folder of one message's part files. */
  partDir(messageID: string): string;
  /** Files beside the session that are its own (diffs, todos, share) or its storage's (the migration counter). */
  sideFiles: string[];
  /** Folders of the storage's own that no record reads (`project/`). */
  sideDirs: string[];
  /** What the session's part folders sit in, for the legacy layout (`part/<sessionID>/`). */
  partRoot: string | undefined;
}

/** A storage file name: `<id>.json`, possibly compressed. */
const JSON_NAME = /^(.+)\.json(?:\.gz|\.zst|\.zstd)?$/i;

/** The id a storage file is named by (`msg_….json` → `msg_…`), or undefined for another name. */
export function storageId(name: string): string | undefined {
  return JSON_NAME.exec(name)?.[1];
}

/** The JSON files of a folder, name → bytes, sorted by name (= by id, = in creation order). */
export async function jsonFiles(dir: string): Promise<{ name: string; bytes: number }[]> {
  const { files } = await listFolder(dir);
  return [...files.entries()]
    .filter(([name]) => JSON_NAME.test(name))
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([name, bytes]) => ({ name, bytes }));
}

/** A local path made absolute (as listings name files); a URI as it is. */
export function normalized(path: string): string {
  return beside(parentOf(path), baseName(path));
}

async function fileIn(dir: string, id: string): Promise<string | undefined> {
  const found = (await jsonFiles(dir)).find((file) => storageId(file.name) === id);
  return found ? beside(dir, found.name) : undefined;
}

function globalFiles(storage: string, sessionID: string, sessionFile: string | undefined, projectID: string | undefined): SessionFiles {
  const own = ["session_diff", "todo", "session_share", "share"].map((dir) => beside(storage, dir, `${sessionID}.json`));
  return {
    layout: "global",
    sessionID,
    sessionFile,
    messageDir: beside(storage, "message", sessionID),
    partDir: (messageID) => beside(storage, "part", messageID),
    sideFiles: [...own, ...(projectID ? [beside(storage, "project", `${projectID}.json`)] : []), beside(storage, "migration")],
    sideDirs: [beside(storage, "project")],
    partRoot: undefined,
  };
}

function legacyFiles(root: string, sessionID: string, sessionFile: string | undefined): SessionFiles {
  return {
    layout: "legacy",
    sessionID,
    sessionFile,
    messageDir: beside(root, "message", sessionID),
    partDir: (messageID) => beside(root, "part", sessionID, messageID),
    sideFiles: [],
    sideDirs: [],
    partRoot: beside(root, "part", sessionID),
  };
}

/** The session file of a session in the global layout: `session/<any project>/<sessionID>.json`. */
async function globalSessionFile(storage: string, sessionID: string): Promise<{ path: string; projectID: string } | undefined> {
  const sessions = beside(storage, "session");
  for (const project of [...(await listFolder(sessions)).dirs].sort()) {
    const path = await fileIn(beside(sessions, project), sessionID);
    if (path) return { path, projectID: project };
  }
  return undefined;
}

export type StorageKind = "session" | "message" | "part";

/**
 * The files of the session a storage file belongs to, told by where the file lies (and, for a
 * part file of the global layout, by the `sessionID` it names). Undefined when the file is not in
 * a storage layout (a session or message file copied out of its folder).
 */
export async function sessionFilesOf(
  path: string,
  kind: StorageKind,
  sessionIDInFile: string | undefined,
): Promise<SessionFiles | undefined> {
  const dir = parentOf(path);
  const up = parentOf(dir);
  const id = storageId(baseName(path));
  if (kind === "session") {
    if (id === undefined) return undefined;
    if (baseName(dir) === "info" && baseName(up) === "session") return legacyFiles(up, id, normalized(path));
    if (baseName(up) === "session") return globalFiles(parentOf(up), id, normalized(path), baseName(dir));
    return undefined;
  }
  if (kind === "message") {
    // <root>/message/<sessionID>/<messageID>.json
    if (baseName(up) !== "message") return undefined;
    const root = parentOf(up);
    // The folder names the session (OpenCode's own SQLite migration trusts paths over content too).
    const sessionID = baseName(dir);
    if ((await listFolder(root)).dirs.has("info") || baseName(root) === "session") {
      return legacyFiles(root, sessionID, await fileIn(beside(root, "info"), sessionID));
    }
    const found = await globalSessionFile(root, sessionID);
    return globalFiles(root, sessionID, found?.path, found?.projectID);
  }
  // A part: <storage>/part/<messageID>/<partID>.json, or <root>/part/<sessionID>/<messageID>/<partID>.json.
  if (baseName(up) === "part") {
    if (sessionIDInFile === undefined) return undefined;
    const storage = parentOf(up);
    const found = await globalSessionFile(storage, sessionIDInFile);
    return globalFiles(storage, sessionIDInFile, found?.path, found?.projectID);
  }
  const top = parentOf(up);
  if (baseName(top) === "part") {
    const root = parentOf(top);
    const sessionID = baseName(up);
    return legacyFiles(root, sessionID, await fileIn(beside(root, "info"), sessionID));
  }
  return undefined;
}

/**
 * The file a session is read from: its session file, else (a storage folder without it) its first
 * message file. Undefined when neither is there.
 */
export async function anchorOf(files: SessionFiles): Promise<string | undefined> {
  if (files.sessionFile) return files.sessionFile;
  const first = (await jsonFiles(files.messageDir))[0];
  return first ? beside(files.messageDir, first.name) : undefined;
}
