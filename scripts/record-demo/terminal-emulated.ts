/**
 * Records a real program in a pseudo-terminal (@lydell/node-pty) the way `asciinema rec --stdin`
 * does, with a real terminal emulator on the other side: every byte the program writes goes into
 * an @xterm/headless terminal, and everything that terminal sends back — the keys typed into it,
 * and its own answers to the program's queries (cursor position reports, device attributes, mode
 * reports), focus reports, bracketed-paste markers — goes to the program and is recorded as an
 * `i` event, as asciinema records a terminal's stdin. The headless build leaves colour queries
 * (`OSC 10;?`, `OSC 11;?`) unanswered; they are answered here as xterm.js's browser build does
 * (`OSC 10;rgb:ffff/ffff/ffff ST` for its default white on black).
 *
 * Event times come from a virtual clock (as in terminal-pty.ts): a keystroke KEY_MS after the
 * previous input (THINK_MS before a command), the n-th output chunk after an input n × OUTPUT_MS
 * after it, a reply of the terminal OUTPUT_MS after the output it answers.
 */
import { spawn } from "@lydell/node-pty";
import xterm from "@xterm/headless";

const { Terminal } = xterm;
type Terminal = InstanceType<typeof Terminal>;

export type CastEvent = [time: number, code: "o" | "i", data: string];

type Recorded = { code: "i"; ms: number; data: string } | { code: "o"; rank: number; data: string };

const KEY_MS = 60;
const THINK_MS = 800;
const OUTPUT_MS = 10;
const QUIET_MS = 150;
/** How long output must pause before the answer to one key counts as complete. */
const KEY_QUIET_MS = 60;
const POLL_MS = 5;
const TIMEOUT_MS = 10_000;

export interface EmulatedSpawn {
  file: string;
  args: string[];
  cols: number;
  rows: number;
  cwd: string;
  env: Record<string, string>;
}

/** A test on what the terminal shows (its active screen, rows joined by `\n`, trailing spaces trimmed). */
export type ScreenDone = (screen: string) => boolean;

/** xterm.js's default theme colours, in the form its browser build reports them. */
const COLOUR_REPORTS = new Map([
  [10, "rgb:ffff/ffff/ffff"],
  [11, "rgb:0000/0000/0000"],
  [12, "rgb:ffff/ffff/ffff"],
]);

export class EmulatedPtyRecorder {
  private readonly recorded: Recorded[] = [];
  private readonly terminal: Terminal;
  private readonly pty: ReturnType<typeof spawn>;
  private clockMs = 0;
  private outputRank = 0;
  private lastOutputAt = performance.now();
  private outputs = 0;
  /** Output written into the emulator and not parsed yet. */
  private unparsed = 0;
  private exitCode: number | undefined;
  /** The next input is a keystroke (its gap from the previous input is the person's). */
  private keyGapMs = THINK_MS;

  constructor(program: EmulatedSpawn) {
    this.terminal = new Terminal({ cols: program.cols, rows: program.rows, allowProposedApi: true, logLevel: "off" });
    for (const [ident, colour] of COLOUR_REPORTS) {
      this.terminal.parser.registerOscHandler(ident, (data) => {
        if (data !== "?") return false;
        this.terminal.input(`\u001b]${ident};${colour}\u001b\\`, false);
        return true;
      });
    }
    this.pty = spawn(program.file, program.args, {
      name: program.env.TERM ?? "xterm-256color",
      cols: program.cols,
      rows: program.rows,
      cwd: program.cwd,
      env: program.env,
    });
    // What the terminal sends: keys typed into it (input(…, true)) and its own replies.
    this.terminal.onData((data) => {
      const gap = this.keyGapMs >= 0 ? this.keyGapMs : (this.outputRank + 1) * OUTPUT_MS;
      this.keyGapMs = -1;
      this.clockMs += gap;
      this.outputRank = 0;
      this.recorded.push({ code: "i", ms: this.clockMs, data });
      this.pty.write(data);
    });
    this.pty.onData((data) => {
      this.outputRank += 1;
      this.outputs += 1;
      this.recorded.push({ code: "o", rank: this.outputRank, data });
      this.lastOutputAt = performance.now();
      this.unparsed += 1;
      this.terminal.write(data, () => {
        this.unparsed -= 1;
      });
    });
    this.pty.onExit(({ exitCode }) => {
      this.exitCode = exitCode;
    });
  }

  /** The active screen as text. */
  screen(): string {
    const buffer = this.terminal.buffer.active;
    const rows: string[] = [];
    for (let y = 0; y < this.terminal.rows; y++) rows.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? "");
    return rows.join("\n");
  }

  get modes(): Terminal["modes"] {
    return this.terminal.modes;
  }

  /** Waits until the screen passes `done` and output has paused for `quietMs`. */
  async settle(done: ScreenDone, what: string, quietMs = QUIET_MS): Promise<void> {
    const deadline = performance.now() + TIMEOUT_MS;
    while (!(this.unparsed === 0 && done(this.screen()) && performance.now() - this.lastOutputAt >= quietMs)) {
      if (this.exitCode !== undefined) throw new Error(`the program ended while waiting for ${what}; screen:\n${this.screen()}`);
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${this.screen()}`);
      await pause(POLL_MS);
    }
  }

  /**
   * Sends one input event (typed, or the terminal's own report) and waits for the program's answer
   * to it — or, when none is due, for QUIET_MS of silence.
   */
  private async send(data: string, gapMs: number, typed: boolean, what: string, answered = true): Promise<void> {
    const before = this.outputs;
    this.keyGapMs = gapMs;
    this.terminal.input(data, typed);
    if (answered) await this.settle(() => this.outputs > before, `the answer to ${what}`, KEY_QUIET_MS);
    else await this.settle(() => true, what);
  }

  /**
   * A person types `keys`, one input event per key, each after the program has answered the
   * previous one (every key here is echoed or redraws something), then waits for `done`.
   */
  async type(keys: string[], done: ScreenDone = () => true, what = JSON.stringify(keys.join(""))): Promise<void> {
    let gap = THINK_MS;
    for (const key of keys) {
      await this.send(key, gap, true, JSON.stringify(key));
      gap = KEY_MS;
    }
    await this.settle(done, what);
  }

  /** Types a command key by key, then Enter, and waits for `done`. */
  async run(command: string, done: ScreenDone): Promise<void> {
    await this.type([...command, "\r"], done, JSON.stringify(command));
  }

  /** A person pastes `text` (as xterm.js does: line breaks sent as `\r`, bracketed when the program asked). */
  async paste(text: string, done: ScreenDone = () => true): Promise<void> {
    const body = text.replace(/\r?\n/g, "\r");
    await this.send(this.terminal.modes.bracketedPasteMode ? `\u001b[200~${body}\u001b[201~` : body, THINK_MS, true, "a paste");
    await this.settle(done, `the paste of ${JSON.stringify(text)}`);
  }

  /** The terminal window loses the focus and gets it back (reported only when the program asked, mode 1004). */
  async blurAndFocus(): Promise<void> {
    if (!this.terminal.modes.sendFocusMode) throw new Error("the program did not ask for focus reports");
    await this.send("\u001b[O", THINK_MS, false, "focus out", false);
    await this.send("\u001b[I", THINK_MS, false, "focus in", false);
  }

  /** Types the last command and waits for the program to end. */
  async runToExit(command: string): Promise<number> {
    for (const key of [...command, "\r"]) {
      this.keyGapMs = KEY_MS;
      this.terminal.input(key, true);
      await pause(KEY_MS);
    }
    const deadline = performance.now() + TIMEOUT_MS;
    while (this.exitCode === undefined || this.unparsed > 0) {
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${JSON.stringify(command)} to end the program`);
      await pause(POLL_MS);
    }
    this.terminal.dispose();
    return this.exitCode;
  }

  /** The recording with its times: outputs OUTPUT_MS apart after their input, always before the next input. */
  events(): CastEvent[] {
    const nextInputMs: number[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (let i = this.recorded.length - 1; i >= 0; i--) {
      nextInputMs[i] = next;
      const event = this.recorded[i];
      if (event && event.code === "i") next = event.ms;
    }
    let lastInputMs = 0;
    return this.recorded.map((event, i): CastEvent => {
      if (event.code === "i") {
        lastInputMs = event.ms;
        return [event.ms / 1000, "i", event.data];
      }
      const ms = Math.min(lastInputMs + event.rank * OUTPUT_MS, (nextInputMs[i] ?? next) - 1);
      return [ms / 1000, "o", event.data];
    });
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
