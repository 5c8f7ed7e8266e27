/**
 * Preloaded with `node --import` into an `lwm-data` process (and so into its worker threads):
 * appends one JSON line per process or thread to `$LWM_PROCESS_REPORT` saying how it runs — the
 * flags, the memory environment and, in a worker thread, its V8 resource limits.
 */
import { appendFileSync } from "node:fs";
import { isMainThread, resourceLimits } from "node:worker_threads";

const file = process.env.LWM_PROCESS_REPORT;
if (file) {
  const line = {
    pid: process.pid,
    mainThread: isMainThread,
    execArgv: process.execArgv,
    mallocArenaMax: process.env.MALLOC_ARENA_MAX ?? null,
    mallocMmapThreshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? null,
    compileCache: process.env.NODE_COMPILE_CACHE ?? null,
    // Which program the launcher chose (bin/lwm-data.js): "bundle" or "source"; set before the pool starts.
    entry: process.env.LWM_DATA_ENTRY ?? null,
    youngGenerationMb: isMainThread ? null : (resourceLimits.maxYoungGenerationSizeMb ?? null),
  };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}
