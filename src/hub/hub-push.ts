import { openAsBlob } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import { type CommitOperation, commitIter, createRepo, HubApiError, type ListFileEntry, repoExists } from "@huggingface/hub";
import { UserError } from "../core/errors.ts";
import {
  checkRepoPath,
  credentials,
  digestFile,
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

export interface HubPushOptions {
  /** The output folder to upload. */
  dir: string;
  /** Dataset repo, `namespace/name` (a leading `datasets/` is accepted). */
  repo: string;
  hubUrl?: string;
  token?: string;
  /** Branch to commit to (default `main`). */
  revision?: string;
  /** Visibility of a repo this push creates; an existing repo keeps its own. */
  private?: boolean;
  /** Create the repo when it does not exist (default true). */
  createRepo?: boolean;
  /** Paths relative to dir; default: every file except `*.tmp`, `tasks/`, `launch/` and `curate/`. */
  files?: string[];
  /** Files per commit (default 50). */
  batchSize?: number;
  onProgress?: (event: HubProgressEvent) => void;
}

export interface HubPushResult {
  /** In commit order. */
  uploaded: string[];
  /** Already on the Hub with the same content. */
  skipped: string[];
  commits: number;
}

/** Uploaded in a last commit of their own, after every shard, so a repo holding a manifest is complete. */
const FINAL_FILES = ["manifest.json", "README.md"];
const DEFAULT_BATCH_SIZE = 50;
/** Run bookkeeping, not data (see the README's output layout). */
// Internal state: task markers, launch scripts, and the curation stages' working files (only needed to resume).
const EXCLUDED_FOLDERS = ["tasks/", "launch/", "curate/"];

interface LocalFile {
  path: string;
  abs: string;
  size: number;
}

interface PlannedCommit {
  title: string;
  files: LocalFile[];
  deletes: string[];
}

/**
 * Uploads an output folder to a dataset repo in commits of `batchSize` files, using classic LFS
 * (not Xet). Resumable: files the repo already holds with the same content are skipped, so a
 * rerun after an interruption uploads only what is missing.
 */
export async function hubPush(options: HubPushOptions): Promise<HubPushResult> {
  const context = hubContext(options);
  const batchSize = checkBatchSize(options.batchSize ?? DEFAULT_BATCH_SIZE);
  const local = await localFiles(context, resolve(options.dir), options.files);
  if (options.createRepo !== false) await ensureRepo(context, options.private);
  const remote = new Map((await listRepoFiles(context, "push")).map((entry) => [entry.path, entry]));
  const { upload, skipped } = await splitByRemote(local, remote);
  const commits = planCommits(upload, remote, batchSize);
  const progress = progressReporter(upload, options.onProgress);
  for (const [index, planned] of commits.entries()) {
    await runCommit(context, planned, `${index + 1} of ${commits.length}`, progress);
  }
  return { uploaded: commits.flatMap((planned) => planned.files.map((file) => file.path)), skipped, commits: commits.length };
}

function checkBatchSize(batchSize: number): number {
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new UserError(`hub push: batchSize must be a positive integer, got ${batchSize}`);
  return batchSize;
}

/** The files to upload, relative paths with `/`, sorted. */
async function localFiles(context: HubContext, dir: string, files: string[] | undefined): Promise<LocalFile[]> {
  const paths = files ? [...new Set(files)] : await walkOutputFolder(context, dir);
  const found = await Promise.all(paths.map((path) => localFile(context, dir, path)));
  if (found.length === 0) throw new UserError(`hub push ${repoLabel(context.repo)}: no files to upload in ${dir}`);
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function walkOutputFolder(context: HubContext, dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((err: Error) => {
    throw new UserError(`hub push ${repoLabel(context.repo)}: cannot read ${dir}: ${err.message}`);
  });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join("/"))
    .filter((path) => !path.endsWith(".tmp") && !EXCLUDED_FOLDERS.some((folder) => path.startsWith(folder)));
}

async function localFile(context: HubContext, dir: string, path: string): Promise<LocalFile> {
  checkRepoPath(context, path);
  const abs = localPath(dir, path);
  const info = await stat(abs).catch(() => undefined);
  if (!info?.isFile()) throw new UserError(`hub push ${repoLabel(context.repo)}: ${path} is not a file in ${dir}`);
  return { path, abs, size: info.size };
}

/** Hashes only files the repo holds with the same size: any other file needs uploading anyway. */
async function splitByRemote(local: LocalFile[], remote: Map<string, ListFileEntry>): Promise<{ upload: LocalFile[]; skipped: string[] }> {
  const upload: LocalFile[] = [];
  const skipped: string[] = [];
  for (const file of local) {
    const entry = remote.get(file.path);
    const same = entry !== undefined && remoteSize(entry) === file.size && sameContent(await digestFile(file.abs, file.size), entry);
    if (same) skipped.push(file.path);
    else upload.push(file);
  }
  return { upload, skipped };
}

function planCommits(upload: LocalFile[], remote: Map<string, ListFileEntry>, batchSize: number): PlannedCommit[] {
  const body = upload.filter((file) => !FINAL_FILES.includes(file.path));
  const final = FINAL_FILES.flatMap((name) => upload.filter((file) => file.path === name));
  const batches = chunk(body, batchSize);
  const commits: PlannedCommit[] = batches.map((files, index) => ({
    title: `lwm-data: upload ${files.length} files (batch ${index + 1} of ${batches.length})`,
    files,
    deletes: [],
  }));
  // A manifest being replaced must not vouch for a half-replaced set of shards meanwhile.
  const replacesManifest = final.some((file) => file.path === "manifest.json") && remote.has("manifest.json");
  if (replacesManifest && commits[0]) commits[0].deletes.push("manifest.json");
  if (final.length > 0) commits.push({ title: "lwm-data: manifest and dataset card", files: final, deletes: [] });
  return commits;
}

function chunk<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

async function runCommit(context: HubContext, planned: PlannedCommit, label: string, progress: ProgressReporter): Promise<void> {
  const operations: CommitOperation[] = planned.deletes.map((path) => ({ operation: "delete", path }));
  for (const file of planned.files) {
    // A file-backed Blob: the library reads (hashes, uploads) it as a stream, never whole in memory.
    operations.push({ operation: "addOrUpdate", path: file.path, content: await openAsBlob(file.abs) });
  }
  try {
    const events = commitIter({
      ...credentials(context),
      repo: context.repo,
      title: planned.title,
      operations,
      branch: context.revision,
      hubUrl: context.hubUrl,
      // The library defaults to Xet storage; classic LFS is what every Hub-compatible server speaks.
      useXet: false,
    });
    for await (const event of events) {
      if (event.event === "fileProgress" && event.state === "uploading" && event.progress === 1) progress.finished(event.path);
    }
  } catch (err) {
    const failure = hubError(context, "push", `commit ${label} (${describeFiles(planned.files)})`, err);
    failure.message += "; rerun to resume: files already on the Hub are skipped";
    throw failure;
  }
  for (const file of planned.files) progress.finished(file.path);
}

function describeFiles(files: LocalFile[]): string {
  const [first] = files;
  if (!first) return "no files";
  return files.length === 1 ? first.path : `${first.path} and ${files.length - 1} more`;
}

async function ensureRepo(context: HubContext, makePrivate: boolean | undefined): Promise<void> {
  const common = { repo: context.repo, hubUrl: context.hubUrl };
  try {
    if (await repoExists({ ...common, accessToken: context.token })) return;
  } catch (err) {
    throw hubError(context, "push", "checking whether the repo exists", err);
  }
  if (!context.token)
    throw new UserError(`hub push ${repoLabel(context.repo)}: the repo does not exist, and creating it needs a token (HF_TOKEN)`);
  const visibility = makePrivate === undefined ? undefined : makePrivate ? "private" : "public";
  try {
    await createRepo({ ...common, accessToken: context.token, visibility });
  } catch (err) {
    // Someone (another rank?) created it between the check and now: that is what we wanted.
    if (err instanceof HubApiError && err.statusCode === 409) return;
    throw hubError(context, "push", "creating the repo", err);
  }
}

interface ProgressReporter {
  finished(path: string): void;
}

/** Reports each uploaded file once: when its LFS upload ends, or else when its commit lands. */
function progressReporter(upload: LocalFile[], onProgress: ((event: HubProgressEvent) => void) | undefined): ProgressReporter {
  const sizes = new Map(upload.map((file) => [file.path, file.size]));
  const done = new Set<string>();
  return {
    finished(path) {
      const bytes = sizes.get(path);
      if (bytes === undefined || done.has(path)) return;
      done.add(path);
      onProgress?.({ file: path, bytes, done: done.size, total: upload.length });
    },
  };
}
