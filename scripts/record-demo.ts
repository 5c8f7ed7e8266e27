/**
 * Remakes the demo data in data/demo/ by running real programs on this machine (a shell in a
 * pseudo-terminal, an MCP server from npm, git and a test runner, Chromium, a local search
 * service) and writing what they returned in each format lwm-data reads; Android and OS screens
 * are hand-written from the documented formats (no emulator runs here). data/demo/PROVENANCE.md
 * says how each file was made.
 *
 *   npm run record:demo                      # every domain
 *   npm run record:demo -- terminal swe      # only these
 *
 * Each domain is its own script (scripts/record-demo/<domain>.ts), run in its own process.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "./record-demo/common.ts";

const RECORDERS = ["terminal", "mcp", "swe", "web", "search", "android", "os"] as const;

const asked = process.argv.slice(2);
if (asked.includes("--help") || asked.includes("-h")) {
  console.log(`usage: npm run record:demo [-- <domain>...]\ndomains: ${RECORDERS.join(", ")} (default: all)`);
  process.exit(0);
}
const unknown = asked.filter((name) => !(RECORDERS as readonly string[]).includes(name));
if (unknown.length > 0) {
  console.error(`record:demo: unknown domain(s) ${unknown.join(", ")}; known: ${RECORDERS.join(", ")}`);
  process.exit(2);
}

for (const name of asked.length > 0 ? asked : RECORDERS) {
  console.log(`recording ${name} …`);
  const run = spawnSync(process.execPath, [join(ROOT, "scripts/record-demo", `${name}.ts`)], { stdio: "inherit", cwd: ROOT });
  if (run.status !== 0) {
    console.error(`record:demo: the ${name} recorder failed (exit ${run.status ?? run.signal})`);
    process.exit(1);
  }
}
