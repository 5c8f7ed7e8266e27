/**
 * Records the SWE demo data (data/demo/swe/): scripted repair sessions (swe-episodes.ts) played
 * for real in git repositories under /tmp/lwm-demo-record/swe — python3's unittest, grep, cat,
 * sed, git — and written in every SWE layout lwm-data reads:
 *
 *   swe-agent__<name>.traj            SWE-agent 1.x trajectory
 *   mini-swe-agent__<name>.traj.json  mini-swe-agent saved trajectory
 *   openhands__<name>.json            OpenHands event stream
 *   swe-smith__ft.jsonl               SWE-smith fine-tuning lines, one per session
 *   swe.jsonl.zst                     canonical JSONL, zstd-compressed
 *
 * Run: npx node scripts/record-demo/swe.ts (or `npm run record:demo -- swe`).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { zstdCompressSync } from "node:zlib";
import { DEMO_DIR, freshWorkdir, writeDemoFile } from "./common.ts";
import { EPISODES } from "./swe-episodes.ts";
import { canonicalLine, miniSweAgentTraj, openHandsEvents, sweAgentTraj, sweSmithLine } from "./swe-layouts.ts";
import { SweSession } from "./swe-session.ts";

const session = new SweSession(freshWorkdir("swe"));
const recorded = EPISODES.map((episode) => session.record(episode));

// Every file in the folder is a demo input: clear what an earlier recording left.
rmSync(join(DEMO_DIR, "swe"), { recursive: true, force: true });
for (const r of recorded) {
  const name = r.episode.name;
  writeDemoFile(`swe/swe-agent__${name}.traj`, sweAgentTraj(r, `swe-agent__${name}`));
  writeDemoFile(`swe/mini-swe-agent__${name}.traj.json`, miniSweAgentTraj(r));
  writeDemoFile(`swe/openhands__${name}.json`, openHandsEvents(r));
}
const lines = (make: (r: (typeof recorded)[number]) => string) => `${recorded.map(make).join("\n")}\n`;
writeDemoFile(
  "swe/swe-smith__ft.jsonl",
  lines((r) => sweSmithLine(r, `swe-smith__${r.episode.name}`)),
);
// zstd frames carry no timestamp: the same text compresses to the same bytes.
writeDemoFile("swe/swe.jsonl.zst", zstdCompressSync(lines((r) => canonicalLine(r, `lwm-data__${r.episode.name}`))));
