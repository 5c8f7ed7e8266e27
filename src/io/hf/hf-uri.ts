import { UserError } from "../../core/errors.ts";

/**
 * A file (or a glob of files) in a Hugging Face Hub dataset repo:
 * `hf://datasets/<namespace>/<name>[@<revision>]/<path, folder/ or glob>`, as the Hub's own
 * `HfFileSystem` (fsspec) and datatrove write it. The revision is a branch, a tag or a commit sha
 * (default `main`); one holding `/` is written percent-encoded (`@refs%2Fconvert%2Fparquet`), or as
 * is for the Hub's special refs (`@refs/convert/parquet`, `@refs/pr/3`).
 */
export interface HfLocation {
  /** `namespace/name`. */
  repo: string;
  /** As written; undefined when the URI names none (then `main`). */
  revision: string | undefined;
  /** Path (or glob) inside the repo, "" for the whole repo. */
  path: string;
}

export const HF_SCHEME = "hf://";

const FORM = "hf://datasets/<namespace>/<name>[@<revision>]/<path or glob>";
const NAME = /^[\w.-]+$/;
/** Refs whose names hold `/` and that the Hub's filesystem accepts unencoded. */
const SPECIAL_REF = /^refs\/(?:convert\/[^/]+|pr\/\d+)$/;

export function isHfUri(path: string): boolean {
  return path.startsWith(HF_SCHEME);
}

/** Parses an `hf://datasets/...` URI; a UserError naming it and the expected form otherwise. */
export function parseHfUri(uri: string): HfLocation {
  const segments = uri.slice(HF_SCHEME.length).split("/");
  if (segments[0] !== "datasets") throw new UserError(`${uri}: only Hub dataset repos can be inputs: expected ${FORM}`);
  const namespace = segments[1] ?? "";
  const [name = "", ...revisionParts] = (segments[2] ?? "").split("@");
  if (!NAME.test(namespace) || !NAME.test(name)) throw new UserError(`${uri}: expected ${FORM}`);
  let rest = segments.slice(3);
  let revision: string | undefined;
  if (revisionParts.length > 0) {
    revision = decodeURIComponent(revisionParts.join("@"));
    // `@refs/convert/parquet/...`: the ref's own segments are part of the revision.
    for (const take of [2, 1]) {
      const candidate = [revision, ...rest.slice(0, take)].join("/");
      if (SPECIAL_REF.test(candidate)) {
        revision = candidate;
        rest = rest.slice(take);
        break;
      }
    }
    if (revision === "") throw new UserError(`${uri}: the revision after @ is empty (expected ${FORM})`);
  }
  return { repo: `${namespace}/${name}`, revision, path: rest.join("/") };
}

/** The URI of a location; a revision holding `/` is percent-encoded so it reads back as one segment. */
export function hfUri({ repo, revision, path }: HfLocation): string {
  const at = revision === undefined ? "" : `@${revision.includes("/") ? encodeURIComponent(revision) : revision}`;
  return `${HF_SCHEME}datasets/${repo}${at}${path === "" ? "" : `/${path}`}`;
}

/** A full commit sha: what a pinned location's revision is. */
export function isCommitSha(revision: string | undefined): revision is string {
  return revision !== undefined && /^[0-9a-f]{40}$/.test(revision);
}
