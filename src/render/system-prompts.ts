import { readFileSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../core/errors.ts";
import { DOMAINS, type Domain } from "../core/trajectory.ts";

export type SystemPrompts = Readonly<Record<Domain, string>>;

/** Loads one world-model system prompt per domain from `<dir>/<domain>.md`. */
export function loadSystemPrompts(dir: string): SystemPrompts {
  const prompts = {} as Record<Domain, string>;
  for (const domain of DOMAINS) {
    const path = join(dir, `${domain}.md`);
    try {
      prompts[domain] = readFileSync(path, "utf8").trim();
    } catch (err) {
      throw new UserError(`render.system_prompts_dir: cannot read ${path}: ${(err as Error).message}`);
    }
  }
  return prompts;
}
