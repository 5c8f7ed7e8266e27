import { memoryUsage } from "node:process";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** Heap bytes still reachable after `run`, measured between two full GCs. */
export function retainedHeapBytes(run: () => void): number {
  // A vitest worker has no --expose-gc: turn it on and take `gc` from a fresh context.
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  gc();
  const before = memoryUsage().heapUsed;
  run();
  gc();
  return memoryUsage().heapUsed - before;
}
