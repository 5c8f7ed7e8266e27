import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { z } from "zod";
import { UserError } from "../core/errors.ts";
import { packagePath } from "../core/package-files.ts";

export const PIPELINES_DIR = `${packagePath("pipelines")}/`;

/**
 * The per-record stages a pipeline YAML may list between `read` and `write` (their code:
 * RECORD_STAGES in stages.ts, which the compiler holds to exactly these names). Planning checks
 * a pipeline by name only, so a process that never processes a record does not load their code.
 */
export const RECORD_STAGE_NAMES = ["validate", "normalize", "render", "tokenize", "mask"] as const;
export type RecordStageName = (typeof RECORD_STAGE_NAMES)[number];

const graphSchema = z.object({
  name: z.string(),
  description: z.string().optional(),
  stages: z.array(z.object({ name: z.string() })).min(2),
});

export interface PipelineGraph {
  name: string;
  description: string;
  /** Per-record stages between read and write, in order. */
  recordStages: string[];
}

/** Loads pipelines/<name>.yaml and checks its stages exist and start with read, end with write. */
export function loadPipelineGraph(name: string): PipelineGraph {
  const path = `${PIPELINES_DIR}${name}.yaml`;
  let raw: unknown;
  try {
    raw = parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new UserError(`pipeline: cannot load ${path}: ${(err as Error).message}`);
  }
  const parsed = graphSchema.safeParse(raw);
  if (!parsed.success) throw new UserError(`${path}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const names = parsed.data.stages.map((stage) => stage.name);
  if (names[0] !== "read" || names[names.length - 1] !== "write")
    throw new UserError(`${path}: stages must start with "read" and end with "write" (got ${names.join(" → ")})`);
  const middle = names.slice(1, -1);
  const known: readonly string[] = RECORD_STAGE_NAMES;
  const unknown = middle.filter((stage) => !known.includes(stage));
  if (unknown.length > 0) throw new UserError(`${path}: unknown stage(s) ${unknown.join(", ")}; known: ${known.join(", ")}`);
  return { name: parsed.data.name, description: parsed.data.description ?? "", recordStages: middle };
}
