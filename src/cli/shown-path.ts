import { relative } from "node:path";
import { isS3Uri } from "../io/s3/s3-uri.ts";

/** A path as a command prints it: relative to the current folder; an object URI as it is. */
export function shownPath(path: string): string {
  return isS3Uri(path) ? path : relative(process.cwd(), path) || ".";
}
