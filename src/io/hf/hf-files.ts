import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type { ListFileEntry } from "@huggingface/hub";
import picomatch from "picomatch";
import { UserError } from "../../core/errors.ts";
import { type RangeBlob, rangeBlob } from "../range-blob.ts";
import {
  backoffMs,
  describeNetworkError,
  HubUnreachableError,
  hubEndpoint,
  hubFetch,
  hubToken,
  MAX_ATTEMPTS,
  type ResponseNote,
  scrub,
  serverMessage,
} from "./hf-http.ts";
import { type HfLocation, hfUri, parseHfUri } from "./hf-uri.ts";

/**
 * Files of Hub dataset repos as inputs (`hf://datasets/<namespace>/<name>[@<revision>]/<glob>`):
 * the revision resolved once to its commit sha, the glob matched against the repo's tree at that
 * commit, and every file read from `<endpoint>/datasets/<repo>/resolve/<sha>/<path>` with HTTP
 * Range requests, so a byte-range task reads only its part and nothing is copied to a disk first.
 */

export interface HfFile {
  /** `hf://datasets/<repo>@<sha>/<path>`: the commit pinned in the URI itself. */
  uri: string;
  bytes: number;
}

/**
 * Revisions resolved by this process, as `{"<endpoint> <repo>@<revision>": sha}`. Kept in the
 * environment so the worker threads (which plan the job again for themselves) and any process this
 * one starts pin the very commit the main thread planned, even if the branch moves meanwhile.
 */
const PINNED_VAR = "LWM_HF_PINNED_REVISIONS";

type HubLibrary = typeof import("@huggingface/hub");
/** @huggingface/hub once loaded: its error class, for hubError. */
let hubLoaded: HubLibrary | undefined;

/** The Hub client library, loaded on first use: a job without `hf://` inputs never pays its start-up (~25 modules, two wasm hashers). */
async function hubLibrary(): Promise<HubLibrary> {
  hubLoaded ??= await import("@huggingface/hub");
  return hubLoaded;
}

function pinned(): Record<string, string> {
  try {
    const value: unknown = JSON.parse(process.env[PINNED_VAR] ?? "{}");
    return value && typeof value === "object" ? (value as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/** The commit sha a location's revision (default `main`) names now; once per process per revision. */
export async function resolveRevision(location: HfLocation, uri: string): Promise<string> {
  const revision = location.revision ?? "main";
  const key = `${hubEndpoint()} ${location.repo}@${revision}`;
  const known = pinned()[key];
  if (known) return known;
  const note: ResponseNote = {};
  let sha: unknown;
  try {
    const { datasetInfo } = await hubLibrary();
    const info = await datasetInfo({
      name: location.repo,
      revision,
      additionalFields: ["sha"],
      hubUrl: hubEndpoint(),
      fetch: (input, init) => hubFetch(String(input), { headers: plainHeaders(init?.headers) }, note),
    });
    sha = info.sha;
  } catch (err) {
    throw hubError(uri, location, `resolving revision "${revision}"`, err, note);
  }
  if (typeof sha !== "string" || !/^[0-9a-f]{40}$/.test(sha))
    throw new UserError(`${uri}: the Hub gave no commit sha for revision "${revision}" of datasets/${location.repo}`);
  process.env[PINNED_VAR] = JSON.stringify({ ...pinned(), [key]: sha });
  return sha;
}

/** The part of a pattern before its first glob character. */
function literalPrefix(pattern: string): string {
  const glob = pattern.search(/[*?[\]{}()!+@]/);
  return glob === -1 ? pattern : pattern.slice(0, glob);
}

/** A hidden file or folder (`.gitattributes`, `.cache/`): skipped when a folder is expanded, as local folders skip them. */
function hidden(path: string): boolean {
  return path.split("/").some((segment) => segment.startsWith("."));
}

/**
 * The files an `hf://` location names at its revision's commit, sorted by path: a file, every
 * (non-hidden) file under a folder or the whole repo, or the files a glob matches (`**` crosses
 * `/`, as in local globs). Also returns the commit. A location that matches nothing returns no
 * files; a repo or revision that does not exist, or that the token cannot read, is a UserError.
 */
export async function listHf(uri: string): Promise<{ files: HfFile[]; sha: string }> {
  const location = parseHfUri(uri);
  const sha = await resolveRevision(location, uri);
  const pattern = location.path;
  const prefix = literalPrefix(pattern);
  const at = (entry: ListFileEntry): HfFile => ({
    uri: hfUri({ repo: location.repo, revision: sha, path: entry.path }),
    bytes: entry.lfs?.size ?? entry.size,
  });
  const sorted = (entries: ListFileEntry[]) => entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map(at);
  if (prefix !== pattern) {
    const matches = picomatch(pattern, { dot: true });
    const dir = prefix.slice(0, prefix.lastIndexOf("/") + 1);
    const entries = await tree(uri, location, sha, dir, true);
    return { files: sorted(entries.filter((entry) => entry.type === "file" && matches(entry.path))), sha };
  }
  const folder = async (dir: string) =>
    sorted((await tree(uri, location, sha, dir, true)).filter((entry) => entry.type === "file" && !hidden(entry.path.slice(dir.length))));
  if (pattern === "" || pattern.endsWith("/")) return { files: await folder(pattern), sha };
  // A file or a folder: its parent's listing says which.
  const parent = pattern.slice(0, pattern.lastIndexOf("/") + 1);
  const entry = (await tree(uri, location, sha, parent, false)).find((candidate) => candidate.path === pattern);
  if (!entry) return { files: [], sha };
  return { files: entry.type === "file" ? [at(entry)] : await folder(`${pattern}/`), sha };
}

/** The repo's tree under `dir` (a folder path ending in `/`, or "") at a commit; [] when the folder does not exist. */
async function tree(uri: string, location: HfLocation, sha: string, dir: string, recursive: boolean): Promise<ListFileEntry[]> {
  const note: ResponseNote = {};
  const entries: ListFileEntry[] = [];
  const path = dir.replace(/\/$/, "");
  try {
    const { listFiles } = await hubLibrary();
    for await (const entry of listFiles({
      repo: { type: "dataset", name: location.repo },
      revision: sha,
      ...(path ? { path: encodePath(path) } : {}),
      recursive,
      hubUrl: hubEndpoint(),
      fetch: (input, init) => hubFetch(String(input), { headers: plainHeaders(init?.headers) }, note),
    }))
      entries.push(entry);
  } catch (err) {
    if (note.status === 404 && note.errorCode === "EntryNotFound") return [];
    throw hubError(uri, location, "listing the repo's files", err, note);
  }
  return entries;
}

/** A URL path from a repo path: each segment encoded (`#`, `?`, spaces), the slashes kept. */
function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

function plainHeaders(headers: RequestInit["headers"]): Record<string, string> {
  return Object.fromEntries(new Headers(headers ?? {}).entries());
}

/** Where a file's bytes are served: the resolve URL (LFS and Xet files redirect from there to storage). */
function resolveUrl(location: HfLocation): string {
  const revision = encodeURIComponent(location.revision ?? "main");
  return `${hubEndpoint()}/datasets/${location.repo}/resolve/${revision}/${encodePath(location.path)}`;
}

/** A file's size in bytes: a one-byte Range request, its total read from Content-Range. */
export async function hfSize(uri: string): Promise<number> {
  const location = parseHfUri(uri);
  const response = await request(uri, location, 0, 1);
  await response.body?.cancel().catch(() => {});
  if (response.status === 416) return Number(response.headers.get("content-range")?.match(/\/(\d+)$/)?.[1] ?? 0);
  const total = response.headers.get("content-range")?.match(/\/(\d+)$/)?.[1] ?? response.headers.get("content-length");
  if (total === null || total === undefined) throw new UserError(`${uri}: the Hub gave no size for the file`);
  return Number(total);
}

/**
 * A file's bytes as a stream, whole or from `start` to `end` (exclusive), by HTTP Range requests.
 * A connection lost mid-body is resumed with a Range from the last byte delivered, with backoff,
 * up to MAX_ATTEMPTS times in a row; errors name the URI and never the token.
 */
export async function openHf(uri: string, range: { start?: number; end?: number } = {}): Promise<Readable> {
  const location = parseHfUri(uri);
  const start = range.start ?? 0;
  const { end } = range;
  if (end !== undefined && end <= start) return Readable.from([]);
  const first = await request(uri, location, start, end);
  if (first.status === 416) {
    await first.body?.cancel().catch(() => {});
    return Readable.from([]);
  }
  async function* body(): AsyncGenerator<Buffer> {
    let response = first;
    let position = start;
    let failures = 0;
    for (;;) {
      // A server that ignores Range answers 200 with the whole file: skip to where we are.
      let skip = response.status === 200 ? position : 0;
      const from = response.headers.get("content-range")?.match(/^bytes (\d+)-/)?.[1];
      if (response.status === 206 && Number(from) !== position)
        throw new Error(`${uri}: asked for the bytes from ${position}, the Hub answered from ${from ?? "an unknown offset"}`);
      const expected = expectedEnd(response, end);
      try {
        for await (const part of response.body ?? []) {
          let chunk = Buffer.from(part as Uint8Array);
          if (skip > 0) {
            const dropped = Math.min(skip, chunk.length);
            skip -= dropped;
            chunk = chunk.subarray(dropped);
          }
          if (end !== undefined && position + chunk.length > end) chunk = chunk.subarray(0, end - position);
          if (chunk.length === 0) continue;
          position += chunk.length;
          failures = 0;
          yield chunk;
          if (end !== undefined && position >= end) return;
        }
        if (expected === undefined || position >= expected) return;
        throw new Error(`the body ended at byte ${position}, before byte ${expected}`);
      } catch (err) {
        failures += 1;
        if (failures >= MAX_ATTEMPTS)
          throw new Error(`${uri}: the connection failed at byte ${position} ${MAX_ATTEMPTS} times in a row: ${describeNetworkError(err)}`);
        await sleep(backoffMs(failures));
        response = await request(uri, location, position, end);
        if (response.status === 416) return;
      }
    }
  }
  return Readable.from(body(), { objectMode: false });
}

/** A Hub file as a RangeBlob (what parquet-wasm reads): each range one Range request to the resolve URL. */
export async function hfBlob(uri: string): Promise<RangeBlob> {
  return rangeBlob(await hfSize(uri), (start, end) => openHf(uri, { start, end }));
}

/** Where an answer's body ends (exclusive), from Content-Range or Content-Length; undefined when it does not say. */
function expectedEnd(response: Response, end: number | undefined): number | undefined {
  const range = response.headers.get("content-range")?.match(/^bytes (\d+)-(\d+)\//);
  if (range) return Number(range[2]) + 1;
  const length = response.headers.get("content-length");
  if (response.status === 200 && length !== null) return end !== undefined ? Math.min(end, Number(length)) : Number(length);
  return undefined;
}

/** One GET of `[start, end)` (to the file's end when `end` is undefined); anything but 200/206/416 is a UserError. */
async function request(uri: string, location: HfLocation, start: number, end: number | undefined): Promise<Response> {
  const note: ResponseNote = {};
  // identity: the file's own bytes, so offsets are the file's (fetch would undo a CDN's gzip, not its Content-Length).
  const headers: Record<string, string> = {
    "Accept-Encoding": "identity",
    ...(start > 0 || end !== undefined ? { Range: `bytes=${start}-${end !== undefined ? end - 1 : ""}` } : {}),
  };
  let response: Response;
  try {
    response = await hubFetch(resolveUrl(location), { headers }, note);
  } catch (err) {
    throw hubError(uri, location, "reading the file", err, note);
  }
  if (response.ok || response.status === 416) return response;
  const message = await serverMessage(response);
  throw hubError(uri, location, "reading the file", new Error(message), note);
}

/**
 * A UserError for a failed Hub call, naming the URI and what was being done: the repo or the
 * revision not found, access refused (set HF_TOKEN: it is never printed), or the server's answer.
 */
function hubError(uri: string, location: HfLocation, step: string, err: unknown, note: ResponseNote): UserError {
  // Only what the server or the network said is scrubbed: the URI is the user's own text.
  if (err instanceof HubUnreachableError) return new UserError(`${uri}: ${step} failed: ${err.message}`);
  const repo = `datasets/${location.repo}`;
  const status = hubLoaded && err instanceof hubLoaded.HubApiError ? err.statusCode : note.status;
  // The library's messages end with the URL asked for: the URI already says which file.
  const detail = scrub(err instanceof Error ? err.message.replace(/\. URL: .*$/, "") : String(err));
  const token = hubToken();
  if (note.errorCode === "RepoNotFound")
    return new UserError(
      `${uri}: dataset repo ${location.repo} not found on ${hubEndpoint()}` +
        (token ? "" : " (if it is private or gated, set HF_TOKEN to a token that can read it)"),
    );
  if (note.errorCode === "RevisionNotFound")
    return new UserError(`${uri}: revision "${location.revision ?? "main"}" not found in ${repo} (a branch, a tag or a commit sha)`);
  if (status === 401 || status === 403) {
    const fix = token
      ? `the token in HF_TOKEN was refused: check that it can read ${repo} (a gated dataset's terms must be accepted on its page)`
      : `set HF_TOKEN to a token that can read ${repo}`;
    return new UserError(`${uri}: ${step} failed: access denied (HTTP ${status}${detail ? `: ${detail}` : ""}); ${fix}`);
  }
  if (status === 404) return new UserError(`${uri}: ${step} failed: not found in ${repo} (HTTP 404${detail ? `: ${detail}` : ""})`);
  return new UserError(`${uri}: ${step} failed: ${status ? `HTTP ${status}: ` : ""}${detail}`);
}
