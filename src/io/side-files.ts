import { readdirSync, statSync } from "node:fs";
import { posix, resolve, sep } from "node:path";
import { listHf } from "./hf/hf-files.ts";
import { isHfUri } from "./hf/hf-uri.ts";
import { isRemoteUri } from "./remote-uri.ts";
import { listPrefix } from "./s3/s3-transfer.ts";
import { isS3Uri, parseS3Uri, s3Uri } from "./s3/s3-uri.ts";

/**
 * The files beside an input — a DroidBot run's `states/`, a terminal-bench trial's recording and
 * panes, a BrowserGym run's `summary_info.json`, a Harbor trial's `result.json` — found the same
 * way whether the input is a path on a disk, an object in a bucket (`s3://`) or a Hub file
 * (`hf://`). Readers locate side files only through these (never `node:path` on a URI, never
 * `node:fs` on a remote input) and open them with the input functions (readWholeText,
 * openRawInput), so a job reads the same records from a folder and from its copy in a bucket.
 *
 * A remote folder is listed once per process (one ListObjectsV2 with a `/` delimiter per S3
 * folder; one recursive tree listing per Hub folder asked for, which answers for its subfolders
 * too); a local folder is read from the disk each time it is asked for.
 */

export interface FolderListing {
  /** Files directly in the folder: name → bytes. */
  files: Map<string, number>;
  /** Subfolders directly in it (names). */
  dirs: Set<string>;
}

const EMPTY: FolderListing = { files: new Map(), dirs: new Set() };

/** The folder holding `path` (a path or a URI; a URI stays a URI). */
export function parentOf(path: string): string {
  if (!isRemoteUri(path)) return resolve(path, "..");
  const { scheme, rest } = splitUri(path);
  const trimmed = rest.replace(/\/+$/, "");
  const slash = trimmed.lastIndexOf("/");
  return `${scheme}${slash === -1 ? "" : trimmed.slice(0, slash)}`;
}

/** The last segment of a path or URI. */
export function baseName(path: string): string {
  const trimmed = path.replace(/[/\\]+$/, "");
  return trimmed.slice(Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf(sep)) + 1);
}

/**
 * `segments` (which may hold `..` and `.`) under a folder: an absolute local path, or a URI of the
 * same bucket or Hub revision (`..` never climbs above the bucket or the repo).
 */
export function beside(dir: string, ...segments: string[]): string {
  if (!isRemoteUri(dir)) return resolve(dir, ...segments);
  const { scheme, root, rest } = splitUri(dir);
  const joined = posix.normalize(`/${[rest.slice(root.length), ...segments].join("/")}`).replace(/\/+$/, "");
  return `${scheme}${root}${joined}`;
}

/** `s3://bucket/key` → scheme `s3://`, root `bucket`; `hf://datasets/ns/name@rev/path` → root `datasets/ns/name@rev`. */
function splitUri(uri: string): { scheme: string; root: string; rest: string } {
  const scheme = isS3Uri(uri) ? "s3://" : "hf://";
  const rest = uri.slice(scheme.length);
  const parts = rest.split("/");
  const rootSegments = isHfUri(uri) ? 3 : 1;
  return { scheme, root: parts.slice(0, rootSegments).join("/"), rest };
}

const remoteListings = new Map<string, Promise<FolderListing>>();

/** The files and subfolders directly in a folder (empty when there is no such folder). */
export async function listFolder(dir: string): Promise<FolderListing> {
  const folder = dir.replace(/\/+$/, "");
  if (!isRemoteUri(folder)) return listLocal(folder);
  let listing = remoteListings.get(folder);
  if (!listing) {
    listing = isS3Uri(folder) ? listS3Folder(folder) : listHfFolder(folder);
    remoteListings.set(folder, listing);
    // A failed listing is not remembered: the next reader to ask tries again.
    listing.catch(() => remoteListings.delete(folder));
  }
  return listing;
}

/** Forgets the remote listings (tests that change a bucket between jobs of one process). */
export function forgetFolderListings(): void {
  remoteListings.clear();
  localListings.clear();
}

// A local folder's listing, kept while its mtime stays (a file added or removed changes it), so a
// run of thousands of files asked about file by file lists its folder once.
const localListings = new Map<string, { mtimeMs: number; listing: FolderListing }>();

function listLocal(dir: string): FolderListing {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(dir).mtimeMs;
  } catch {
    return EMPTY;
  }
  const known = localListings.get(dir);
  if (known?.mtimeMs === mtimeMs) return known.listing;
  const listing = readLocal(dir);
  if (localListings.size > 4096) localListings.clear();
  localListings.set(dir, { mtimeMs, listing });
  return listing;
}

function readLocal(dir: string): FolderListing {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return EMPTY;
  }
  const listing: FolderListing = { files: new Map(), dirs: new Set() };
  for (const entry of entries) {
    if (entry.isDirectory()) listing.dirs.add(entry.name);
    else if (entry.isFile() || entry.isSymbolicLink()) {
      try {
        const stat = statSync(resolve(dir, entry.name));
        if (stat.isDirectory()) listing.dirs.add(entry.name);
        else listing.files.set(entry.name, stat.size);
      } catch {
        // A dangling link is no file.
      }
    }
  }
  return listing;
}

async function listS3Folder(dir: string): Promise<FolderListing> {
  const { bucket, key } = parseS3Uri(dir);
  const folder = s3Uri({ bucket, key: key === "" ? "" : `${key}/` });
  const { objects, prefixes } = await listPrefix(folder, { shownAs: `${dir}/`, delimiter: "/", what: "the folder" });
  const listing: FolderListing = { files: new Map(), dirs: new Set(prefixes) };
  for (const object of objects) if (object.name !== "" && !object.name.includes("/")) listing.files.set(object.name, object.bytes);
  return listing;
}

async function listHfFolder(dir: string): Promise<FolderListing> {
  const { files } = await listHf(`${dir}/`);
  const listing: FolderListing = { files: new Map(), dirs: new Set() };
  const prefix = `${dir}/`;
  for (const file of files) {
    // listHf names files by the pinned commit; the folder asked for may name a branch.
    const at = file.uri.indexOf(prefix) === 0 ? file.uri.slice(prefix.length) : hfRelative(file.uri, dir);
    if (at === undefined) continue;
    const slash = at.indexOf("/");
    if (slash === -1) listing.files.set(at, file.bytes);
    else listing.dirs.add(at.slice(0, slash));
  }
  return listing;
}

/** A Hub file's path below `dir`, comparing repo paths (the revisions may be written differently). */
function hfRelative(fileUri: string, dir: string): string | undefined {
  const path = (uri: string) => uri.split("/").slice(4).join("/");
  const folder = path(dir);
  const file = path(fileUri);
  return folder === "" ? file : file.startsWith(`${folder}/`) ? file.slice(folder.length + 1) : undefined;
}

/** The size of a side file, or undefined when there is none (a folder is not a file). */
export async function sideFileSize(path: string): Promise<number | undefined> {
  return (await listFolder(parentOf(path))).files.get(baseName(path));
}

/** True when `path` is a file. */
export async function sideFileExists(path: string): Promise<boolean> {
  return (await sideFileSize(path)) !== undefined;
}

/** True when `path` is a folder. */
export async function sideFolderExists(path: string): Promise<boolean> {
  return (await listFolder(parentOf(path))).dirs.has(baseName(path));
}
