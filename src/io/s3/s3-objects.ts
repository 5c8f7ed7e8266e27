import { finished, Readable } from "node:stream";
import type { GetObjectCommandOutput } from "@aws-sdk/client-s3";
import picomatch from "picomatch";
import { UserError } from "../../core/errors.ts";
import { describeS3Error, s3Client, s3MaxAttempts, s3Sdk } from "./s3-client.ts";
import { listObjects } from "./s3-transfer.ts";
import { parseS3Uri, s3Uri } from "./s3-uri.ts";

export interface S3Object {
  uri: string;
  bytes: number;
}

/** The part of a key pattern before its first glob character: what ListObjectsV2 can filter by. */
function literalPrefix(pattern: string): string {
  const glob = pattern.search(/[*?[\]{}()!+@]/);
  return glob === -1 ? pattern : pattern.slice(0, glob);
}

/**
 * The objects an `s3://bucket/<key, prefix/ or glob>` names, sorted by key: a key, every object
 * under a prefix ending in `/` (as a folder is every file under it), or the keys a glob matches
 * (`**` crosses `/`, as in local globs). Listed page by page; throws a UserError naming the URI
 * when nothing matches or the bucket cannot be listed.
 */
export async function listS3(uri: string): Promise<S3Object[]> {
  const { bucket, key } = parseS3Uri(uri);
  const isGlob = literalPrefix(key) !== key;
  const prefix = isGlob ? literalPrefix(key) : key;
  const matches = isGlob
    ? picomatch(key, { dot: true })
    : (candidate: string) => candidate === key || (key === "" || key.endsWith("/") ? candidate.startsWith(key) : false);
  // One listing of the literal prefix (page by page, retried), then the pattern decides.
  const found: S3Object[] = [];
  for (const object of await listObjects(s3Uri({ bucket, key: prefix }), uri)) {
    const candidate = `${prefix}${object.name}`;
    if (!candidate.endsWith("/") && matches(candidate)) found.push({ uri: s3Uri({ bucket, key: candidate }), bytes: object.bytes });
  }
  // A plain key that is a "folder" (objects under key/): read them all.
  if (!isGlob && found.length === 0 && key !== "" && !key.endsWith("/")) return listS3(`${uri}/`);
  return found.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
}

/** Size of one object. */
export async function s3Size(uri: string): Promise<number> {
  const { bucket, key } = parseS3Uri(uri);
  try {
    const { HeadObjectCommand } = await s3Sdk();
    const head = await (await s3Client()).send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return head.ContentLength ?? 0;
  } catch (err) {
    throw new UserError(`${uri}: cannot read the object's size: ${describeS3Error(err)}`);
  }
}

/**
 * An object's bytes as a stream, whole or from `start` to `end` (exclusive) by an HTTP Range
 * request: a byte-range task reads only its part of a large object.
 *
 * A body that breaks mid-object (a connection reset, a response cut short, any stream error) is
 * resumed: a ranged GET from the first byte not yet delivered, pinned by `If-Match` to
 * the first response's ETag, so an object replaced meanwhile is an error, never a mix of two
 * versions' bytes. The requests themselves are retried by the SDK (throttling, 5xx, connection
 * errors; s3-client.ts); a resume is tried, with backoff, until AWS_MAX_ATTEMPTS attempts in a row
 * have delivered no new byte, and only then does the stream fail, naming the URI and the offset.
 */
export async function openS3(uri: string, range: { start?: number; end?: number } = {}): Promise<Readable> {
  const { bucket, key } = parseS3Uri(uri);
  const { start, end } = range;
  if (end !== undefined && start !== undefined && end <= start) return Readable.from([]);
  const header = start !== undefined || end !== undefined ? `bytes=${start ?? 0}-${end !== undefined ? end - 1 : ""}` : undefined;
  let object: GetObjectCommandOutput;
  try {
    const { GetObjectCommand } = await s3Sdk();
    object = await (await s3Client()).send(new GetObjectCommand({ Bucket: bucket, Key: key, ...(header ? { Range: header } : {}) }));
  } catch (err) {
    throw new UserError(`${uri}: cannot read the object: ${describeS3Error(err)}`);
  }
  const body = object.Body;
  if (!(body instanceof Readable)) throw new Error(`${uri}: the S3 response has no readable body`);
  const served = servedRange(object);
  // Without the response's extent there is nothing to resume against: the body as it comes.
  if (!served) return body;
  return new ResumableObject({ uri, bucket, key, etag: object.ETag, start: served.start, end: served.end }, body);
}

/** The bytes a GetObject response holds, [start, end): from its Content-Range, else the whole object. */
function servedRange(object: { ContentRange?: string; ContentLength?: number }): { start: number; end: number } | undefined {
  if (object.ContentRange) {
    const match = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(object.ContentRange.trim());
    return match ? { start: Number(match[1]), end: Number(match[2]) + 1 } : undefined;
  }
  return object.ContentLength !== undefined ? { start: 0, end: object.ContentLength } : undefined;
}

/** Backoff before resume attempt `failures` (1, 2, …): exponential from 100 ms, capped at 5 s, with jitter. */
function resumeDelayMs(failures: number): number {
  return Math.min(5000, 100 * 2 ** (failures - 1)) * (0.5 + Math.random() / 2);
}

interface ObjectTarget {
  uri: string;
  bucket: string;
  key: string;
  etag: string | undefined;
  /** Absolute offsets of the bytes this stream delivers, [start, end). */
  start: number;
  end: number;
}

/** One object's bytes over as many GET responses as it takes (see openS3). */
class ResumableObject extends Readable {
  /** Absolute offset of the next byte to deliver. */
  private next: number;
  private body: Readable | undefined;
  /** Failures in a row with no byte delivered between them, and the offset the last one stopped at. */
  private failures = 0;
  private failedAt = -1;
  private timer: NodeJS.Timeout | undefined;
  private request: AbortController | undefined;

  private readonly target: ObjectTarget;

  constructor(target: ObjectTarget, first: Readable) {
    super({ highWaterMark: 1 << 16 });
    this.target = target;
    this.next = target.start;
    this.attach(first);
  }

  override _read(): void {
    this.body?.resume();
  }

  override _destroy(err: Error | null, done: (err: Error | null) => void): void {
    clearTimeout(this.timer);
    this.request?.abort();
    this.body?.destroy();
    this.body = undefined;
    done(err);
  }

  private attach(body: Readable): void {
    this.body = body;
    let settled = false;
    const settle = (err?: unknown) => {
      if (settled) return;
      settled = true;
      body.off("data", onData);
      if (this.body === body) this.body = undefined;
      body.destroy();
      if (this.destroyed) return;
      if (err !== undefined) this.fail(err);
      else if (this.next < this.target.end) this.fail(new Error(`the response ended ${this.target.end - this.next} bytes short`));
      else this.push(null);
    };
    const onData = (chunk: Buffer) => {
      if (settled || this.destroyed) return;
      // Never more than the range asked for (a server that sent extra would shift every later byte).
      const room = this.target.end - this.next;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.next += part.length;
      if (part.length > 0 && !this.push(part)) body.pause();
    };
    body.on("data", onData);
    finished(body, (err) => settle(err ?? undefined));
  }

  private fail(err: unknown): void {
    // Every byte was delivered before the error (e.g. the SDK's checksum of the whole object did
    // not match): nothing to resume, the error stands.
    if (this.next >= this.target.end) {
      this.destroy(new UserError(`${this.target.uri}: after its last byte: ${describeS3Error(err)}`));
      return;
    }
    if (this.next > this.failedAt) this.failures = 0;
    this.failedAt = this.next;
    this.failures++;
    const attempts = s3MaxAttempts();
    if (this.failures >= attempts) {
      this.destroy(
        new UserError(
          `${this.target.uri}: reading stopped at byte ${this.next} after ${this.failures} attempt(s) (AWS_MAX_ATTEMPTS=${attempts}): ${describeS3Error(err)}`,
        ),
      );
      return;
    }
    this.timer = setTimeout(() => this.reopen(), resumeDelayMs(this.failures));
  }

  /** A ranged GET from the next undelivered byte, of the same object version. */
  private reopen(): void {
    const { uri, bucket, key, etag, end } = this.target;
    const from = this.next;
    const request = new AbortController();
    this.request = request;
    Promise.all([s3Client(), s3Sdk()])
      .then(([client, { GetObjectCommand }]) => {
        const command = new GetObjectCommand({
          Bucket: bucket,
          Key: key,
          Range: `bytes=${from}-${end - 1}`,
          ...(etag ? { IfMatch: etag } : {}),
        });
        return client.send(command, { abortSignal: request.signal });
      })
      .then(
        (object) => {
          if (this.request === request) this.request = undefined;
          const body = object.Body;
          if (this.destroyed) {
            if (body instanceof Readable) body.destroy();
            return;
          }
          if (!(body instanceof Readable)) return this.fail(new Error("the S3 response has no readable body"));
          if (servedRange(object)?.start !== from) {
            body.destroy();
            return this.destroy(
              new UserError(`${uri}: asked for bytes from ${from}, the server answered ${object.ContentRange ?? "the whole object"}`),
            );
          }
          this.attach(body);
        },
        (err: unknown) => {
          if (this.request === request) this.request = undefined;
          if (this.destroyed) return;
          const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
          if (status === 412)
            return this.destroy(
              new UserError(`${uri}: the object changed while it was read (its ETag is no longer ${etag}); stopped at byte ${from}`),
            );
          this.fail(err);
        },
      );
  }
}
