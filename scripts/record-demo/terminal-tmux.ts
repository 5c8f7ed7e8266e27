/**
 * Drives a shell in a real tmux server, as an agent harness does (`send-keys -l`, then
 * `capture-pane -p`), and logs it in lwm-data's tmux-log layout (src/read/tmux-log.ts): a header,
 * then `keys` and `capture` events. The server runs on a private socket with no configuration
 * file and is killed at the end.
 *
 * Event times (`t`) come from a virtual clock (fixed steps), not the wall clock.
 */
import { execFileSync } from "node:child_process";

const SOCKET = "lwm-demo";
const SESSION = "demo";
const POLL_MS = 50;
const TIMEOUT_MS = 10_000;
/** Virtual seconds: thinking before a command, typing it, and the command running. */
const THINK_S = 0.8;
const TYPE_S = 0.4;
const RUN_S = 0.5;

export interface TmuxStart {
  cols: number;
  rows: number;
  cwd: string;
  env: Record<string, string>;
  shell: string[];
}

/** A screen is complete when its last non-empty row is the bare prompt. */
export type ScreenDone = (screen: string) => boolean;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class TmuxRecorder {
  readonly lines: Record<string, unknown>[] = [];
  private readonly setup: TmuxStart;
  private pane = "";
  private clock = 0;

  constructor(setup: TmuxStart) {
    this.setup = setup;
  }

  /** The tmux server inherits this environment, and the shell in its pane with it. */
  private tmux(...args: string[]): string {
    return execFileSync("tmux", ["-L", SOCKET, "-f", "/dev/null", ...args], {
      env: this.setup.env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  }

  /** Starts the server and the session, waits for the first prompt and logs the header and that screen. */
  async open(done: ScreenDone): Promise<void> {
    this.close(); // a server left by an interrupted recording
    const { cols, rows, cwd, shell } = this.setup;
    this.tmux("new-session", "-d", "-s", SESSION, "-x", String(cols), "-y", String(rows), "-c", cwd, "--", ...shell);
    this.pane = this.tmux("display-message", "-p", "-t", SESSION, "#{pane_id}").trim();
    this.lines.push({ type: "header", format: "tmux-log", version: 1, cols, rows, session: SESSION, pane: this.pane });
    await this.captureWhen(done, "", 0.2);
  }

  /**
   * Types `keys` literally and captures the pane (the echo), sends Enter, then captures the pane
   * again once `done` holds and the screen stays the same for one more poll.
   */
  async run(keys: string, done: ScreenDone): Promise<void> {
    this.keys(keys, THINK_S);
    const typed = await this.captureWhen((screen) => screen.includes(keys), "", TYPE_S);
    this.keys("\r", 0.1);
    await this.captureWhen(done, typed, RUN_S);
  }

  /** Kills the server (and with it the shell). */
  close(): void {
    try {
      this.tmux("kill-server");
    } catch {
      // no server was running
    }
  }

  private keys(data: string, afterS: number): void {
    this.clock += afterS;
    this.lines.push({ type: "keys", t: round(this.clock), pane: this.pane, data });
    this.tmux("send-keys", "-t", this.pane, "-l", data);
  }

  private async captureWhen(done: ScreenDone, before: string, afterS: number): Promise<string> {
    const deadline = performance.now() + TIMEOUT_MS;
    let previous: string | undefined;
    for (;;) {
      const screen = this.tmux("capture-pane", "-p", "-t", this.pane);
      if (screen !== before && done(screen) && screen === previous) {
        this.clock += afterS;
        this.lines.push({ type: "capture", t: round(this.clock), pane: this.pane, text: screen });
        return screen;
      }
      if (performance.now() > deadline) throw new Error(`tmux: timed out; the pane shows:\n${screen}`);
      previous = screen;
      await pause(POLL_MS);
    }
  }
}

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;
