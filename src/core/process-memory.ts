import { availableParallelism } from "node:os";
import { setFlagsFromString } from "node:v8";

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
 * brought their ratio near 1.1×, with no CPU cost the benchmark could see. But from process
 * start it also makes the heap climb to its working size (modules, tokenizer, plan) in 1.3×
 * steps, a full GC each: ~0.6 CPU-s more for a small job (3.7 against 3.1 CPU-s for the 22 demo
 * files), which is most of what a test, a demo or a small rank runs. So `run` sets it once the
 * job is planned, and only for a job of at least 32 MiB of input: a small job's heap never gets
 * large enough for its peaks to matter. V8 flags are process-wide and read at each GC, so from
 * then on it applies to the pool threads too.
 */
export const SEMI_SPACE_MB = 16;
export const SEMI_SPACE_FLAG = "--max-semi-space-size";

export const HEAP_GROWING_PERCENT = 30;
export const HEAP_GROWING_FLAG = "--heap-growing-percent";
/** A job with at least this much input gets the fixed heap growth (see above). */
export const FIXED_GROWTH_INPUT_BYTES = 32 * 1024 * 1024;

export const V8_POOL_FLAG = "--v8-pool-size";
/** Node's own default number of V8 platform threads. */
const NODE_V8_POOL = 4;

/**
 * The flags to re-execute with; a V8 pool size of the user's own (on the command line or in
 * NODE_OPTIONS) is kept. The heap growth is not among them: `run` sets it for a large job
 * (`heapGrowthFlag`).
 */
export function relaunchFlags(
  execArgv: readonly string[],
  cores = availableParallelism(),
  nodeOptions = process.env.NODE_OPTIONS,
): string[] {
  const flags = [`${SEMI_SPACE_FLAG}=${SEMI_SPACE_MB}`];
  if (!givenFlag(V8_POOL_FLAG, execArgv, nodeOptions)) flags.push(`${V8_POOL_FLAG}=${Math.max(NODE_V8_POOL, cores)}`);
  return flags;
}

/**
 * The heap-growth flag for a job of `inputBytes`: the fixed growth for a large job; nothing for
 * a small one, or where the user gave a growth of their own (command line or NODE_OPTIONS).
 */
export function heapGrowthFlag(
  inputBytes: number,
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS,
): string | undefined {
  if (inputBytes < FIXED_GROWTH_INPUT_BYTES || givenFlag(HEAP_GROWING_FLAG, execArgv, nodeOptions)) return undefined;
  return `${HEAP_GROWING_FLAG}=${HEAP_GROWING_PERCENT}`;
}

/** Sets the fixed heap growth for a job of `inputBytes` where `heapGrowthFlag` gives it. */
export function useHeapGrowthFor(inputBytes: number): void {
  const flag = heapGrowthFlag(inputBytes);
  if (flag) setFlagsFromString(flag);
}

function givenFlag(flag: string, execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return execArgv.some((arg) => arg.startsWith(flag)) || (nodeOptions ?? "").includes(flag);
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
