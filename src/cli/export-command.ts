import { join } from "node:path";
import { exportSwift, type LiteralsMode } from "../export/swift-export.ts";
import { shownPath } from "./shown-path.ts";

/** `lwm-data export swift`: messages with per-message loss for trainers that tokenize themselves. */
export async function exportSwiftCommand(outputDir: string, options: { out?: string; literals?: LiteralsMode }): Promise<void> {
  const dir = options.out ?? join(outputDir, "export", "swift");
  const { files, refusedPath, literals } = await exportSwift(outputDir, dir, { literals: options.literals ?? "refuse" });
  const shown = shownPath;
  const refused = files.reduce((sum, f) => sum + f.refused, 0);
  const escaped = files.reduce((sum, f) => sum + f.escaped, 0);
  console.log(
    [
      `lwm-data export swift: ${files.map((f) => `${f.split} ${f.rows}`).join(", ")} conversation(s) → ${shown(dir)}`,
      ...files.map((f) => `  ${shown(f.path)}`),
      refused > 0
        ? `  refused: ${refused} sample(s) (${files.map((f) => `${f.split} ${f.refused}`).join(", ")}), each with its reason in ${shown(refusedPath)}${literals === "refuse" ? "; --literals escape exports those with special-token text neutralized" : ""}`
        : `  refused: none (${shown(refusedPath)} is empty)`,
      ...(escaped > 0
        ? [`  neutralized: ${escaped} sample(s) exported with special-token literals escaped (their ids differ from the shards' there)`]
        : []),
      `  ms-swift:       swift sft --dataset ${files.map((f) => shown(f.path)).join(" ")} …  (assistant "loss" flags = our masking decisions)`,
      `  LLaMA-Factory:  --dataset_dir ${shown(dir)} --dataset lwm_train  (dataset_info.json; it ignores per-message loss)`,
    ].join("\n"),
  );
}
