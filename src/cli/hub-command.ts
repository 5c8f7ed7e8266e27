import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../core/errors.ts";
import type { HubProgressEvent } from "../hub/hub-common.ts";
import { hubPull } from "../hub/hub-pull.ts";
import { hubPush } from "../hub/hub-push.ts";
import { MANIFEST_FORMAT, type Manifest } from "../output/manifest.ts";
import { defaultCacheDir } from "../tokenize/vocab-cache.ts";
import { verifyOutput } from "../verify/verify-output.ts";
import { formatBytes } from "./format-bytes.ts";
import { positiveInt } from "./positive-int.ts";
import { shownPath } from "./shown-path.ts";
import { problemLine } from "./verify-command.ts";

interface HubOptions {
  hubUrl?: string;
  revision?: string;
}

/** The Hub endpoint: --hub-url, else $HF_ENDPOINT (as huggingface_hub reads it), else the library's default. */
function hubUrl(options: HubOptions): { hubUrl?: string } {
  const url = options.hubUrl ?? process.env.HF_ENDPOINT;
  return url ? { hubUrl: url } : {};
}

/** The token comes only from the environment, never from a flag (flags end up in shell history and `ps`). */
function token(): { token?: string } {
  const value = process.env.HF_TOKEN ?? process.env.HUGGING_FACE_HUB_TOKEN;
  return value ? { token: value } : {};
}

const shown = shownPath;

/** Per-file progress lines on stderr, unless --no-progress. */
function progress(verb: string, enabled: boolean | undefined): { onProgress?: (e: HubProgressEvent) => void } {
  return enabled === false
    ? {}
    : { onProgress: (e) => process.stderr.write(`hub ${verb}: ${e.done}/${e.total} ${e.file} (${formatBytes(e.bytes)})\n`) };
}

export async function hubPullCommand(repo: string, options: HubOptions & { include: string[]; dest?: string; progress?: boolean }) {
  const destDir = options.dest ?? join(defaultCacheDir(), "hub", "datasets", ...repo.replace(/^datasets\//, "").split("/"));
  const { files } = await hubPull({
    repo,
    destDir,
    ...(options.include.length > 0 ? { include: options.include } : {}),
    ...(options.revision ? { revision: options.revision } : {}),
    ...hubUrl(options),
    ...token(),
    ...progress("pull", options.progress),
  });
  const fetched = files.filter((f) => !f.skipped);
  const bytes = fetched.reduce((sum, f) => sum + f.bytes, 0);
  console.log(
    `lwm-data hub pull: ${files.length} file(s) of ${repo} in ${shown(destDir)}: ${fetched.length} downloaded (${formatBytes(bytes)}), ${files.length - fetched.length} already there\n` +
      `  use them as inputs, e.g.  inputs: [{ path: ${shown(destDir)}/**/*.jsonl* }]`,
  );
}

/**
 * A CPT output made with normalize.pii off: said before it is published, since a dataset on the
 * Hub is hard to take back (docs/normalization.md "Personal data"). Not a refusal: many corpora hold none.
 */
function personalDataNote(outputDir: string): string | undefined {
  const manifest = JSON.parse(readFileSync(join(outputDir, "manifest.json"), "utf8")) as Partial<Manifest>;
  if (manifest.format !== MANIFEST_FORMAT || manifest.pii) return undefined;
  return `note: personal data was not redacted in ${outputDir} (normalize.pii was off when it was made); \`lwm-data pii scan <config>\` lists what a run with it on would replace`;
}

export async function hubPushCommand(
  outputDir: string,
  repo: string,
  options: HubOptions & { private?: boolean; batchSize: string; progress?: boolean; verify?: boolean },
): Promise<void> {
  // Only a finished output goes up: the manifest is written last, so its presence means complete.
  if (!existsSync(join(outputDir, "manifest.json"))) {
    throw new UserError(`${outputDir} has no manifest.json: it is not a finished lwm-data output (run or finalize it first)`);
  }
  if (options.verify !== false) {
    // What goes up is checked first: a damaged shard on the Hub is much harder to take back.
    const report = await verifyOutput(outputDir);
    if (report.problems.length > 0) {
      const lines = report.problems.slice(0, 10).map((p) => `  ${problemLine(p)}`);
      throw new UserError(
        `${outputDir} does not match its manifest (${report.problems.length} problem(s)); not pushing:\n${lines.join("\n")}\nRun \`lwm-data verify ${outputDir}\` for all of them.`,
      );
    }
  }
  const note = personalDataNote(outputDir);
  if (note) console.error(note);
  const result = await hubPush({
    dir: outputDir,
    repo,
    batchSize: positiveInt(options.batchSize, "--batch-size"),
    ...(options.private ? { private: true } : {}),
    ...(options.revision ? { revision: options.revision } : {}),
    ...hubUrl(options),
    ...token(),
    ...progress("push", options.progress),
  });
  console.log(
    `lwm-data hub push: ${repo}: ${result.uploaded.length} file(s) uploaded in ${result.commits} commit(s), ${result.skipped.length} already there` +
      (result.uploaded.length === 0 ? " — the repo already matches this output" : ""),
  );
}
