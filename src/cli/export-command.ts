import { join, relative } from "node:path";
import { exportSwift } from "../export/swift-export.ts";

/** `lwm-data export swift`: messages with per-message loss for trainers that tokenize themselves. */
export async function exportSwiftCommand(outputDir: string, options: { out?: string }): Promise<void> {
  const dir = options.out ?? join(outputDir, "export", "swift");
  const { files } = await exportSwift(outputDir, dir);
  const shown = (path: string) => relative(process.cwd(), path) || ".";
  console.log(
    [
      `lwm-data export swift: ${files.map((f) => `${f.split} ${f.rows}`).join(", ")} conversation(s) → ${shown(dir)}`,
      ...files.map((f) => `  ${shown(f.path)}`),
      `  ms-swift:       swift sft --dataset ${files.map((f) => shown(f.path)).join(" ")} …  (assistant "loss" flags = our masking decisions)`,
      `  LLaMA-Factory:  --dataset_dir ${shown(dir)} --dataset lwm_train  (dataset_info.json; it ignores per-message loss)`,
    ].join("\n"),
  );
}
