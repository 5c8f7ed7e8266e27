import type { S3Client } from "@aws-sdk/client-s3";

type S3Sdk = typeof import("@aws-sdk/client-s3");

/**
 * One S3 client per thread, configured the way every AWS tool is: credentials from the standard
 * chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, AWS_PROFILE and the shared
 * config and credentials files, web identity, instance roles), the region from AWS_REGION (or the
 * profile; us-east-1 when none), the endpoint from AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL for an
 * S3-compatible store. Such endpoints (MinIO, Ceph, a local server) take path-style addressing
 * (`host/bucket/key`); AWS and R2 take either. Retries: the SDK's adaptive mode (backoff with
 * jitter on throttling, 5xx and connection errors, and client-side rate limiting once throttled),
 * AWS_MAX_ATTEMPTS attempts (default 8 here); a read whose body breaks mid-object is resumed
 * (s3-objects.ts) with the same number of attempts. Credentials are never written by lwm-data: not to the
 * manifest, logs or errors.
 */
let client: S3Client | undefined;
let sdk: Promise<S3Sdk> | undefined;

/**
 * The AWS SDK's S3 module, loaded on first use: loading it costs ~0.1 CPU-s and ~50 modules at
 * every process start, which a job without `s3://` paths never needs.
 */
export function s3Sdk(): Promise<S3Sdk> {
  sdk ??= import("@aws-sdk/client-s3");
  return sdk;
}

/** AWS_MAX_ATTEMPTS, as every AWS SDK reads it: attempts per request, the first included (default 8 here). */
export function s3MaxAttempts(): number {
  const attempts = Number(process.env.AWS_MAX_ATTEMPTS ?? 8);
  return Number.isInteger(attempts) && attempts >= 1 ? attempts : 8;
}

export async function s3Client(): Promise<S3Client> {
  if (client) return client;
  const { S3Client } = await s3Sdk();
  if (client) return client;
  const endpoint = process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL;
  client = new S3Client({
    region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? "us-east-1",
    retryMode: "adaptive",
    maxAttempts: s3MaxAttempts(),
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
  });
  return client;
}

/** The error an S3 call failed with, in a line: its code and message (never the request's credentials). */
export function describeS3Error(err: unknown): string {
  if (err instanceof Error) {
    const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    return `${err.name}${status ? ` (HTTP ${status})` : ""}: ${err.message}`;
  }
  return String(err);
}
