import { finalizeOutput, finalizeRemoteOutput } from "../output/finalize.ts";
import { remoteOutputOf } from "../output/remote-output.ts";
import { shownPath } from "./shown-path.ts";

/** `lwm-data finalize`: the manifest from every task's completion marker, or the list of unfinished tasks. */
export async function finalizeCommand(outputDir: string): Promise<void> {
  const remote = remoteOutputOf(outputDir);
  const { manifest, path } = remote ? await finalizeRemoteOutput(remote) : await finalizeOutput(outputDir);
  console.log(
    `lwm-data finalize: ${manifest.tasks.count} task(s) done; ${manifest.counts.records_in} records in, ${manifest.counts.samples_out} samples out, ${manifest.counts.quarantined} quarantined; ${manifest.shards.length} shards → ${shownPath(path)}`,
  );
}
