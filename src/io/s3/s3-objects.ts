import { Readable } from "node:stream";
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import picomatch from "picomatch";
import { UserError } from "../../core/errors.ts";
import { s3Client } from "./s3-client.ts";
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
  const found: S3Object[] = [];
  let token: string | undefined;
  try {
    do {
      const page = await s3Client().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined || object.Key.endsWith("/")) continue;
        if (matches(object.Key)) found.push({ uri: s3Uri({ bucket, key: object.Key }), bytes: object.Size ?? 0 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  } catch (err) {
    throw new UserError(`${uri}: cannot list the bucket: ${describeS3Error(err)}`);
  }
  // A plain key that is a "folder" (objects under key/): read them all.
  if (!isGlob && found.length === 0 && key !== "" && !key.endsWith("/")) return listS3(`${uri}/`);
  return found.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
}

/** Size of one object. */
export async function s3Size(uri: string): Promise<number> {
  const { bucket, key } = parseS3Uri(uri);
  const head = await s3Client().send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  return head.ContentLength ?? 0;
}

/**
 * An object's bytes as a stream, whole or from `start` to `end` (exclusive) by an HTTP Range
 * request: a byte-range task reads only its part of a large object.
 */
export async function openS3(uri: string, range: { start?: number; end?: number } = {}): Promise<Readable> {
  const { bucket, key } = parseS3Uri(uri);
  const { start, end } = range;
  if (end !== undefined && start !== undefined && end <= start) return Readable.from([]);
  const header = start !== undefined || end !== undefined ? `bytes=${start ?? 0}-${end !== undefined ? end - 1 : ""}` : undefined;
  const object = await s3Client().send(new GetObjectCommand({ Bucket: bucket, Key: key, ...(header ? { Range: header } : {}) }));
  const body = object.Body;
  if (!(body instanceof Readable)) throw new Error(`${uri}: the S3 response has no readable body`);
  return body;
}

/** The error an S3 call failed with, in a line: its code and message (never the request's credentials). */
export function describeS3Error(err: unknown): string {
  if (err instanceof Error) {
    const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    return `${err.name}${status ? ` (HTTP ${status})` : ""}: ${err.message}`;
  }
  return String(err);
}
