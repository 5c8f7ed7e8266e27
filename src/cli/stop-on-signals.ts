import { createStopSignal, requestStop, type StopSignal } from "../pipeline/stop-signal.ts";

/** A command's stop request, set by the first SIGINT or SIGTERM. */
export interface SignalStop {
  signal: StopSignal;
  /** The signal received, or "" while none was. */
  received(): string;
  dispose(): void;
}

/**
 * SIGINT (Ctrl-C) and SIGTERM (Slurm preemption, `kubectl delete`) ask a long command to stop at
 * its next safe point, leaving a state a rerun resumes from; `stopping` says (on stderr) what the
 * command does meanwhile. A second signal exits at once: 130 for SIGINT, 143 for SIGTERM.
 */
export function stopOnSignals(command: string, stopping: string, beforeMessage: () => void = () => {}): SignalStop {
  const signal = createStopSignal();
  let received = "";
  const onSignal = (name: NodeJS.Signals) => {
    if (received) process.exit(name === "SIGINT" ? 130 : 143);
    received = name;
    requestStop(signal);
    beforeMessage();
    process.stderr.write(`lwm-data ${command}: ${name}: ${stopping} (send it again to exit at once)\n`);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return {
    signal,
    received: () => received,
    dispose: () => {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    },
  };
}
