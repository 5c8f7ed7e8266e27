import { MessageChannel } from "node:worker_threads";
import { Piscina } from "piscina";
import { moduleFile } from "../core/package-files.ts";
import { YOUNG_GENERATION_MB } from "../core/process-memory.ts";
import type { TaskProgress } from "./task-items.ts";
import type { WorkerTaskRequest } from "./task-worker.ts";

/**
 * The worker threads of one `lwm-data run`, shared by every pooled stage of the job. A thread
 * costs ~1 s of CPU to boot (modules, then the job's plan on its first task), so the CLI starts
 * the pool before it plans the job itself: on a 16-core machine the threads' boot then overlaps
 * the main thread's planning instead of following it, and a job with several pooled stages
 * (curation, counting, records) boots its threads once, not per stage.
 */
export class TaskPool {
  private readonly pool: Piscina<WorkerTaskRequest, number>;
  readonly threads: number;

  constructor(threads: number) {
    this.threads = threads;
    this.pool = new Piscina<WorkerTaskRequest, number>({
      filename: moduleFile("pipeline/task-worker"),
      minThreads: threads,
      maxThreads: threads,
      // One task per thread at a time: a task is minutes of CPU-bound work.
      concurrentTasksPerWorker: 1,
      // Kept between stages; `destroy` ends them.
      idleTimeout: Number.POSITIVE_INFINITY,
      // Flat memory on long runs; the launcher caps the main thread the same way.
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
  }

  /** Runs one unit on a pool thread; progress messages come back through `onProgress`. */
  run(request: Omit<WorkerTaskRequest, "progress">, onProgress: (progress: TaskProgress) => void): Promise<number> {
    const channel = new MessageChannel();
    channel.port1.on("message", (message: TaskProgress) => onProgress(message));
    return this.pool.run({ ...request, progress: channel.port2 }, { transferList: [channel.port2] }).finally(() => channel.port1.close());
  }

  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}
