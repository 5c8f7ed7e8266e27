import { relative } from "node:path";
import { finalizeOutput } from "../output/finalize.ts";

/** `lwm-data finalize`: the manifest from every task's completion marker, or the list of unfinished tasks. */
export async function finalizeCommand(outputDir: string): Promise<void> {
  const { manifest, path } = await finalizeOutput(outputDir);
  console.log(
    `lwm-data finalize: ${manifest.tasks.count} task(s) done; ${manifest.counts.records_in} records in, ${manifest.counts.samples_out} samples out, ${manifest.counts.quarantined} quarantined; ${manifest.shards.length} shards → ${relative(process.cwd(), path)}`,
  );
}
