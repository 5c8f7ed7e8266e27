import { relative } from "node:path";
import { isRemoteUri } from "../io/remote-uri.ts";

/** A path as a command prints it: relative to the current folder; an object or Hub URI as it is. */
export function shownPath(path: string): string {
  return isRemoteUri(path) ? path : relative(process.cwd(), path) || ".";
}
