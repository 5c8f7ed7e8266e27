import { createRequire } from "node:module";

/**
 * What a recorded terminal byte stream means, read without an emulator (the asciicast reader cuts
 * turns with it; the terminal normalizer renders the screens afterwards):
 *
 * - which bytes of the input stream the terminal sent on its own — answers to the program's
 *   queries and reports of terminal events — and which were typed or pasted (`terminalKeys`);
 * - whether a full-screen program has the alternate screen (`OutputScanner.altScreen`);
 * - where a shell prompt stands in output recorded without keystrokes (`OutputScanner` with
 *   prompt tracking, `choosePrompt`).
 *
 * The sequences are those of XTerm Control Sequences (ctlseqs, invisible-island.net/xterm), which
 * xterm, VTE, iTerm2, kitty, WezTerm, Windows Terminal and xterm.js follow.
 */

const CSI = String.raw`(?:\x1b\[|\x9b)`;
const ST = String.raw`(?:\x1b\\|\x9c)`;
const PARAMS = "[\\d;:]*";

/**
 * Sequences a terminal writes to the program's input by itself. None of them is produced by a
 * key (ctlseqs' PC-style function keys, cursor keys, keypad and modifyOtherKeys / kitty key
 * encodings all use other finals), except a cursor position report that reads like a modified F3
 * (below). Mouse reports (`CSI M…`, `CSI <…M/m`) are kept: a click or a wheel turn is the user's.
 *
 * | reply | form | answers |
 * |---|---|---|
 * | CPR, DECXCPR | `CSI r ; c R`, `CSI ? r ; c ; p R` | DSR `CSI 6 n`, `CSI ? 6 n` |
 * | bracketed paste markers | `CSI 200 ~` … `CSI 201 ~` (the text between is kept) | mode 2004 |
 * | DA1, DA2, DA3 | `CSI ? Pm c`, `CSI > Pm c`, `DCS ! | id ST` | `CSI c`, `CSI > c`, `CSI = c` |
 * | DSR replies | `CSI 0 n`, `CSI 3 n`, `CSI ? Pm n` (printer, UDK, keyboard, locator…) | `CSI 5 n`, `CSI ? Ps n` |
 * | DECRPM | `CSI Pm $ y`, `CSI ? Pm $ y` | DECRQM `CSI Ps $ p`, `CSI ? Ps $ p` |
 * | XTWINOPS reports | `CSI 1 t`, `CSI 2 t`, `CSI 3;x;y t`, `CSI 4;h;w t`, `CSI 6;h;w t`, `CSI 8;r;c t`, `CSI 9;h;w t` | `CSI 11/13/14/16/18/19 t` |
 * | DECREPTPARM | `CSI Pm x` | DECREQTPARM `CSI x` |
 * | XTQMODKEYS, XTSMGRAPHICS, kitty flags | `CSI > Pm m`, `CSI ? Pm S`, `CSI ? flags u` | `CSI ? Pp m`, `CSI ? Pi;Pa;Pv S`, `CSI ? u` |
 * | focus in / out | `CSI I`, `CSI O` | mode 1004 |
 * | OSC reports | `OSC 4;c;rgb:… ST`, `OSC 10…19;rgb:… ST` (colours), `OSC 52;…` (clipboard), `OSC l…`/`OSC L…` (title, label) | `OSC 10;?` etc., `CSI 20/21 t` |
 * | DCS / APC strings | `DCS Ps $ r … ST` (DECRQSS), `DCS 1 + r … ST` (XTGETTCAP), `DCS > | … ST` (XTVERSION), `DCS … $ u` (DECCIR, DECTABSR), `APC G … ST` (kitty graphics) | the matching requests |
 *
 * OSC, DCS and APC count only when terminated (BEL or ST): Alt+] or Alt+P alone start no reply.
 */
const INPUT_SEQUENCE = new RegExp(
  [
    `(${CSI}(\\?)?(\\d*);(\\d*)(?:;\\d*)?R)`, // 1: a cursor position report; 2: DECXCPR's "?"; 3: row; 4: column
    `(${CSI}20([01])~)`, // 5: a bracketed-paste marker; 6: 0 = start, 1 = end
    `(${[
      `${CSI}[?>=]${PARAMS}c`,
      `${CSI}\\??${PARAMS}n`,
      `${CSI}\\??${PARAMS}\\$y`,
      `${CSI}${PARAMS}[tx]`,
      `${CSI}>${PARAMS}m`,
      `${CSI}\\?${PARAMS}[Su]`,
      `${CSI}[IO]`,
      `(?:\\x1b\\]|\\x9d)[^\\x07\\x1b\\x9c]*(?:\\x07|${ST})`,
      `(?:\\x1b[P_^X]|[\\x90\\x98\\x9e\\x9f])[^\\x1b\\x9c]*${ST}`,
    ].join("|")})`, // 7: any other reply
  ].join("|"),
  "g",
);

/** What the input filter carries from one input event to the next. */
export interface InputState {
  /** Cursor position queries (`CSI 6 n`, `CSI ? 6 n`) the program wrote and no report has answered yet. */
  cursorQueries: number;
  /** Inside a bracketed paste (between `CSI 200~` and `CSI 201~`). */
  inPaste: boolean;
  /** Terminal-generated sequences removed so far. */
  replies: number;
}

export const newInputState = (): InputState => ({ cursorQueries: 0, inPaste: false, replies: 0 });

/** A run of input: typed keys, or the text of a bracketed paste (markers removed). */
export interface KeySegment {
  text: string;
  pasted: boolean;
}

/**
 * xterm sends F3 with a modifier as `CSI 1 ; m R` (m = 2…16): the same bytes as a cursor report
 * for row 1, column m. Such a report is taken for a reply only while a cursor query is unanswered.
 */
function isCursorReport(privateMarker: string | undefined, row: string, column: string, state: InputState): boolean {
  if (privateMarker === "?") return true;
  if (state.cursorQueries > 0) {
    state.cursorQueries -= 1;
    return true;
  }
  const col = Number(column);
  return !(row === "1" && col >= 2 && col <= 16);
}

/**
 * The keys of one input event: the event's bytes without the sequences the terminal generated
 * (see INPUT_SEQUENCE), split into typed and pasted runs. Empty when the event held only replies.
 * A reply is recognized within one event (a terminal writes each reply at once, and asciinema
 * records what one read returned); a paste may span events (`state.inPaste`).
 */
export function terminalKeys(data: string, state: InputState): KeySegment[] {
  const segments: KeySegment[] = [];
  const add = (text: string) => {
    if (text === "") return;
    const last = segments.at(-1);
    if (last && last.pasted === state.inPaste) last.text += text;
    else segments.push({ text, pasted: state.inPaste });
  };
  let from = 0;
  for (const match of data.matchAll(INPUT_SEQUENCE)) {
    const [sequence, report, privateMarker, row, column, paste, pasteEnd] = match;
    if (report !== undefined && !isCursorReport(privateMarker, row ?? "", column ?? "", state)) continue; // a key (modified F3)
    add(data.slice(from, match.index));
    from = match.index + sequence.length;
    state.replies += 1;
    if (paste !== undefined) state.inPaste = pasteEnd === "0";
  }
  add(data.slice(from));
  return segments;
}

// ---------- output ----------

/** A prompt-like text left of the cursor when an output event ended (the shell waiting for keys). */
export interface PromptCandidate {
  /** Index of the output event (in the list fed to the scanner) that ended with it. */
  index: number;
  text: string;
}

/** Where a line break starts in the output: event index and offset into its data. */
export interface StreamPosition {
  index: number;
  offset: number;
}

/** A line that ended (`\n`) after showing at least one prompt candidate. */
export interface PromptLine {
  candidates: PromptCandidate[];
  /** The line as it finally read (escape sequences applied, trailing spaces kept). */
  text: string;
  /** Where its line break (`\r\n` or `\n`) starts. */
  lineBreak: StreamPosition;
}

/** The characters a prompt ends with (optionally followed by one space): `$ `, `# `, `% `, `> `, `>>> `, `❯ `, `» `. */
const PROMPT_END = /[$#%>❯»] ?$/u;
const MAX_PROMPT_LENGTH = 256;
/** Columns kept of one line (a prompt line is short; a binary dump without newlines must not grow memory). */
const MAX_LINE_CELLS = 4096;
const MAX_CSI_LENGTH = 64;
const ALT_SCREEN_MODES = new Set(["47", "1047", "1049"]);

/**
 * A prompt's shape: the same prompt in another directory, or with another counter, has the same
 * shape. Paths (`~`, `~/src`, `/app`) become `<dir>`, numbers `<n>`:
 * `user@host:~/src$ ` → `user@host:<dir>$ `, `In [12]: ` → `In [<n>]: `.
 */
export function promptShape(text: string): string {
  return text.replace(/[~/][^\s$#%>❯»:]*/gu, "<dir>").replace(/\d+/g, "<n>");
}

type ScanState = "ground" | "escape" | "escapeIntermediate" | "csi" | "string" | "stringEscape";

/**
 * Follows a terminal's output stream event by event: escape sequences (split across events or
 * not), the alternate screen, cursor position queries, and — with `trackPrompts` — a one-line
 * model of the cursor's line (printable text, `\r`, `\b`, tab, erase and horizontal cursor moves;
 * anything that moves to another row starts a new line) that notes prompt candidates.
 */
export class OutputScanner {
  /** A full-screen program has the alternate screen (DEC modes 47, 1047, 1049). */
  altScreen = false;
  /** Lines that ended after a prompt candidate, in order. */
  readonly lines: PromptLine[] = [];
  private state: ScanState = "ground";
  private csi = "";
  private cells: string[] = [];
  private column = 0;
  private lineCandidates: PromptCandidate[] = [];

  private readonly input: InputState | undefined;
  private readonly trackPrompts: boolean;

  /** `input`: where to count cursor queries for the input filter; `trackPrompts`: note prompt candidates. */
  constructor(input: InputState | undefined, trackPrompts = false) {
    this.input = input;
    this.trackPrompts = trackPrompts;
  }

  /** Candidates on the line still open at the end of the stream (a prompt never answered). */
  get openCandidates(): PromptCandidate[] {
    return this.lineCandidates;
  }

  /** One output event's data; `index` is its place in the event list, for positions. */
  feed(data: string, index: number): void {
    let i = 0;
    while (i < data.length) {
      const code = data.codePointAt(i) as number;
      const width = code > 0xffff ? 2 : 1;
      if (this.step(code, data, i, index)) i += width;
    }
    if (this.trackPrompts) this.noteCandidate(index);
  }

  /** Processes one code point; false when it must be read again in the new state. */
  private step(code: number, data: string, i: number, index: number): boolean {
    switch (this.state) {
      case "ground":
        if (code === 0x1b) this.state = "escape";
        else if (code === 0x9b) this.startCsi();
        else if (code === 0x9d || code === 0x90 || code === 0x98 || code === 0x9e || code === 0x9f) this.state = "string";
        else if (this.trackPrompts) this.text(code, data, i, index);
        return true;
      case "escape":
        if (code === 0x5b) this.startCsi();
        else if (code === 0x5d || code === 0x50 || code === 0x5f || code === 0x5e || code === 0x58) this.state = "string";
        else if (code >= 0x20 && code <= 0x2f) this.state = "escapeIntermediate";
        else {
          this.state = "ground";
          if (code === 0x63) this.newScreen(); // ESC c: full reset
        }
        return true;
      case "escapeIntermediate":
        if (code < 0x20 || code > 0x2f) this.state = "ground";
        return true;
      case "csi":
        if (code >= 0x40 && code <= 0x7e) {
          this.state = "ground";
          this.endCsi(String.fromCharCode(code));
        } else if (code === 0x18 || code === 0x1a) this.state = "ground";
        else if (code === 0x1b) this.state = "escape";
        else if (this.csi.length < MAX_CSI_LENGTH) this.csi += String.fromCodePoint(code);
        return true;
      case "string":
        if (code === 0x07 || code === 0x9c) this.state = "ground";
        else if (code === 0x1b) this.state = "stringEscape";
        return true;
      case "stringEscape":
        // ESC \ ends the string; ESC and anything else ends it too and starts a new sequence.
        this.state = "escape";
        if (code === 0x5c) {
          this.state = "ground";
          return true;
        }
        return false;
    }
  }

  private startCsi(): void {
    this.state = "csi";
    this.csi = "";
  }

  private endCsi(final: string): void {
    const params = this.csi;
    if ((final === "h" || final === "l") && params.startsWith("?")) {
      if (
        params
          .slice(1)
          .split(";")
          .some((mode) => ALT_SCREEN_MODES.has(mode))
      ) {
        const alt = final === "h";
        if (alt !== this.altScreen) this.newScreen();
        this.altScreen = alt;
      }
      return;
    }
    if (final === "n" && (params === "6" || params === "?6") && this.input) this.input.cursorQueries += 1;
    if (this.trackPrompts) this.lineControl(params, final);
  }

  /** The line model's part of a CSI sequence. */
  private lineControl(params: string, final: string): void {
    const n = Math.max(1, Math.min(MAX_LINE_CELLS, Number.parseInt(params, 10) || 1));
    switch (final) {
      case "K": {
        const mode = params === "" ? 0 : Number(params);
        if (mode === 0) this.cells.length = Math.min(this.cells.length, this.column);
        else if (mode === 1) for (let c = 0; c <= this.column && c < this.cells.length; c++) this.cells[c] = " ";
        else if (mode === 2) this.cells = [];
        return;
      }
      case "C":
      case "a":
        this.column = Math.min(MAX_LINE_CELLS, this.column + n);
        return;
      case "D":
        this.column = Math.max(0, this.column - n);
        return;
      case "G":
      case "`":
        this.column = n - 1;
        return;
      case "P":
        this.cells.splice(this.column, n);
        return;
      case "@":
        if (this.column < this.cells.length) this.cells.splice(this.column, 0, ...Array<string>(n).fill(" "));
        return;
      case "X":
        for (let c = this.column; c < this.column + n && c < this.cells.length; c++) this.cells[c] = " ";
        return;
      case "J":
        if (params === "" || params === "0") this.cells.length = Math.min(this.cells.length, this.column);
        else this.newScreen();
        return;
      case "A":
      case "B":
      case "E":
      case "F":
      case "H":
      case "f":
      case "d":
      case "r":
        this.newLine(); // another row: what the old line's candidates were waiting for did not come
        if (final === "H" || final === "f") this.column = Math.max(0, (Number(params.split(";")[1]) || 1) - 1);
        return;
      default:
        return;
    }
  }

  private text(code: number, data: string, i: number, index: number): void {
    if (code === 0x0a || code === 0x0b || code === 0x0c) {
      this.endLine({ index, offset: i > 0 && data.charCodeAt(i - 1) === 0x0d ? i - 1 : i });
      return;
    }
    if (code === 0x0d) this.column = 0;
    else if (code === 0x08) this.column = Math.max(0, this.column - 1);
    else if (code === 0x09) this.column = Math.min(MAX_LINE_CELLS, (Math.floor(this.column / 8) + 1) * 8);
    else if (code >= 0x20 && code !== 0x7f && !(code >= 0x80 && code < 0xa0) && this.column < MAX_LINE_CELLS) {
      while (this.cells.length < this.column) this.cells.push(" ");
      this.cells[this.column] = String.fromCodePoint(code);
      this.column += 1;
    }
  }

  /** At the end of an output event: is the text left of the cursor a prompt waiting for keys? */
  private noteCandidate(index: number): void {
    if (this.state !== "ground" || this.altScreen || this.column === 0 || this.column > MAX_PROMPT_LENGTH) return;
    let text = "";
    for (let c = 0; c < this.column; c++) text += this.cells[c] ?? " ";
    if (PROMPT_END.test(text) && text.trim() !== "") this.lineCandidates.push({ index, text });
  }

  /** A line break: the line ends; if it showed a prompt, it is kept. */
  private endLine(lineBreak: StreamPosition): void {
    if (this.lineCandidates.length > 0) this.lines.push({ candidates: this.lineCandidates, text: this.cells.join(""), lineBreak });
    this.newLine();
  }

  /** The cursor left the line without a line break: its candidates lapse. */
  private newLine(): void {
    this.cells = [];
    this.column = 0;
    this.lineCandidates = [];
  }

  private newScreen(): void {
    this.newLine();
  }
}

/**
 * The prompt of an output-only recording: the shape (`promptShape`) shown at the end of an output
 * event on the most lines, if it is on at least two; ties go to the longer shape, then the earlier.
 */
export function choosePrompt(lines: PromptLine[], open: PromptCandidate[]): string | undefined {
  const counts = new Map<string, number>();
  for (const candidates of [...lines.map((line) => line.candidates), open]) {
    for (const shape of new Set(candidates.map((candidate) => promptShape(candidate.text))))
      counts.set(shape, (counts.get(shape) ?? 0) + 1);
  }
  let best: [string, number] | undefined;
  for (const [shape, count] of counts) {
    if (count < 2) continue;
    if (!best || count > best[1] || (count === best[1] && shape.length > best[0].length)) best = [shape, count];
  }
  return best?.[0];
}

// ---------- submitted commands ----------

/** The part of mvdan-sh (mvdan.cc/sh's parser, compiled to JavaScript) this module uses. */
interface ShParser {
  Interactive(src: string, fn: (stmts: unknown[]) => boolean): void;
  Parse(src: string, name: string): unknown;
  Incomplete(): boolean;
}
let shParser: ShParser | undefined;
function parser(): ShParser {
  shParser ??= (createRequire(import.meta.url)("mvdan-sh") as { syntax: { NewParser(): ShParser } }).syntax.NewParser();
  return shParser;
}

/** Why `Parse` stopped on an unfinished text: what line can finish it (undefined: any line may). */
function closer(text: string): ((line: string) => boolean) | undefined {
  try {
    parser().Parse(text, "");
    return undefined;
  } catch (err) {
    const message = String((err as { Error?: () => string }).Error?.() ?? err);
    const heredoc = /unclosed here-document '(.*)'$/.exec(message);
    if (heredoc) return (line) => line.replace(/^\t+/, "") === heredoc[1];
    const quote = /reached EOF without closing quote (.)$/.exec(message);
    if (quote) return (line) => line.includes(quote[1] as string);
    return undefined;
  }
}

/** Lines a pending command may grow to before it is sent as it stands (a runaway quote must not go quadratic). */
const MAX_PENDING_LINES = 10_000;

/**
 * Whether bash, reading `lines` one Enter at a time, runs them now or waits for more (an open
 * quote, a here-document before its delimiter, a trailing `\`, `|` or `&&`, an open `if`/`for`/
 * `{`/`(`/`$(`…). Decided by mvdan.cc/sh's bash parser in interactive mode (`Parser.Incomplete`),
 * as an interactive shell decides it; a syntax error is complete (bash reports it and moves on).
 */
export function shellInputComplete(text: string): boolean {
  const p = parser();
  let incomplete = false;
  try {
    p.Interactive(text.endsWith("\n") ? text : `${text}\n`, () => {
      incomplete = p.Incomplete();
      return true;
    });
  } catch {
    // EOF inside an unfinished statement, or a syntax error: `incomplete` says which.
  }
  return !incomplete;
}

/**
 * Lines submitted to a shell one Enter at a time, grouped into the commands it runs: a line joins
 * the pending command until the text parses as complete (`shellInputComplete`). Blank lines with
 * nothing pending submit nothing. Only lines that can finish the pending construct are parsed
 * again (the delimiter of an open here-document, a line with the open quote character).
 */
export class CommandLines {
  private pending: string[] = [];
  private canClose: ((line: string) => boolean) | undefined;

  /** True while a command has lines but is not complete. */
  get open(): boolean {
    return this.pending.length > 0;
  }

  /** The lines of the unfinished command, if any. */
  get pendingText(): string | undefined {
    return this.pending.length > 0 ? this.pending.join("\n") : undefined;
  }

  /** One submitted line (it may hold pasted line breaks); the command it completes, if any. */
  push(line: string): string | undefined {
    if (this.pending.length === 0 && line.trim() === "") return undefined;
    this.pending.push(line);
    const last = line.split("\n").at(-1) ?? "";
    if (this.canClose && !this.canClose(last) && this.pending.length < MAX_PENDING_LINES) return undefined;
    const text = this.pending.join("\n");
    if (this.pending.length < MAX_PENDING_LINES && !shellInputComplete(text)) {
      this.canClose = closer(`${text}\n`);
      return undefined;
    }
    this.pending = [];
    this.canClose = undefined;
    return text;
  }

  /** The end of the input: what is pending, sent as it stands (a shell would report the EOF). */
  flush(): string | undefined {
    const text = this.pendingText;
    this.pending = [];
    this.canClose = undefined;
    return text;
  }
}

/** A text sent whole (several lines, a script, a tmux send-keys string) split into the commands a shell runs. */
export function splitCommands(text: string): string[] {
  const lines = new CommandLines();
  const commands: string[] = [];
  for (const line of text.replace(/\r\n?/g, "\n").replace(/\n$/, "").split("\n")) {
    const command = lines.push(line);
    if (command !== undefined) commands.push(command);
  }
  const rest = lines.flush();
  if (rest !== undefined) commands.push(rest);
  return commands;
}

// ---------- echoes ----------

/**
 * The visible characters of output chunks (escape sequences, lone `\r`, and the ` \r` readline
 * writes at a wrap left out), each with the chunk and offset it came from, so a match in the text
 * can be cut out of the chunks.
 */
export interface VisibleText {
  text: string;
  /** For each character of `text`: [chunk index, offset of the character in the chunk]. */
  at: [number, number][];
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are made of control characters.
const OUTPUT_SEQUENCE = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[P_^X][^\x1b]*\x1b\\|\x1b[ -/]*[0-~]|\r(?!\n)/y;

export function visibleText(chunks: readonly string[]): VisibleText {
  let text = "";
  const at: [number, number][] = [];
  chunks.forEach((chunk, index) => {
    let i = 0;
    while (i < chunk.length) {
      OUTPUT_SEQUENCE.lastIndex = i;
      const match = OUTPUT_SEQUENCE.exec(chunk);
      if (match) {
        i += match[0].length;
        continue;
      }
      const ch = chunk[i] as string;
      if (ch === " " && chunk[i + 1] === "\r" && chunk[i + 2] !== "\n") {
        i += 2; // readline's wrap: a space, then back to the line's start
        continue;
      }
      if (ch !== "\r") {
        text += ch;
        at.push([index, i]);
      }
      i += 1;
    }
  });
  return { text, at };
}

/** Longest text before a command's echo on its line: a prompt (PS1, or PS2's `> ` before a continuation). */
const MAX_PREFIX = 256;

/**
 * Where the echo of `command` (its lines, as a shell shows them while reading it) is in `view`,
 * searching from `from`: its first line after a prompt on the same line (text ending like one:
 * `$ `, `# `, `> `…) or, with `atStart`, right at `from` (the prompt already on the screen); each further line after a line break and a continuation prompt.
 * Each echoed line must end the visible line (or the text). [start, end) in `view.text`, or undefined.
 */
export function findEcho(view: VisibleText, command: string, from: number, atStart: boolean): [number, number] | undefined {
  const lines = command.split("\n");
  const first = lines[0] as string;
  const { text } = view;
  const endsLine = (at: number) => at === text.length || text[at] === "\n";
  const restFrom = (start: number): number | undefined => {
    let at = start + first.length;
    if (!endsLine(at)) return undefined;
    for (const line of lines.slice(1)) {
      if (at === text.length) return undefined;
      const lineStart = at + 1;
      const lineEnd = text.indexOf("\n", lineStart) === -1 ? text.length : text.indexOf("\n", lineStart);
      const visible = text.slice(lineStart, lineEnd);
      if (!visible.endsWith(line) || visible.length - line.length > MAX_PREFIX) return undefined;
      at = lineEnd;
    }
    return at;
  };
  if (atStart) {
    if (!text.startsWith(first, from)) return undefined;
    const end = restFrom(from);
    return end === undefined ? undefined : [from, end];
  }
  let lineStart = from;
  while (lineStart <= text.length) {
    const lineEnd = text.indexOf("\n", lineStart) === -1 ? text.length : text.indexOf("\n", lineStart);
    const start = lineEnd - first.length;
    const prefix = text.slice(lineStart, Math.max(lineStart, start));
    if (start >= lineStart && text.startsWith(first, start) && prefix.length <= MAX_PREFIX && PROMPT_END.test(prefix)) {
      const end = restFrom(start);
      if (end !== undefined) return [start, end];
    }
    if (lineEnd === text.length) break;
    lineStart = lineEnd + 1;
  }
  return undefined;
}
