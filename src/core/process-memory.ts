import { availableParallelism } from "node:os";

/**
 * Memory settings for every lwm-data process, measured in docs/benchmarks.md ("Memory").
 *
 * V8 young generation: by default V8 grows a busy isolate's young generation up to 3 × 64 MB,
 * and slowly, so a long run's RSS kept climbing well after the start (1.3× at 10× input).
 * 16 MB semi-spaces hold it near flat for a few percent more CPU. The flag only works from
 * process start, so bin/lwm-data.js re-executes itself with it; pool threads get it as a Worker
 * resource limit (run-job.ts).
 *
 * glibc malloc (ignored by other C libraries): each worker thread gets its own arena, and the
 * mmap threshold rises to the largest block ever freed, after which big buffers (row groups,
 * file chunks) come from arenas that are never given back. A fixed 128 KiB threshold and two
 * arenas took a 10× run's peak RSS from ~510 MB to ~410 MB at the same CPU time on 2 cores. But
 * arenas are also malloc's locks: on a 16-core machine, 16 worker threads sharing two arenas spent
 * ~15% more CPU and a third more wall time contending for them (docs/benchmarks.md, "Every
 * core"), and one arena per core cost no measurable memory there. So: one arena per core, never
 * fewer than two.
 *
 * V8 platform threads (concurrent marking, sweeping and compilation for every isolate of the
 * process): Node starts 4. Sixteen busy isolates (worker threads) queue their GC work on those 4,
 * and wait for it. One per core, never fewer than Node's 4, gave the 16-core run ~20% more MB/s
 * and a lower peak RSS (the collectors keep up).
 *
 * V8 old generation: after each full GC V8 lets the heap grow by a factor it picks from GC speed
 * (often ~2×) before the next one, so two busy isolates' heaps peak high and at random moments.
 * A fixed 1.3× growth took both the 50 MB and the 500 MB run's peaks down by 50–70 MB and
 * brought their ratio near 1.1×, with no CPU cost the benchmark could see. V8 flags are
 * process-wide, so it applies to the pool threads too.
 */
export const SEMI_SPACE_MB = 16;
export const SEMI_SPACE_FLAG = "--max-semi-space-size";

export const HEAP_GROWING_PERCENT = 30;
export const HEAP_GROWING_FLAG = "--heap-growing-percent";

export const V8_POOL_FLAG = "--v8-pool-size";
/** Node's own default number of V8 platform threads. */
const NODE_V8_POOL = 4;

/**
 * The flags to re-execute with; a heap growth or V8 pool size of the user's own (on the command
 * line or in NODE_OPTIONS) is kept.
 */
export function relaunchFlags(
  execArgv: readonly string[],
  cores = availableParallelism(),
  nodeOptions = process.env.NODE_OPTIONS,
): string[] {
  const given = (flag: string) => execArgv.some((arg) => arg.startsWith(flag)) || (nodeOptions ?? "").includes(flag);
  const flags = [`${SEMI_SPACE_FLAG}=${SEMI_SPACE_MB}`];
  if (!given(HEAP_GROWING_FLAG)) flags.push(`${HEAP_GROWING_FLAG}=${HEAP_GROWING_PERCENT}`);
  if (!given(V8_POOL_FLAG)) flags.push(`${V8_POOL_FLAG}=${Math.max(NODE_V8_POOL, cores)}`);
  return flags;
}

/** A young generation is two semi-spaces plus one for objects being promoted. */
export const YOUNG_GENERATION_MB = 3 * SEMI_SPACE_MB;

/** Set for the re-executed process unless the environment already has them: arenas per core. */
export function mallocEnv(cores = availableParallelism()): Readonly<Record<string, string>> {
  return { MALLOC_ARENA_MAX: String(Math.max(2, cores)), MALLOC_MMAP_THRESHOLD_: "131072" };
}

/** Whether this process already runs with a semi-space size (ours, or the user's own). */
export function hasSemiSpaceFlag(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return execArgv.some((arg) => arg.startsWith(SEMI_SPACE_FLAG)) || (nodeOptions ?? "").includes(SEMI_SPACE_FLAG);
}

/** The environment to re-execute with: the caller's, plus the malloc settings it does not set. */
export function relaunchEnv(env: NodeJS.ProcessEnv, cores = availableParallelism()): NodeJS.ProcessEnv {
  return { ...mallocEnv(cores), ...env };
}
