import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { pipeline } from "node:stream/promises";
import { UserError } from "../../core/errors.ts";
import { describeS3Error, s3Client, s3Sdk } from "./s3-client.ts";
import { parseS3Uri } from "./s3-uri.ts";

/**
 * Whole-object transfers between a local folder and a bucket, for outputs written to object
 * storage (src/output/remote-output.ts). Uploads go through the SDK's multipart `Upload`: an
 * object appears only when its upload completes, so a killed process leaves no partial object
 * (at most an unfinished upload, which is invisible to readers and aborted on the next run).
 */

export interface ListedObject {
  /** The key below the listed prefix. */
  name: string;
  bytes: number;
  etag: string;
}

/**
 * Parts of 16 MiB (LWM_S3_PART_BYTES; S3's minimum is 5 MiB), two in flight: a shard's upload
 * holds ~32 MiB whatever its size. A file under one part goes up as a single PUT.
 */
const PART_BYTES = Math.max(5 * 1024 * 1024, Number(process.env.LWM_S3_PART_BYTES) || 16 * 1024 * 1024);
const PARTS_IN_FLIGHT = 2;

/** Every object under `s3://bucket/prefix` (the prefix taken as given), page by page; an error names `shownAs`. */
export async function listObjects(prefixUri: string, shownAs = prefixUri): Promise<ListedObject[]> {
  return (await listPrefix(prefixUri, { shownAs })).objects;
}

/**
 * One listing of `s3://bucket/prefix`, page by page. With a `delimiter` ("/": one folder level),
 * the objects below the next delimiter are not listed; their first segments (the sub-folders,
 * without the delimiter) come back as `prefixes`. An error names `shownAs` and says what failed.
 */
export async function listPrefix(
  prefixUri: string,
  { shownAs = prefixUri, delimiter, what = "the bucket" }: { shownAs?: string; delimiter?: string; what?: string } = {},
): Promise<{ objects: ListedObject[]; prefixes: string[] }> {
  const { bucket, key: prefix } = parseS3Uri(prefixUri);
  const objects: ListedObject[] = [];
  const prefixes: string[] = [];
  let token: string | undefined;
  try {
    const { ListObjectsV2Command } = await s3Sdk();
    const client = await s3Client();
    do {
      const page = await client.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: prefix,
          ContinuationToken: token,
          ...(delimiter ? { Delimiter: delimiter } : {}),
        }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined || object.Key.endsWith("/")) continue;
        objects.push({ name: object.Key.slice(prefix.length), bytes: object.Size ?? 0, etag: (object.ETag ?? "").replaceAll('"', "") });
      }
      for (const common of page.CommonPrefixes ?? []) {
        const name = (common.Prefix ?? "").slice(prefix.length);
        if (name !== "") prefixes.push(delimiter && name.endsWith(delimiter) ? name.slice(0, -delimiter.length) : name);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  } catch (err) {
    throw new UserError(`${shownAs}: cannot list ${what}: ${describeS3Error(err)}`);
  }
  return { objects, prefixes };
}

/** Downloads an object to `path` (via a temporary file, so `path` is whole or absent); false when there is no such object. */
export async function downloadObject(uri: string, path: string): Promise<boolean> {
  const { bucket, key } = parseS3Uri(uri);
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.download`;
  try {
    const { GetObjectCommand } = await s3Sdk();
    const object = await (await s3Client()).send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    await pipeline(object.Body as NodeJS.ReadableStream, createWriteStream(partial));
    await rename(partial, path);
    return true;
  } catch (err) {
    await rm(partial, { force: true });
    if ((err as { name?: string }).name === "NoSuchKey") return false;
    throw new UserError(`${uri}: cannot download: ${describeS3Error(err)}`);
  }
}

/** Uploads a local file as the object `uri`, which appears only once the upload is complete. */
export async function uploadFile(path: string, uri: string): Promise<void> {
  const { bucket, key } = parseS3Uri(uri);
  try {
    // Loaded on first use, as the S3 SDK is (s3-client.ts).
    const { Upload } = await import("@aws-sdk/lib-storage");
    const upload = new Upload({
      client: await s3Client(),
      params: { Bucket: bucket, Key: key, Body: createReadStream(path, { highWaterMark: 1 << 20 }) },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      // A failed upload is aborted, leaving nothing behind.
      leavePartsOnError: false,
    });
    await upload.done();
  } catch (err) {
    throw new UserError(`${uri}: cannot upload ${path}: ${describeS3Error(err)}`);
  }
}

/** Deletes objects by key below `prefixUri` (up to 1,000 per request). */
export async function deleteObjects(prefixUri: string, names: readonly string[]): Promise<void> {
  const { bucket, key: prefix } = parseS3Uri(prefixUri);
  for (let at = 0; at < names.length; at += 1000) {
    const batch = names.slice(at, at + 1000).map((name) => ({ Key: `${prefix}${name}` }));
    try {
      const { DeleteObjectsCommand } = await s3Sdk();
      const result = await (await s3Client()).send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch, Quiet: true } }));
      const failed = result.Errors?.[0];
      if (failed) throw new Error(`${failed.Key}: ${failed.Code} ${failed.Message}`);
    } catch (err) {
      throw new UserError(`${prefixUri}: cannot delete objects: ${describeS3Error(err)}`);
    }
  }
}

/** Aborts unfinished multipart uploads under `prefixUri` (left by a killed process); returns how many. */
export async function abortUploads(prefixUri: string): Promise<number> {
  const { bucket, key: prefix } = parseS3Uri(prefixUri);
  let aborted = 0;
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  try {
    const { AbortMultipartUploadCommand, ListMultipartUploadsCommand } = await s3Sdk();
    const client = await s3Client();
    do {
      const page = await client.send(
        new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }),
      );
      for (const upload of page.Uploads ?? []) {
        await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }));
        aborted += 1;
      }
      keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (keyMarker);
  } catch (err) {
    throw new UserError(`${prefixUri}: cannot list unfinished uploads: ${describeS3Error(err)}`);
  }
  return aborted;
}

/**
 * Whether a local file has an object's content: same size, and for a single-part object (whose
 * ETag is the content's MD5) the same MD5. A multipart object's ETag is not a content hash, so
 * its size alone decides.
 */
export async function sameContent(path: string, object: ListedObject, bytes: number): Promise<boolean> {
  if (bytes !== object.bytes) return false;
  if (!/^[0-9a-f]{32}$/.test(object.etag)) return true;
  const hash = createHash("md5");
  await pipeline(createReadStream(path), hash);
  return hash.digest("hex") === object.etag;
}
