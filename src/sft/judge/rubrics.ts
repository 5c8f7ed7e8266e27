import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { sourceAsset } from "../../core/package-files.ts";
import type { Domain } from "../../core/trajectory.ts";
import { JUDGE_DIMENSIONS } from "./dimensions.ts";

/** The bundled rubrics: one Markdown file per domain, `## <dimension>` sections for the five dimensions. */
export const RUBRICS_DIR = `${sourceAsset("sft/judge/rubrics")}/`;

export interface Rubric {
  domain: Domain;
  /** The file's text, as the judge reads it. */
  text: string;
  /** sha256 of the text (recorded in the manifest, so a changed rubric shows). */
  sha256: string;
}

const loaded = new Map<Domain, Rubric>();

/** The dimensions a rubric's `## name` headings cover, in file order. */
export function rubricDimensions(text: string): string[] {
  return [...text.matchAll(/^## +(\S+)\s*$/gm)].map((match) => match[1] as string);
}

/**
 * The judge's rubric for a domain (read once, then kept). Each file must describe all five
 * dimensions, so a judge is never asked to score one it was not told how to.
 */
export function rubricFor(domain: Domain): Rubric {
  const known = loaded.get(domain);
  if (known) return known;
  const path = `${RUBRICS_DIR}${domain}.md`;
  const text = readFileSync(path, "utf8").trim();
  const covered = rubricDimensions(text);
  const missing = JUDGE_DIMENSIONS.filter((dimension) => !covered.includes(dimension));
  if (missing.length > 0) throw new Error(`judge rubric ${path} has no section for ${missing.join(", ")}`);
  const rubric = { domain, text, sha256: createHash("sha256").update(text).digest("hex") };
  loaded.set(domain, rubric);
  return rubric;
}
