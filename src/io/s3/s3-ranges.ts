import { type RangeBlob, rangeBlob } from "../range-blob.ts";
import { openS3, s3Size } from "./s3-objects.ts";

/**
 * An S3 object as a RangeBlob: its size from one HEAD, then each range parquet-wasm asks for (the
 * footer, the column chunks of a row group) by a GetObject with a Range header. The SDK signs and
 * retries each request (s3-client.ts) and openS3 resumes a body cut midway. No presigned URL or
 * temporary copy is needed: the credentials chain and endpoint are the ones every S3 read uses.
 */
export async function s3Blob(uri: string): Promise<RangeBlob> {
  const size = await s3Size(uri);
  return rangeBlob(size, (start, end) => openS3(uri, { start, end }));
}
