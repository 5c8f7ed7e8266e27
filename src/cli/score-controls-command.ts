import { readFile } from "node:fs/promises";
import { readControlRows, scoreControls, scoreLines } from "../export/awb-controls-score.ts";
import { parseJsonLines } from "../io/json-file.ts";

/** `lwm-data score-controls <export-dir> <predictions.jsonl>`: instruction following per domain and expected kind. */
export async function scoreControlsCommand(exportDir: string, predictionsPath: string, options: { json?: boolean }): Promise<void> {
  const rows = await readControlRows(exportDir);
  const predictions = parseJsonLines<Record<string, unknown>>(await readFile(predictionsPath, "utf8"));
  const scores = scoreControls(rows, predictions);
  if (options.json) console.log(JSON.stringify(scores, null, 1));
  else console.log(scoreLines(scores).join("\n"));
}
