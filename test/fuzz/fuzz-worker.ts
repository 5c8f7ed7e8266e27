import { parentPort } from "node:worker_threads";
import { type Job, type JobResult, runJob } from "./properties.ts";

/** Runs fuzz cases for test/fuzz/support.ts `CaseRunner`, one at a time; an uncaught error kills it (a crash). */
const port = parentPort;
if (!port) throw new Error("fuzz-worker.ts runs as a worker thread");

port.on("message", async (job: Job) => {
  const start = performance.now();
  let failure: string | undefined;
  try {
    failure = await runJob(job);
  } catch (err) {
    failure = `unexpected throw: ${(err as Error).stack ?? String(err)}`;
  }
  const result: JobResult = { ...(failure !== undefined ? { failure } : {}), ms: performance.now() - start };
  port.postMessage(result);
});
port.postMessage("ready");
