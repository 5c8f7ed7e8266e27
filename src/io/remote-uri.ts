import { isHfUri } from "./hf/hf-uri.ts";
import { isS3Uri } from "./s3/s3-uri.ts";

/**
 * An input that lives in object storage or on the Hub (`s3://…`, `hf://…`), not on a disk: it keeps
 * its full URI as its name (in the manifest, sources and messages), never a path relative to anything.
 */
export function isRemoteUri(path: string): boolean {
  return isS3Uri(path) || isHfUri(path);
}
