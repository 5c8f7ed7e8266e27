import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { isMainThread } from "node:worker_threads";
import PQueue from "p-queue";
import {
  abortUploads,
  deleteObjects,
  downloadObject,
  type ListedObject,
  listObjects,
  sameContent,
  uploadFile,
} from "../io/s3/s3-transfer.ts";
import { isS3Uri } from "../io/s3/s3-uri.ts";

/** Transfers at once: enough to hide per-request latency; each upload buffers up to two 16 MiB parts. */
const TRANSFERS_IN_FLIGHT = 4;

/**
 * An output in object storage (`output.dir: s3://bucket/prefix`). Every stage works on a local
 * staging folder exactly as on a local output; this class moves files between the folder and the
 * bucket at the points where a unit's state changes, and the bucket is the truth:
 *
 * - before a stage, its inputs and markers are mirrored down (files the bucket lacks are deleted
 *   locally, so a marker written locally but never uploaded cannot make a task look done);
 * - after a unit (a task's checkpoint, a finished task, a curation unit), its files are uploaded,
 *   its completion marker last, so a marker in the bucket means every file it lists is there;
 * - shards and stats tables leave the staging folder once uploaded: local disk holds one
 *   segment's files per worker, whatever the job's size.
 *
 * Uploads are multipart uploads completed last (src/io/s3/s3-transfer.ts): a killed task leaves
 * no partial object anyone could read.
 */
export class RemoteOutput {
  /** `s3://bucket/prefix/`, with one trailing slash. */
  readonly uri: string;
  /** The staging folder. */
  readonly local: string;

  constructor(uri: string, local = stagingDirFor(uri)) {
    this.uri = uri.endsWith("/") ? uri : `${uri}/`;
    this.local = local;
  }

  /** The URI as the user wrote it (no trailing slash), for messages. */
  get shown(): string {
    return this.uri.slice(0, -1);
  }

  objectUri(name: string): string {
    return `${this.uri}${name}`;
  }

  /** The objects under a folder of the output (`tasks/`), by name relative to the output. */
  async list(folder: string): Promise<ListedObject[]> {
    const found = await listObjects(this.objectUri(folder));
    return found.map((object) => ({ ...object, name: `${folder}${object.name}` }));
  }

  /**
   * Makes the local copy of `folder` (a path ending in `/`, or one file) match the bucket for the
   * files `include` accepts: missing or different ones downloaded, ones the bucket lacks deleted.
   */
  async mirror(folder: string, include: (name: string) => boolean = () => true): Promise<void> {
    const isFolder = folder === "" || folder.endsWith("/");
    const remote = (await this.list(folder)).filter((object) => (isFolder || object.name === folder) && include(object.name));
    const local = new Set((await localFiles(this.local, folder)).filter(include));
    for (const object of remote) local.delete(object.name);
    await inParallel(remote, async (object) => {
      const path = join(this.local, object.name);
      const bytes = await stat(path).then(
        (s) => s.size,
        () => -1,
      );
      if (!(await sameContent(path, object, bytes))) await downloadObject(this.objectUri(object.name), path);
    });
    for (const stale of local) await rm(join(this.local, stale), { force: true });
  }

  /** Downloads one file; false (and the local copy removed) when the bucket has none. */
  async pull(name: string): Promise<boolean> {
    const found = await downloadObject(this.objectUri(name), join(this.local, name));
    if (!found) await rm(join(this.local, name), { force: true });
    return found;
  }

  /** Uploads local files (names relative to the output), several at once; `dropLocal` removes each once uploaded. */
  async push(names: readonly string[], options: { dropLocal?: boolean } = {}): Promise<void> {
    await inParallel(names, async (name) => {
      await uploadFile(join(this.local, name), this.objectUri(name));
      if (options.dropLocal) await rm(join(this.local, name), { force: true });
    });
  }

  /** Deletes objects of the output by name. */
  async remove(names: readonly string[]): Promise<void> {
    if (names.length > 0) await deleteObjects(this.uri, names);
  }

  /** Sizes of the objects under the folders, by name: what finalize checks the markers against. */
  async sizes(folders: readonly string[]): Promise<Map<string, number>> {
    const sizes = new Map<string, number>();
    for (const folder of folders) for (const object of await this.list(folder)) sizes.set(object.name, object.bytes);
    return sizes;
  }

  /** Deletes everything under the given folders and files of the output, and unfinished uploads there. */
  async clear(owned: readonly string[]): Promise<void> {
    for (const path of owned) {
      const objects = (await this.list(path)).filter((object) => object.name === path || object.name.startsWith(`${path}/`));
      await this.remove(objects.map((object) => object.name));
      await abortUploads(this.objectUri(path));
    }
  }

  /** Aborts the unfinished uploads a killed process left under the output. */
  async abortUnfinished(): Promise<number> {
    return abortUploads(this.uri);
  }
}

/**
 * The staging folder of an `s3://` output: under LWM_STAGING_DIR (else the system's temporary
 * folder), one per output and process — ranks sharing a machine never see each other's
 * unuploaded files; the worker threads of a process share it (they run different units).
 */
export function stagingDirFor(uri: string): string {
  const root = process.env.LWM_STAGING_DIR || join(tmpdir(), "lwm-data-staging");
  const digest = createHash("sha256").update(uri).digest("hex").slice(0, 16);
  const dir = join(root, `${digest}-${process.pid}`);
  removeOnExit(dir);
  return dir;
}

const removedOnExit = new Set<string>();

/** The staging folder goes with its process (the bucket has everything that counts); worker threads leave it to the main thread. */
function removeOnExit(dir: string): void {
  if (!isMainThread || removedOnExit.has(dir)) return;
  if (removedOnExit.size === 0)
    process.once("exit", () => {
      for (const path of removedOnExit) rmSync(path, { recursive: true, force: true });
    });
  removedOnExit.add(dir);
}

/** An `s3://` output, or undefined for a local folder. */
export function remoteOutputOf(dir: string): RemoteOutput | undefined {
  return isS3Uri(dir) ? new RemoteOutput(dir) : undefined;
}

/**
 * A local folder holding the output `dir` names: the folder itself, or for an `s3://` output its
 * staging folder brought up to date with the bucket — everything, or the `only` files and folders
 * a command reads — so `verify`, `stats` and `dashboard` read an output in object storage as they
 * read a local one.
 */
export async function localOutputFolder(dir: string, only: readonly string[] = [""]): Promise<string> {
  const remote = remoteOutputOf(dir);
  if (!remote) return dir;
  for (const path of only) await remote.mirror(path);
  return remote.local;
}

/** Runs `work` on every item, TRANSFERS_IN_FLIGHT at a time; the first failure rejects (after the running ones settle). */
async function inParallel<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  const queue = new PQueue({ concurrency: TRANSFERS_IN_FLIGHT });
  const results = await Promise.allSettled(items.map((item) => queue.add(() => work(item))));
  const failed = results.find((result) => result.status === "rejected");
  if (failed?.status === "rejected") throw failed.reason;
}

/** Files under `folder` of a local output (or that one file), relative to the output. */
async function localFiles(root: string, folder: string): Promise<string[]> {
  const base = join(root, folder);
  if (folder !== "" && !folder.endsWith("/"))
    return (await stat(base).then(
      (s) => s.isFile(),
      () => false,
    ))
      ? [folder]
      : [];
  const entries = await readdir(base, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile() && !entry.name.endsWith(".download"))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join("/"));
}
