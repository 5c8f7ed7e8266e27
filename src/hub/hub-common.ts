/**
 * What Hub pull and push share: the repo context and credentials, repo ids and labels, listing a
 * repo's files, repo-path checks, file digests and content comparison, and error reporting.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { HubApiError, type ListFileEntry, listFiles, type RepoId } from "@huggingface/hub";
import { UserError } from "../core/errors.ts";
import { scrubSecrets } from "./scrub-secrets.ts";

/** What every Hub call needs. */
export interface HubContext {
  repo: RepoId;
  hubUrl: string | undefined;
  token: string | undefined;
  revision: string | undefined;
}

export function hubContext(options: { repo: string; hubUrl?: string; token?: string; revision?: string }): HubContext {
  return { repo: datasetRepo(options.repo), hubUrl: trimHubUrl(options.hubUrl), token: options.token, revision: options.revision };
}

/** `namespace/name` or `datasets/namespace/name` → the library's dataset repo id. */
export function datasetRepo(repo: string): RepoId {
  const name = repo.startsWith("datasets/") ? repo.slice("datasets/".length) : repo;
  if (!/^[\w.-]+\/[\w.-]+$/.test(name)) {
    throw new UserError(`hub: invalid dataset repo ${JSON.stringify(repo)}: expected namespace/name, e.g. my-org/my-dataset`);
  }
  return { type: "dataset", name };
}

export function repoLabel(repo: RepoId): string {
  return `datasets/${repo.name}`;
}

function trimHubUrl(hubUrl: string | undefined): string | undefined {
  return hubUrl?.replace(/\/+$/, "");
}

/** The library wants the token as `accessToken`, and no key at all when there is none. */
export function credentials(context: HubContext): { accessToken: string } | Record<string, never> {
  return context.token ? { accessToken: context.token } : {};
}

/** One file finished (downloaded, uploaded or found already in place). */
export interface HubProgressEvent {
  file: string;
  bytes: number;
  /** Files finished so far, this one included. */
  done: number;
  total: number;
}

/** Every file of the repo at the revision, each path checked before anything is written. */
export async function listRepoFiles(context: HubContext, verb: string): Promise<ListFileEntry[]> {
  const entries: ListFileEntry[] = [];
  try {
    for await (const entry of listFiles({
      ...credentials(context),
      repo: context.repo,
      recursive: true,
      revision: context.revision,
      hubUrl: context.hubUrl,
    })) {
      if (entry.type === "file") entries.push(entry);
    }
  } catch (err) {
    throw hubError(context, verb, "listing the repo's files", err);
  }
  // A hostile or broken server must not be able to make us write outside the destination.
  for (const entry of entries) checkRepoPath(context, entry.path);
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Refuses repo paths that could land outside the folder they are pulled into or pushed from. */
export function checkRepoPath(context: Pick<HubContext, "repo">, path: string): void {
  const problem = repoPathProblem(path);
  if (problem) throw new UserError(`hub ${repoLabel(context.repo)}: refusing file path ${JSON.stringify(path)}: ${problem}`);
}

function repoPathProblem(path: string): string | undefined {
  if (path === "") return "it is empty";
  if (path.startsWith("/") || isAbsolute(path) || /^[A-Za-z]:/.test(path)) return "it is absolute";
  if (path.includes("\\")) return "it contains a backslash";
  if (path.includes("\0")) return "it contains a NUL byte";
  const segments = path.split("/");
  if (segments.includes("..")) return "it contains '..'";
  if (segments.some((segment) => segment === "" || segment === ".")) return "it has an empty or '.' segment";
  return undefined;
}

/** destDir/<path>, with a last check that the result stays inside destDir. */
export function localPath(destDir: string, path: string): string {
  const full = join(destDir, ...path.split("/"));
  const rel = relative(destDir, full);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) throw new UserError(`hub: ${path} would be written outside ${destDir}`);
  return full;
}

/** The size of the file itself (for an LFS file, not of its pointer). */
export function remoteSize(entry: ListFileEntry): number {
  return entry.lfs?.size ?? entry.size;
}

/** LFS files are compared by sha256, the others by their git blob id: both are in the listing. */
export function sameContent(local: FileDigest, entry: ListFileEntry): boolean {
  if (local.bytes !== remoteSize(entry)) return false;
  if (entry.lfs) return local.sha256 === entry.lfs.oid;
  // A xet-only entry lists no hash we can compute here (its oid is the pointer's): never assume a match.
  if (entry.xetHash) return false;
  return local.gitOid === entry.oid;
}

export interface FileDigest {
  bytes: number;
  sha256: string;
  /** Git blob id: sha1 of `blob <size>\0` + content, what the Hub lists as `oid` for non-LFS files. */
  gitOid: string;
}

export interface Digester {
  update(chunk: Buffer): void;
  finish(): FileDigest;
}

/** Hashes while the bytes stream by; `size` is needed up front for the git blob header. */
export function createDigester(size: number): Digester {
  const sha256 = createHash("sha256");
  const sha1 = createHash("sha1").update(`blob ${size}\0`);
  let bytes = 0;
  return {
    update(chunk) {
      sha256.update(chunk);
      sha1.update(chunk);
      bytes += chunk.length;
    },
    finish: () => ({ bytes, sha256: sha256.digest("hex"), gitOid: sha1.digest("hex") }),
  };
}

export async function digestFile(path: string, size: number): Promise<FileDigest> {
  const digester = createDigester(size);
  for await (const chunk of createReadStream(path)) digester.update(chunk as Buffer);
  return digester.finish();
}

/**
 * A UserError naming the repo and the step that failed, with the server's reason and the
 * network cause; any token text is scrubbed (a server may echo the Authorization header).
 */
export function hubError(context: HubContext, verb: string, step: string, err: unknown): UserError {
  if (err instanceof UserError) return new UserError(scrubSecrets(err.message, context.token));
  const message = `hub ${verb} ${repoLabel(context.repo)}: ${step} failed: ${describeError(err)}`;
  return new UserError(scrubSecrets(message, context.token));
}

function describeError(err: unknown): string {
  if (err instanceof HubApiError) return `HTTP ${err.statusCode}: ${err.message}`;
  if (!(err instanceof Error)) return String(err);
  // fetch() reports network failures as "fetch failed" with the real reason in `cause`.
  const cause = err.cause instanceof Error ? ` (${(err.cause as NodeJS.ErrnoException).code ?? err.cause.message})` : "";
  return `${err.message}${cause}`;
}
