/**
 * The desktop (os) demo file. No desktop session runs here and no public desktop trajectory with
 * accessibility trees exists under a permissive licence, so the OS trajectories are hand-written
 * from the documented AT-SPI XML and OSWorld table formats (test/fixtures/handmade/os/README.md).
 * This copies the valid ones (not the two lines written to be quarantined) into the demo.
 *
 *   npx node scripts/record-demo/os.ts      (or: npm run record:demo -- os)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, writeDemoFile } from "./common.ts";

const HANDMADE = join(ROOT, "test/fixtures/handmade/os/os-trajectories.jsonl");
/** The hand-made lines that are trajectories; the others test quarantine. */
const DEMO_IDS = new Set(["gedit-save-as", "chrome-example-link"]);

const lines = readFileSync(HANDMADE, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "" && DEMO_IDS.has((JSON.parse(line) as { id?: string }).id ?? ""));
if (lines.length !== DEMO_IDS.size) throw new Error(`${HANDMADE}: expected the trajectories ${[...DEMO_IDS].join(", ")}`);
writeDemoFile("os/os-trajectories.jsonl", `${lines.join("\n")}\n`);
