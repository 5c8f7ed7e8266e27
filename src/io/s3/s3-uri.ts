/** An `s3://bucket/key` location (AWS S3 or an S3-compatible store: MinIO, Cloudflare R2, Ceph). */
export interface S3Location {
  bucket: string;
  key: string;
}

export const S3_SCHEME = "s3://";

export function isS3Uri(path: string): boolean {
  return path.startsWith(S3_SCHEME);
}

/** Parses `s3://bucket/key`; throws a message naming the URI when it has no bucket. */
export function parseS3Uri(uri: string): S3Location {
  const rest = uri.slice(S3_SCHEME.length);
  const slash = rest.indexOf("/");
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  if (bucket === "") throw new Error(`${uri}: an S3 location is s3://<bucket>/<key or glob>`);
  return { bucket, key: slash === -1 ? "" : rest.slice(slash + 1) };
}

export function s3Uri({ bucket, key }: S3Location): string {
  return `${S3_SCHEME}${bucket}/${key}`;
}
