/**
 * Drives a real program in a pseudo-terminal (@lydell/node-pty) the way a person at a keyboard
 * would, and records what crossed the terminal as asciicast events: every keystroke an `i` event,
 * every chunk the program wrote an `o` event, a resize an `r` event.
 *
 * Event times come from a virtual clock, not the wall clock: keystrokes are KEY_MS apart (THINK_MS
 * before the first key of a command and before a resize), the n-th output chunk after an input
 * n × OUTPUT_MS after it (never reaching the next input). Input times are therefore the same on
 * every recording; a rerun differs only where the kernel split a command's output into other
 * chunks, and in the times of that command's later chunks.
 */
import { type IPty, spawn } from "@lydell/node-pty";

export type CastEvent = [time: number, code: "o" | "i" | "r", data: string];

/** An event as recorded: inputs carry their virtual time, outputs their rank after the last input. */
type Recorded = { code: "i" | "r"; ms: number; data: string } | { code: "o"; rank: number; data: string };

const KEY_MS = 60;
const THINK_MS = 800;
const OUTPUT_MS = 10;
/** How long output must pause before an echo or a screen counts as complete. */
const ECHO_QUIET_MS = 25;
const SCREEN_QUIET_MS = 150;
const POLL_MS = 5;
const TIMEOUT_MS = 10_000;

export interface PtySpawn {
  file: string;
  args: string[];
  cols: number;
  rows: number;
  cwd: string;
  env: Record<string, string>;
}

/** When a command counts as done: its output so far (since Enter) passes the test, then output pauses. */
export type Done = (output: string) => boolean;

export class PtyRecorder {
  private readonly recorded: Recorded[] = [];
  private readonly pty: IPty;
  private clockMs = 0;
  private outputRank = 0;
  private output = "";
  private lastOutputAt = performance.now();
  private exitCode: number | undefined;

  constructor(program: PtySpawn) {
    this.pty = spawn(program.file, program.args, {
      name: program.env.TERM ?? "xterm-256color",
      cols: program.cols,
      rows: program.rows,
      cwd: program.cwd,
      env: program.env,
    });
    this.pty.onData((data) => {
      this.outputRank += 1;
      this.recorded.push({ code: "o", rank: this.outputRank, data });
      this.output += data;
      this.lastOutputAt = performance.now();
    });
    this.pty.onExit(({ exitCode }) => {
      this.exitCode = exitCode;
    });
  }

  /** Waits for the program's first screen (a shell's prompt). */
  async start(done: Done): Promise<void> {
    await this.settle(done, SCREEN_QUIET_MS, "the first screen");
  }

  /**
   * Types `keys` one key at a time, waiting for each key's echo, then Enter, and waits until the
   * output since Enter passes `done` and pauses.
   */
  async run(keys: string, done: Done): Promise<void> {
    await this.type(keys);
    this.output = "";
    this.press("\r", KEY_MS);
    await this.settle(done, SCREEN_QUIET_MS, JSON.stringify(keys));
  }

  /** Types the last command (`exit`) and waits for the program to end. */
  async runToExit(keys: string): Promise<number> {
    await this.type(keys);
    this.press("\r", KEY_MS);
    await this.until(() => this.exitCode !== undefined, `${JSON.stringify(keys)} to end the program`, true);
    return this.exitCode ?? -1;
  }

  /** The terminal window is resized (as a person dragging its corner would). */
  async resize(cols: number, rows: number): Promise<void> {
    this.input("r", `${cols}x${rows}`, THINK_MS);
    this.output = "";
    this.pty.resize(cols, rows);
    await this.pause(SCREEN_QUIET_MS);
  }

  private async type(keys: string): Promise<void> {
    let gap = THINK_MS;
    for (const key of keys) {
      this.output = "";
      this.press(key, gap);
      gap = KEY_MS;
      // Every key echoes; waiting for it keeps one key's echo in one output event.
      await this.settle((output) => output !== "", ECHO_QUIET_MS, `the echo of ${JSON.stringify(key)}`);
    }
  }

  private press(key: string, afterMs: number): void {
    this.input("i", key, afterMs);
    this.pty.write(key);
  }

  private input(code: "i" | "r", data: string, afterMs: number): void {
    this.clockMs += afterMs;
    this.outputRank = 0;
    this.recorded.push({ code, ms: this.clockMs, data });
  }

  /** The recording with its times: outputs OUTPUT_MS apart after their input, always before the next input. */
  events(): CastEvent[] {
    // Walking backwards, each event learns when the next input comes.
    const nextInputMs: number[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (let i = this.recorded.length - 1; i >= 0; i--) {
      nextInputMs[i] = next;
      const event = this.recorded[i];
      if (event && event.code !== "o") next = event.ms;
    }
    let lastInputMs = 0;
    return this.recorded.map((event, i): CastEvent => {
      if (event.code !== "o") {
        lastInputMs = event.ms;
        return [event.ms / 1000, event.code, event.data];
      }
      const ms = Math.min(lastInputMs + event.rank * OUTPUT_MS, (nextInputMs[i] ?? next) - OUTPUT_MS);
      return [ms / 1000, "o", event.data];
    });
  }

  private async settle(done: Done, quietMs: number, what: string): Promise<void> {
    await this.until(() => done(this.output) && performance.now() - this.lastOutputAt >= quietMs, what);
  }

  private async until(test: () => boolean, what: string, exitExpected = false): Promise<void> {
    const deadline = performance.now() + TIMEOUT_MS;
    while (!test()) {
      if (this.exitCode !== undefined && !exitExpected)
        throw new Error(`the program ended while waiting for ${what}; output so far: ${JSON.stringify(this.output)}`);
      if (performance.now() > deadline)
        throw new Error(`timed out waiting for ${what}; output so far: ${JSON.stringify(this.output.slice(-400))}`);
      await this.pause(POLL_MS);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
}
