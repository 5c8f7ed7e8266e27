import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { UserError } from "../core/errors.ts";
import { writeError } from "./write-error.ts";

/** A JSON file of ours, or undefined when it does not exist; a damaged one is named in the error. */
export async function readJsonFile<T>(path: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new UserError(`${path} is damaged (${(err as Error).message}); delete it and rerun`);
  }
}

/**
 * Writes JSON under a temporary name and renames it into place, so readers see a whole file or
 * none. `concurrentWriters`: several processes may write this file at once (ranks finalizing
 * together), so each uses a temporary name of its own; otherwise one fixed name, which a rerun
 * simply overwrites if a kill left it behind.
 */
export async function writeJsonFile(path: string, value: unknown, options: { indent: number; concurrentWriters?: boolean }): Promise<void> {
  await writeTextFile(path, `${JSON.stringify(value, null, options.indent)}\n`, options);
}

/** Writes text (or bytes) under a temporary name and renames it into place (see writeJsonFile). */
export async function writeTextFile(path: string, text: string | Uint8Array, options: { concurrentWriters?: boolean } = {}): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = options.concurrentWriters ? `${path}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp` : `${path}.tmp`;
  try {
    await writeFile(temp, text);
  } catch (err) {
    await rm(temp, { force: true });
    throw writeError(path, err as NodeJS.ErrnoException);
  }
  await rename(temp, path);
}

/** The objects of a JSON Lines text, one per non-empty line. */
export function parseJsonLines<T>(text: string): T[] {
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as T);
}

/** The objects of a JSON Lines file of ours, or none when it does not exist (a stage wrote nothing for that unit). */
export async function readJsonLines<T>(path: string): Promise<T[]> {
  const text = await readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return "";
    throw err;
  });
  return parseJsonLines<T>(text);
}
