import { createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, posix, resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { downloadFile, type ListFileEntry } from "@huggingface/hub";
import { UserError } from "../core/errors.ts";
import {
  createDigester,
  credentials,
  type Digester,
  digestFile,
  type FileDigest,
  type HubContext,
  type HubProgressEvent,
  hubContext,
  hubError,
  listRepoFiles,
  localPath,
  remoteSize,
  repoLabel,
  sameContent,
} from "./hub-common.ts";

export interface HubPullOptions {
  /** Dataset repo, `namespace/name` (a leading `datasets/` is accepted). */
  repo: string;
  /** Globs over repo paths (`**\/*.jsonl.gz`); all files when empty. */
  include?: string[];
  destDir: string;
  hubUrl?: string;
  token?: string;
  revision?: string;
  onProgress?: (event: HubProgressEvent) => void;
}

export interface PulledFile {
  path: string;
  bytes: number;
  sha256?: string;
  /** Already present with the same content, not downloaded again. */
  skipped: boolean;
}

/**
 * Downloads the files of a dataset repo into destDir, streamed, each through `<file>.tmp` and a
 * rename so a partial file is never visible. Files already present with the same content are
 * skipped, so rerunning an interrupted pull only fetches what is missing.
 */
export async function hubPull(options: HubPullOptions): Promise<{ files: PulledFile[] }> {
  const context = hubContext(options);
  const destDir = resolve(options.destDir);
  const entries = await listRepoFiles(context, "pull");
  const wanted = entries.filter((entry) => matchesInclude(entry.path, options.include));
  const files: PulledFile[] = [];
  for (const entry of wanted) {
    const pulled = await pullFile(context, entry, destDir);
    files.push(pulled);
    options.onProgress?.({ file: pulled.path, bytes: pulled.bytes, done: files.length, total: wanted.length });
  }
  return { files };
}

async function pullFile(context: HubContext, entry: ListFileEntry, destDir: string): Promise<PulledFile> {
  const dest = localPath(destDir, entry.path);
  const size = remoteSize(entry);
  const local = await digestIfSameSize(dest, size);
  if (local && sameContent(local, entry)) return { path: entry.path, bytes: size, sha256: local.sha256, skipped: true };
  const digest = await downloadTo(context, entry, dest);
  return { path: entry.path, bytes: digest.bytes, sha256: digest.sha256, skipped: false };
}

/** Streams one file into `<dest>.tmp`, checks size and hash against the listing, then renames. */
async function downloadTo(context: HubContext, entry: ListFileEntry, dest: string): Promise<FileDigest> {
  const size = remoteSize(entry);
  const temp = `${dest}.tmp`;
  await mkdir(dirname(dest), { recursive: true });
  const digester = createDigester(size);
  try {
    // The Hub's answer to a one-byte range probe of an empty file is not something to rely on.
    if (size === 0 && !entry.lfs) await writeFile(temp, "");
    else await pipeline(await openRemote(context, entry), hashThrough(digester), createWriteStream(temp));
  } catch (err) {
    await rm(temp, { force: true });
    throw hubError(context, "pull", `downloading ${entry.path}`, err);
  }
  const digest = digester.finish();
  if (!arrivedIntact(digest, entry)) {
    await rm(temp, { force: true });
    throw new UserError(
      `hub pull ${repoLabel(context.repo)}: ${entry.path} arrived damaged (${digest.bytes} bytes, sha256 ${digest.sha256}; ` +
        `the listing says ${size} bytes${entry.lfs ? `, sha256 ${entry.lfs.oid}` : ""}); rerun to fetch it again`,
    );
  }
  await rename(temp, dest);
  return digest;
}

async function openRemote(context: HubContext, entry: ListFileEntry): Promise<Readable> {
  // Segments are encoded because the library puts the path into the URL as is (`#`, `?`, spaces).
  const path = entry.path.split("/").map(encodeURIComponent).join("/");
  // xet: false keeps downloads on plain HTTP (resolve + redirect), which every Hub mirror speaks.
  const blob = await downloadFile({
    ...credentials(context),
    repo: context.repo,
    path,
    revision: context.revision,
    hubUrl: context.hubUrl,
    xet: false,
  });
  if (!blob) throw new Error(`${entry.path} is listed but the server says it does not exist`);
  return Readable.fromWeb(blob.stream() as NodeReadableStream<Uint8Array>);
}

function hashThrough(digester: Digester): (source: AsyncIterable<Buffer>) => AsyncGenerator<Buffer> {
  return async function* (source) {
    for await (const chunk of source) {
      digester.update(chunk);
      yield chunk;
    }
  };
}

function matchesInclude(path: string, include: string[] | undefined): boolean {
  if (!include || include.length === 0) return true;
  return include.some((glob) => posix.matchesGlob(path, glob));
}

/** After a download: the hash must match, except for xet-only entries, where only the size can be checked. */
function arrivedIntact(digest: FileDigest, entry: ListFileEntry): boolean {
  if (!entry.lfs && entry.xetHash) return digest.bytes === remoteSize(entry);
  return sameContent(digest, entry);
}

/** The local file's digest when it exists with the expected size; hashing a wrong-sized file is wasted work. */
async function digestIfSameSize(path: string, size: number): Promise<FileDigest | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile() || info.size !== size) return undefined;
  return digestFile(path, size);
}
