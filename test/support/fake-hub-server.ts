import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An in-memory Hugging Face Hub on 127.0.0.1 speaking the subset of the API that
 * `@huggingface/hub` (v2.17) uses for dataset repos with classic LFS, as read from its source:
 *
 * - `GET  /api/datasets/{ns}/{name}`                    repoExists (404 when missing)
 * - `GET  /api/datasets/{ns}/{name}/revision/{rev}`     datasetInfo: the commit `sha` a branch, tag or sha names now
 * - `POST /api/repos/create`                            createRepo (409 when it exists)
 * - `GET  /api/datasets/{ns}/{name}/tree/{rev}[/{dir}]` listFiles, paginated with a `Link: <…>; rel="next"` header
 * - `GET  /datasets/{ns}/{name}/resolve/{rev}/{path}`   downloads: Range, ETag, X-Repo-Commit; LFS files
 *                                                        answer 302 to `/lfs-objects/{oid}` like the Hub's CDN redirect
 * - `POST /api/datasets/{ns}/{name}/preupload/{rev}`    lfs for binary samples (a NUL byte) or large files, else regular
 * - `POST /datasets/{ns}/{name}.git/info/lfs/objects/batch`  LFS batch (`transfer: "basic"`; no upload action for
 *                                                        objects already stored, as real LFS servers do)
 * - `PUT  /lfs-upload/{oid}`                            the upload action (pre-signed: no Authorization needed)
 * - `POST /api/datasets/{ns}/{name}/commit/{rev}`       ndjson: header, file (base64), lfsFile, deletedFile
 *
 * The library never calls an LFS `verify` action and only uses multipart uploads when the server
 * offers them, so neither exists here. Writes go to `main`; reads (tree, resolve, revision) also
 * take an earlier commit's sha or a tag that `commitSeeded` made, and serve that commit's files.
 * Unknown repos answer 404 `RepoNotFound`, unknown revisions 404 `RevisionNotFound` (X-Error-Code).
 */

export interface FakeHubOptions {
  /** When set, API calls must carry `Authorization: Bearer <token>` (401 otherwise). */
  token?: string;
  /** Tree entries per page (the real Hub pages at 1000). */
  pageSize?: number;
  /** Files at least this big are LFS even when their sample looks like text (the Hub uses 10 MiB). */
  lfsThreshold?: number;
  /**
   * Serve LFS objects from a second port (another origin, as the Hub's CDN is) instead of this
   * server's own: a client must not send the token there. Same routes and request log.
   */
  storageOrigin?: boolean;
}

export interface FakeHubFaults {
  /** LFS PUTs beyond this many fail (all of them, until the faults are cleared). */
  failAfterUploads?: number;
  /** Commit POSTs beyond this many fail. */
  failAfterCommits?: number;
  /** `status`: a 500 answer; `reset`: the connection is destroyed without an answer. */
  mode?: "status" | "reset";
  /** A careless server that quotes the Authorization header in its 401 message. */
  echoAuthorization?: boolean;
  /** Whole-object LFS downloads arrive with one byte flipped (a broken mirror or proxy). */
  corruptDownloads?: boolean;
  /** The first this many answers serving file bytes (resolve of a regular file, an LFS object) are `readStatus` instead. */
  failReads?: number;
  /** Default 503; a 429 comes with `Retry-After: 0`. */
  readStatus?: number;
  /** The first this many answers serving more than `cutAfterBytes` bytes send only those, then reset the connection. */
  cutReads?: number;
  cutAfterBytes?: number;
}

export interface SeenRequest {
  method: string;
  /** Decoded path, without the query. */
  path: string;
  authorization: string | undefined;
  /** The Range header, when the request had one. */
  range?: string;
}

export interface FakeCommit {
  oid: string;
  summary: string;
  added: string[];
  deleted: string[];
}

interface StoredFile {
  size: number;
  /** Set for LFS files (content in the object store), absent for regular ones. */
  lfsOid?: string;
  content?: Buffer;
}

interface FakeRepo {
  /** The files of the head commit (`main`). */
  files: Map<string, StoredFile>;
  /** The files of earlier commits, by sha (kept when a commit replaces them). */
  snapshots: Map<string, Map<string, StoredFile>>;
  /** Tags: name → commit sha. */
  tags: Map<string, string>;
  commits: FakeCommit[];
  visibility: string | undefined;
}

class HttpError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  constructor(status: number, message: string, code?: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** params: the pattern's capture groups, "" where a group did not match. */
type RouteHandler = (req: IncomingMessage, res: ServerResponse, params: [string, string, string], url: URL) => Promise<void> | void;

const DEFAULT_GITATTRIBUTES = "*.parquet filter=lfs diff=lfs merge=lfs -text\n*.gz filter=lfs diff=lfs merge=lfs -text\n";

export class FakeHubServer {
  url = "";
  /** Where LFS downloads are redirected: `url`, or the second server's with `storageOrigin`. */
  storageUrl = "";
  faults: FakeHubFaults = {};
  readonly requests: SeenRequest[] = [];
  /** Successful LFS PUTs per sha256. */
  readonly uploadsByOid = new Map<string, number>();
  /** `transfers` of every LFS batch request, to see whether the client asked for Xet. */
  readonly batchTransfers: string[][] = [];
  /** Requests no route answered: a test should expect none. */
  readonly unhandled: string[] = [];
  lfsPutAttempts = 0;
  commitAttempts = 0;
  /** Answers that served (or were to serve) file bytes, counted for `failReads` / `cutReads`. */
  readAttempts = 0;
  /** Bodies cut so far (`cutReads`). */
  cutsDone = 0;

  private readonly server: Server;
  private readonly storage: Server | undefined;
  private readonly repos = new Map<string, FakeRepo>();
  private readonly objects = new Map<string, Buffer>();
  private readonly options: FakeHubOptions;

  constructor(options: FakeHubOptions = {}) {
    this.options = options;
    this.server = createServer((req, res) => void this.handle(req, res));
    if (options.storageOrigin) this.storage = createServer((req, res) => void this.handle(req, res));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.storageUrl = this.url;
    const storage = this.storage;
    if (storage) {
      await new Promise<void>((resolve) => storage.listen(0, "127.0.0.1", resolve));
      this.storageUrl = `http://127.0.0.1:${(storage.address() as AddressInfo).port}`;
    }
    return this;
  }

  async stop(): Promise<void> {
    for (const server of this.storage ? [this.server, this.storage] : [this.server]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  /** Counts requests from now on, failing as `faults` says (counters restart, so "after n" means n from now). */
  injectFaults(faults: FakeHubFaults): void {
    this.resetCounters();
    this.faults = faults;
  }

  /** Clears faults and counters (not the stored repos), e.g. between an interrupted run and its rerun. */
  resetCounters(): void {
    this.faults = {};
    this.requests.length = 0;
    this.lfsPutAttempts = 0;
    this.commitAttempts = 0;
    this.readAttempts = 0;
    this.cutsDone = 0;
  }

  /** Content of every file in a repo (LFS files resolved). */
  files(name: string): Map<string, Buffer> {
    const repo = this.repoOrThrow(name);
    return new Map([...repo.files].map(([path, file]) => [path, this.contentOf(file)]));
  }

  fileKind(name: string, path: string): "lfs" | "regular" | undefined {
    const file = this.repos.get(name)?.files.get(path);
    return file ? (file.lfsOid ? "lfs" : "regular") : undefined;
  }

  commits(name: string): FakeCommit[] {
    return this.repoOrThrow(name).commits;
  }

  visibility(name: string): string | undefined {
    return this.repoOrThrow(name).visibility;
  }

  /** Puts a file straight into a repo, bypassing every check: for hostile listings. */
  seedFile(name: string, path: string, content: Buffer | string, options: { lfs?: boolean } = {}): void {
    const repo = this.repos.get(name) ?? this.newRepo(name, undefined);
    const data = Buffer.from(content);
    if (options.lfs) {
      const oid = sha256(data);
      this.objects.set(oid, data);
      repo.files.set(path, { size: data.length, lfsOid: oid });
    } else repo.files.set(path, { size: data.length, content: data });
  }

  /** The head commit's sha (what `main` resolves to). */
  head(name: string): string {
    return headOf(this.repoOrThrow(name));
  }

  /**
   * Seals the files as they are now into the head commit (kept under its sha, and under `tag` when
   * given) and starts a new head commit, so later `seedFile`s change `main` but not what the sealed
   * commit serves. Returns the sealed commit's sha.
   */
  commitSeeded(name: string, options: { tag?: string; summary?: string } = {}): string {
    const repo = this.repoOrThrow(name);
    const sealed = headOf(repo);
    repo.snapshots.set(sealed, new Map(repo.files));
    if (options.tag) repo.tags.set(options.tag, sealed);
    repo.commits.push({ oid: randomOid(), summary: options.summary ?? "seeded", added: [], deleted: [] });
    return sealed;
  }

  private repoOrThrow(name: string): FakeRepo {
    const repo = this.repos.get(name);
    if (!repo) throw new Error(`fake hub: no repo ${name}`);
    return repo;
  }

  private newRepo(name: string, visibility: string | undefined): FakeRepo {
    const repo: FakeRepo = { files: new Map(), snapshots: new Map(), tags: new Map(), commits: [], visibility };
    this.repos.set(name, repo);
    // The Hub creates a repo with a first commit holding .gitattributes.
    const gitattributes = Buffer.from(DEFAULT_GITATTRIBUTES);
    repo.files.set(".gitattributes", { size: gitattributes.length, content: gitattributes });
    repo.commits.push({ oid: randomOid(), summary: "initial commit", added: [".gitattributes"], deleted: [] });
    return repo;
  }

  private contentOf(file: StoredFile): Buffer {
    if (!file.lfsOid) return file.content ?? Buffer.alloc(0);
    const object = this.objects.get(file.lfsOid);
    if (!object) throw new Error(`fake hub: LFS object ${file.lfsOid} missing`);
    return object;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    try {
      const url = new URL(req.url ?? "/", this.url);
      const path = url.pathname.split("/").map(decodeURIComponent).join("/");
      this.requests.push({
        method,
        path,
        authorization: req.headers.authorization,
        ...(req.headers.range ? { range: req.headers.range } : {}),
      });
      await this.route(req, res, method, path, url);
    } catch (err) {
      if (res.headersSent || res.destroyed) return;
      const status = err instanceof HttpError ? err.status : 500;
      const headers: Record<string, string> = err instanceof HttpError && err.code ? { "X-Error-Code": err.code } : {};
      sendJson(res, status, { error: (err as Error).message }, headers);
    }
  }

  /** Each route: method, path pattern (groups are the handler's params), and whether it needs the token. */
  private readonly routes: { method: string; pattern: RegExp; auth: boolean; handle: RouteHandler }[] = [
    // Pre-signed storage URLs, like S3's: no Authorization header is sent or needed.
    { method: "PUT", pattern: /^\/lfs-upload\/([0-9a-f]{64})$/, auth: false, handle: (req, res, [oid]) => this.lfsPut(req, res, oid) },
    {
      method: "GET",
      pattern: /^\/lfs-objects\/([0-9a-f]{64})$/,
      auth: false,
      handle: (req, res, [oid]) => this.serveObject(req, res, oid),
    },
    {
      method: "POST",
      pattern: /^\/api\/repos\/create$/,
      auth: true,
      handle: async (req, res) => this.createRepo(res, await readJson(req)),
    },
    { method: "GET", pattern: /^\/api\/datasets\/([^/]+\/[^/]+)$/, auth: true, handle: (_req, res, [name]) => this.repoInfo(res, name) },
    {
      method: "GET",
      pattern: /^\/api\/datasets\/([^/]+\/[^/]+)\/revision\/(.+)$/,
      auth: true,
      handle: (_req, res, [name, revision]) => this.revisionInfo(res, name, revision),
    },
    {
      method: "GET",
      pattern: /^\/api\/datasets\/([^/]+\/[^/]+)\/tree\/([^/]+)(?:\/(.*))?$/,
      auth: true,
      handle: (_req, res, [name, revision, dir], url) => this.tree(res, url, name, revision, dir),
    },
    {
      method: "POST",
      pattern: /^\/api\/datasets\/([^/]+\/[^/]+)\/preupload\/([^/]+)$/,
      auth: true,
      handle: async (req, res, [name, revision]) => this.preupload(res, name, revision, await readJson(req)),
    },
    {
      method: "POST",
      pattern: /^\/datasets\/([^/]+\/[^/]+)\.git\/info\/lfs\/objects\/batch$/,
      auth: true,
      handle: async (req, res, [name]) => this.lfsBatch(res, name, await readJson(req)),
    },
    {
      method: "POST",
      pattern: /^\/api\/datasets\/([^/]+\/[^/]+)\/commit\/([^/]+)$/,
      auth: true,
      handle: (req, res, [name, revision]) => this.commit(req, res, name, revision),
    },
    {
      method: "GET",
      pattern: /^\/datasets\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/,
      auth: true,
      handle: (req, res, [name, revision, path]) => this.resolve(req, res, name, revision, path),
    },
  ];

  private async route(req: IncomingMessage, res: ServerResponse, method: string, path: string, url: URL): Promise<void> {
    for (const route of this.routes) {
      const match = route.method === method ? path.match(route.pattern) : null;
      if (!match) continue;
      if (route.auth) this.checkAuth(req);
      const params: [string, string, string] = [match[1] ?? "", match[2] ?? "", match[3] ?? ""];
      return route.handle(req, res, params, url);
    }
    this.unhandled.push(`${method} ${path}`);
    throw new HttpError(404, `fake hub: no route for ${method} ${path}`);
  }

  private checkAuth(req: IncomingMessage): void {
    const expected = this.options.token;
    if (!expected || req.headers.authorization === `Bearer ${expected}`) return;
    const quoted = this.faults.echoAuthorization ? `: got ${req.headers.authorization ?? "nothing"}` : "";
    throw new HttpError(401, `Invalid credentials in Authorization header${quoted}`);
  }

  private repoFor(name: string, revision?: string): FakeRepo {
    const repo = this.repos.get(name);
    if (!repo) throw new HttpError(404, `Repository not found: datasets/${name}`, "RepoNotFound");
    if (revision !== undefined && revision !== "main") throw new HttpError(404, `Invalid rev id: ${revision}`, "RevisionNotFound");
    return repo;
  }

  /** The commit a revision names (`main`, a tag, or a commit's sha) and its files. */
  private commitAt(name: string, revision: string): { sha: string; files: Map<string, StoredFile> } {
    const repo = this.repoFor(name);
    const head = headOf(repo);
    const sha = revision === "main" ? head : (repo.tags.get(revision) ?? revision);
    if (sha === head) return { sha, files: repo.files };
    const files = repo.snapshots.get(sha);
    if (!files) throw new HttpError(404, `Invalid rev id: ${revision}`, "RevisionNotFound");
    return { sha, files };
  }

  private revisionInfo(res: ServerResponse, name: string, revision: string): void {
    const repo = this.repoFor(name);
    const { sha } = this.commitAt(name, revision);
    sendJson(res, 200, { _id: randomOid().slice(0, 24), id: name, private: repo.visibility === "private", sha });
  }

  private createRepo(res: ServerResponse, body: Record<string, unknown>): void {
    if (body.type !== "dataset") throw new HttpError(400, `fake hub: only dataset repos, got type ${String(body.type)}`);
    const name = `${String(body.organization)}/${String(body.name)}`;
    if (this.repos.has(name)) throw new HttpError(409, "You already created this dataset repo");
    this.newRepo(name, typeof body.visibility === "string" ? body.visibility : undefined);
    sendJson(res, 200, { url: `${this.url}/datasets/${name}`, name, id: randomOid().slice(0, 24) });
  }

  private repoInfo(res: ServerResponse, name: string): void {
    const repo = this.repoFor(name);
    sendJson(res, 200, { id: `datasets/${name}`, private: repo.visibility === "private", sha: headOf(repo) });
  }

  /** Files and directories under `dir`, `recursive` like the Hub, one page at a time from `cursor`. */
  private tree(res: ServerResponse, url: URL, name: string, revision: string, dir: string): void {
    const { files } = this.commitAt(name, revision);
    const recursive = url.searchParams.get("recursive") === "true";
    if (dir && ![...files.keys()].some((path) => path.startsWith(`${dir}/`)))
      throw new HttpError(404, `Entry not found: ${dir}`, "EntryNotFound");
    const entries = this.treeEntries(files, dir, recursive);
    const pageSize = this.options.pageSize ?? 1000;
    const cursor = Number(url.searchParams.get("cursor") ?? "0");
    const page = entries.slice(cursor, cursor + pageSize);
    const headers: Record<string, string> = {};
    if (cursor + pageSize < entries.length) {
      const next = new URL(url.href);
      next.searchParams.set("cursor", String(cursor + pageSize));
      headers.Link = `<${next.href}>; rel="next"`;
    }
    sendJson(res, 200, page, headers);
  }

  private treeEntries(tree: Map<string, StoredFile>, dir: string, recursive: boolean): object[] {
    const prefix = dir ? `${dir}/` : "";
    const directories = new Set<string>();
    const files: object[] = [];
    for (const [path, file] of tree) {
      if (!path.startsWith(prefix)) continue;
      const rest = path.slice(prefix.length).split("/");
      for (let depth = 1; depth < rest.length; depth++) {
        if (recursive || depth === 1) directories.add(prefix + rest.slice(0, depth).join("/"));
      }
      if (recursive || rest.length === 1) files.push(this.fileEntry(path, file));
    }
    const dirEntries = [...directories].map((path) => ({ type: "directory", oid: sha1(path), size: 0, path }));
    return [...dirEntries, ...files].sort((a, b) => ((a as { path: string }).path < (b as { path: string }).path ? -1 : 1));
  }

  /** For an LFS file `oid` is the git id of its pointer file and `lfs.oid` the sha256 of the content. */
  private fileEntry(path: string, file: StoredFile): object {
    if (!file.lfsOid) return { type: "file", oid: gitBlobOid(file.content ?? Buffer.alloc(0)), size: file.size, path };
    const pointer = lfsPointer(file.lfsOid, file.size);
    return {
      type: "file",
      oid: gitBlobOid(pointer),
      size: file.size,
      path,
      lfs: { oid: file.lfsOid, size: file.size, pointerSize: pointer.length },
    };
  }

  private preupload(res: ServerResponse, name: string, revision: string, body: Record<string, unknown>): void {
    this.repoFor(name, revision);
    const files = body.files as { path: string; size: number; sample: string }[];
    const threshold = this.options.lfsThreshold ?? 10 * 1024 * 1024;
    const modes = files.map((file) => {
      const binary = Buffer.from(file.sample, "base64").includes(0);
      return { path: file.path, uploadMode: binary || file.size >= threshold ? "lfs" : "regular", shouldIgnore: false };
    });
    sendJson(res, 200, { files: modes, commitOid: headOf(this.repoFor(name)) });
  }

  private lfsBatch(res: ServerResponse, name: string, body: Record<string, unknown>): void {
    this.repoFor(name);
    if (body.operation !== "upload") throw new HttpError(400, `fake hub: LFS batch operation ${String(body.operation)} not supported`);
    this.batchTransfers.push((body.transfers as string[] | undefined) ?? []);
    const objects = (body.objects as { oid: string; size: number }[]).map(({ oid, size }) => {
      if (this.objects.get(oid)?.length === size) return { oid, size };
      const href = `${this.url}/lfs-upload/${oid}?size=${size}`;
      return { oid, size, authenticated: true, actions: { upload: { href, expires_in: 3600 } } };
    });
    sendJson(res, 200, { transfer: "basic", objects }, {}, "application/vnd.git-lfs+json");
  }

  private async lfsPut(req: IncomingMessage, res: ServerResponse, oid: string): Promise<void> {
    this.lfsPutAttempts += 1;
    const limit = this.faults.failAfterUploads;
    if (limit !== undefined && this.lfsPutAttempts > limit) return this.fail(req, res, "upload");
    const body = await readBody(req);
    if (sha256(body) !== oid) throw new HttpError(400, `fake hub: uploaded content does not hash to ${oid}`);
    this.objects.set(oid, body);
    this.uploadsByOid.set(oid, (this.uploadsByOid.get(oid) ?? 0) + 1);
    res.writeHead(200, { ETag: `"${oid}"` }).end();
  }

  private async commit(req: IncomingMessage, res: ServerResponse, name: string, revision: string): Promise<void> {
    const repo = this.repoFor(name, revision);
    this.commitAttempts += 1;
    const limit = this.faults.failAfterCommits;
    if (limit !== undefined && this.commitAttempts > limit) return this.fail(req, res, "commit");
    const lines = (await readBody(req)).toString("utf8").split("\n").filter(Boolean);
    // The commit it replaces stays readable by its sha.
    if (!repo.snapshots.has(headOf(repo))) repo.snapshots.set(headOf(repo), new Map(repo.files));
    const operations = lines.map((line) => JSON.parse(line) as { key: string; value: Record<string, unknown> });
    const summary = String(operations.find((op) => op.key === "header")?.value.summary ?? "");
    // Validate everything before applying anything: a commit is atomic.
    const changes = operations.filter((op) => op.key !== "header").map((op) => this.commitChange(repo, op.key, op.value));
    const record: FakeCommit = { oid: randomOid(), summary, added: [], deleted: [] };
    for (const change of changes) {
      if (change.file) {
        repo.files.set(change.path, change.file);
        record.added.push(change.path);
      } else {
        repo.files.delete(change.path);
        record.deleted.push(change.path);
      }
    }
    repo.commits.push(record);
    sendJson(res, 200, {
      success: true,
      commitOid: record.oid,
      commitUrl: `${this.url}/datasets/${name}/commit/${record.oid}`,
      hookOutput: "",
    });
  }

  private commitChange(repo: FakeRepo, key: string, value: Record<string, unknown>): { path: string; file?: StoredFile } {
    const path = String(value.path);
    if (path.startsWith("/") || path.split("/").includes("..")) throw new HttpError(400, `Invalid path ${path}`);
    if (key === "file") {
      const content = Buffer.from(String(value.content), value.encoding === "base64" ? "base64" : "utf8");
      return { path, file: { size: content.length, content } };
    }
    if (key === "lfsFile") {
      const oid = String(value.oid);
      if (this.objects.get(oid)?.length !== value.size) throw new HttpError(422, `LFS object ${oid} of ${path} was never uploaded`);
      return { path, file: { size: Number(value.size), lfsOid: oid } };
    }
    if (key === "deletedFile") {
      if (!repo.files.has(path)) throw new HttpError(404, `Cannot delete ${path}: no such file`, "EntryNotFound");
      return { path };
    }
    throw new HttpError(400, `Unknown commit operation ${key}`);
  }

  private async resolve(req: IncomingMessage, res: ServerResponse, name: string, revision: string, path: string): Promise<void> {
    const at = this.commitAt(name, revision);
    const file = at.files.get(path);
    if (!file) throw new HttpError(404, `Entry not found: ${path}`, "EntryNotFound");
    const common = { "X-Repo-Commit": at.sha };
    if (file.lfsOid) {
      // Like the Hub: LFS content is served elsewhere (a CDN), the resolve answer only redirects.
      res.writeHead(302, {
        ...common,
        Location: this.storage ? `${this.storageUrl}/lfs-objects/${file.lfsOid}` : `/lfs-objects/${file.lfsOid}`,
        "X-Linked-Size": String(file.size),
        "X-Linked-ETag": `"${file.lfsOid}"`,
      });
      res.end();
      return;
    }
    const content = file.content ?? Buffer.alloc(0);
    this.serveBytes(req, res, content, { ...common, ETag: `"${gitBlobOid(content)}"` });
  }

  private serveObject(req: IncomingMessage, res: ServerResponse, oid: string): void {
    const object = this.objects.get(oid);
    if (!object) throw new HttpError(404, `no LFS object ${oid}`);
    const served = this.faults.corruptDownloads && !req.headers.range ? flipLastByte(object) : object;
    this.serveBytes(req, res, served, { ETag: `"${oid}"` });
  }

  /** File bytes, whole or by Range, unless `failReads` / `cutReads` say this answer fails. */
  private serveBytes(req: IncomingMessage, res: ServerResponse, content: Buffer, headers: Record<string, string>): void {
    this.readAttempts += 1;
    const { failReads, cutReads, readStatus = 503, cutAfterBytes = 0 } = this.faults;
    if (failReads !== undefined && this.readAttempts <= failReads) {
      sendJson(
        res,
        readStatus,
        { error: `fake hub: injected read failure ${readStatus}` },
        readStatus === 429 ? { "Retry-After": "0" } : {},
      );
      return;
    }
    // Only a body longer than the cut can be cut (a 4-byte probe is not): those are the ones counted.
    if (cutReads !== undefined && this.cutsDone < cutReads && bodyLength(req, content) > cutAfterBytes) {
      this.cutsDone += 1;
      sendRange(req, res, content, headers, cutAfterBytes);
      return;
    }
    sendRange(req, res, content, headers);
  }

  /** The injected failure: a 500 after reading the body, or a connection reset mid-request. */
  private async fail(req: IncomingMessage, res: ServerResponse, what: string): Promise<void> {
    if (this.faults.mode === "reset") {
      req.socket.destroy();
      return;
    }
    await readBody(req);
    sendJson(res, 500, { error: `fake hub: injected ${what} failure` });
  }
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  type = "application/json",
): void {
  res.writeHead(status, { ...headers, "Content-Type": type });
  res.end(JSON.stringify(body));
}

/**
 * 206 with Content-Range for `Range: bytes=a-b` or `bytes=a-` (the library's size probe is
 * `bytes=0-0`), else 200. `cutAfter`: only that many bytes of the body, then the connection is reset.
 */
function sendRange(req: IncomingMessage, res: ServerResponse, content: Buffer, headers: Record<string, string>, cutAfter?: number): void {
  const base = { ...headers, "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream" };
  const send = (body: Buffer) => {
    if (cutAfter === undefined) return res.end(body);
    res.write(body.subarray(0, cutAfter), () => res.socket?.destroy());
  };
  const range = req.headers.range?.match(/^bytes=(\d+)-(\d*)$/);
  if (!range) {
    res.writeHead(200, { ...base, "Content-Length": String(content.length) });
    send(content);
    return;
  }
  const start = Number(range[1]);
  const end = Math.min(range[2] ? Number(range[2]) : content.length - 1, content.length - 1);
  if (start > end) {
    res.writeHead(416, { ...base, "Content-Range": `bytes */${content.length}` }).end();
    return;
  }
  const slice = content.subarray(start, end + 1);
  res.writeHead(206, { ...base, "Content-Range": `bytes ${start}-${end}/${content.length}`, "Content-Length": String(slice.length) });
  send(slice);
}

/** How many bytes `sendRange` answers a request with (0 for a range past the end). */
function bodyLength(req: IncomingMessage, content: Buffer): number {
  const range = req.headers.range?.match(/^bytes=(\d+)-(\d*)$/);
  if (!range) return content.length;
  const end = Math.min(range[2] ? Number(range[2]) : content.length - 1, content.length - 1);
  return Math.max(0, end - Number(range[1]) + 1);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  return JSON.parse((await readBody(req)).toString("utf8")) as Record<string, unknown>;
}

function headOf(repo: FakeRepo): string {
  return repo.commits.at(-1)?.oid ?? "0".repeat(40);
}

function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

function sha1(text: string): string {
  return createHash("sha1").update(text).digest("hex");
}

function gitBlobOid(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

function lfsPointer(oid: string, size: number): Buffer {
  return Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${size}\n`);
}

function flipLastByte(content: Buffer): Buffer {
  const copy = Buffer.from(content);
  if (copy.length > 0) copy[copy.length - 1] = (copy.at(-1) ?? 0) ^ 0xff;
  return copy;
}

function randomOid(): string {
  return randomBytes(20).toString("hex");
}
