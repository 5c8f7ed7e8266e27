import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { idsRepeatedAcrossTasks } from "../src/output/finalize.ts";
import { writeTaskIds } from "../src/output/task-state.ts";

/** The definition: every occurrence of a hash after its first, over all tasks. */
function repeatsByCounting(tasks: bigint[][]): number {
  const seen = new Set<bigint>();
  let repeated = 0;
  for (const hashes of tasks)
    for (const hash of hashes) {
      if (seen.has(hash)) repeated += 1;
      seen.add(hash);
    }
  return repeated;
}

describe("finalize: ids repeated across tasks", () => {
  it("counting in hash-range partitions gives the count of the whole, for any partition size", async () => {
    const root = mkdtempSync(join(tmpdir(), "lwm-ids-"));
    try {
      // Tasks' distinct hashes (each task's own set, as DuplicateIds writes them), drawn from a
      // small pool so that tasks share some, and spread over the whole 64-bit range.
      const pool = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
      const job = fc.array(fc.uniqueArray(fc.oneof(pool, fc.constantFrom(0n, 1n, (1n << 63n) + 5n, (1n << 64n) - 1n)), { maxLength: 40 }), {
        minLength: 1,
        maxLength: 6,
      });
      let run = 0;
      await fc.assert(
        fc.asyncProperty(job, fc.integer({ min: 8, max: 400 }), async (tasks, partitionBytes) => {
          const dir = join(root, String(run++));
          mkdirSync(join(dir, "tasks"), { recursive: true });
          for (const [task, hashes] of tasks.entries()) await writeTaskIds(dir, task, BigUint64Array.from(hashes).sort());
          const indexes = tasks.map((_, task) => task);
          const expected = repeatsByCounting(tasks);
          expect(await idsRepeatedAcrossTasks(dir, indexes)).toBe(expected);
          expect(await idsRepeatedAcrossTasks(dir, indexes, partitionBytes)).toBe(expected);
        }),
        { numRuns: 200 },
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("a task without an ids file means no count", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lwm-ids-"));
    try {
      mkdirSync(join(dir, "tasks"));
      await writeTaskIds(dir, 0, BigUint64Array.of(1n, 2n));
      expect(await idsRepeatedAcrossTasks(dir, [0, 1])).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
