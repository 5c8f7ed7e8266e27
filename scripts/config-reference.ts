/**
 * Writes docs/config.md, the config reference, from src/config/schema.ts and configs/defaults.yaml.
 *
 *   npm run config:reference              # (re)write docs/config.md
 *   npm run config:reference -- --check   # exit 1 if docs/config.md or defaults.yaml is out of step with the schema
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONFIG_DOC, configReference, defaultsProblems, readDefaults, referenceDrift } from "../src/config/config-reference.ts";
import { configSchema } from "../src/config/schema.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
if (args.includes("--help") || args.includes("-h")) {
  console.log("usage: node scripts/config-reference.ts [--check]\n  writes docs/config.md; --check only compares, exit 1 on a difference");
  process.exit(0);
}
const unknown = args.filter((arg) => arg !== "--check");
if (unknown.length > 0) {
  console.error(`config-reference: unknown argument(s) ${unknown.join(" ")}; usage: node scripts/config-reference.ts [--check]`);
  process.exit(2);
}

const defaults = readDefaults();
const generated = configReference({ schema: configSchema, defaults });
const docPath = join(ROOT, CONFIG_DOC);
// defaults.yaml is checked either way: a reference generated from broken defaults documents the breakage.
const problems = defaultsProblems(configSchema, defaults);

if (args.includes("--check")) {
  const drift = referenceDrift(existsSync(docPath) ? readFileSync(docPath, "utf8") : undefined, generated);
  if (drift !== undefined) problems.push(drift);
  if (problems.length > 0) {
    console.error(`config-reference --check failed:\n${problems.join("\n")}`);
    process.exit(1);
  }
  console.log(`${CONFIG_DOC} and configs/defaults.yaml match src/config/schema.ts`);
} else {
  mkdirSync(dirname(docPath), { recursive: true });
  writeFileSync(docPath, generated);
  console.log(`wrote ${CONFIG_DOC}`);
  if (problems.length > 0) {
    console.error(problems.join("\n"));
    process.exit(1);
  }
}
