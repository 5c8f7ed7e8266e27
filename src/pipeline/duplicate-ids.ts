import { createHash } from "node:crypto";
import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef } from "../core/trajectory.ts";

/**
 * `input.duplicate_ids: quarantine`: the first trajectory read with an id is kept, every later
 * one is quarantined with where the first was. Shards, splits, the mask draw and the stats table
 * are keyed by id, so two records with one id would be indistinguishable downstream.
 *
 * Scope is one task (the unit a worker reads in order; `input.task_bytes` of input), so memory
 * is bounded by the task, not the corpus, and the answer does not depend on workers or ranks.
 * Ids repeated across tasks are counted at finalize from each task's id hashes (`hashes()`).
 */
export class DuplicateIds {
  private readonly first = new Map<string, string>();
  private readonly idHashes: bigint[] = [];

  /** Records the id; returns the quarantine entry when an earlier record of the task had it. */
  check(record: { id: string; source: SourceRef }, location: string): QuarantineEntry | undefined {
    const earlier = this.first.get(record.id);
    if (earlier === undefined) {
      this.first.set(record.id, location);
      this.idHashes.push(idHash(record.id));
      return undefined;
    }
    return {
      source: record.source,
      id: record.id,
      stage: "dedupe",
      field: "id",
      reason: `duplicate ${"turns" in record ? "trajectory" : "document"} id: the first record with this id (${earlier}) is kept (input.duplicate_ids: quarantine)`,
    };
  }

  /** The 64-bit hashes of the task's distinct ids, sorted (a collision needs ~4 billion ids). */
  hashes(): BigUint64Array {
    return BigUint64Array.from(this.idHashes).sort();
  }
}

function idHash(id: string): bigint {
  return createHash("sha256").update(id).digest().readBigUInt64BE(0);
}
