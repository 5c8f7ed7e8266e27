/**
 * Records the terminal test fixtures in test/fixtures/recorded/terminal/ with real programs (bash,
 * vim, less) in a pseudo-terminal whose other end is a real terminal emulator (terminal-emulated.ts),
 * in the scratch home of the demo recordings (terminal-workdir.ts):
 *
 *   vim-less.cast      `asciinema rec --stdin` style: the input stream holds the keys typed and
 *                      pasted and everything the terminal answered (vim's cursor position, device
 *                      attribute, mode and colour queries; focus reports; bracketed-paste markers).
 *                      vim edits notes.txt and writes it; vim runs again and quits by itself
 *                      (`-c q`); `seq 1 60 | less` pages and quits; a command is pasted at the prompt.
 *   output-only.cast   `asciinema rec` without --stdin: output events only, of a bash session with a
 *                      coloured prompt that sets the window title, several commands, a `cd` that
 *                      changes the prompt, a typo fixed with Backspace, a Python prompt, `clear`.
 *
 * Not part of `npm run record:demo` (these are test inputs, not demo data). Needs bash, vim, less
 * and python3. Run: npx node scripts/record-demo/terminal-fixtures.ts
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { FIXED_EPOCH_SECONDS, ROOT } from "./common.ts";
import { type CastEvent, EmulatedPtyRecorder, type ScreenDone } from "./terminal-emulated.ts";
import { PROMPT, prepareWorkdir, shellEnv } from "./terminal-workdir.ts";

const OUT_DIR = join(ROOT, "test/fixtures/recorded/terminal");
const SHELL = ["/bin/bash", "--noprofile", "--norc", "-i"];
const TERM = "xterm-256color";
const SIZE = { cols: 80, rows: 24 };

/** The last non-empty row of the screen is the bare prompt. */
const atPrompt =
  (prompt = PROMPT.trimEnd()): ScreenDone =>
  (screen) =>
    screen.trimEnd().split("\n").at(-1) === prompt;
const shows =
  (text: string): ScreenDone =>
  (screen) =>
    screen.includes(text);

function asciicast(events: CastEvent[], keepInput: boolean): string {
  const header = { version: 2, ...{ width: SIZE.cols, height: SIZE.rows }, timestamp: FIXED_EPOCH_SECONDS, env: { TERM, SHELL: SHELL[0] } };
  const kept = keepInput ? events : events.filter(([, code]) => code === "o");
  return `${[header, ...kept].map((line) => JSON.stringify(line)).join("\n")}\n`;
}

async function recordVimLess(): Promise<string> {
  const workdir = prepareWorkdir();
  const term = new EmulatedPtyRecorder({
    file: SHELL[0] as string,
    args: SHELL.slice(1),
    ...SIZE,
    cwd: workdir.work,
    env: shellEnv(workdir, TERM),
  });
  await term.settle(atPrompt(), "the first prompt");
  await term.run("vim notes.txt", shows('"notes.txt" 4L'));
  await term.blurAndFocus();
  await term.type(["G"], shows("4,1"));
  await term.type(["o"], shows("-- INSERT --"));
  await term.paste("- publish the notes", shows("- publish the notes"));
  await term.type(["\u001b"], (screen) => !screen.includes("-- INSERT --"));
  await term.type([":", "w", "q", "\r"], atPrompt());
  await term.run("cat notes.txt", atPrompt());
  // A full-screen program that ends by itself: vim draws the file, waits, quits (no key sent to it).
  await term.run("vim -c redraw -c 'sleep 300m' -c q notes.txt", atPrompt());
  await term.run("seq 1 60 | less", shows(":"));
  await term.type([" "], shows("44"));
  await term.type(["q"], atPrompt());
  await term.paste("echo 'pasted at the prompt'", shows("pasted at the prompt'"));
  await term.type(["\r"], atPrompt());
  const status = await term.runToExit("exit");
  if (status !== 0) throw new Error(`bash exited with status ${status}`);
  return asciicast(term.events(), true);
}

/** Debian's default prompt: green user@host, blue directory, and the window title set to both. */
const COLOUR_PS1 = "\\[\\e]0;demo@lwm: \\w\\a\\]\\[\\e[01;32m\\]demo@lwm\\[\\e[00m\\]:\\[\\e[01;34m\\]\\w\\[\\e[00m\\]$ ";

async function recordOutputOnly(): Promise<string> {
  const workdir = prepareWorkdir();
  const term = new EmulatedPtyRecorder({
    file: SHELL[0] as string,
    args: SHELL.slice(1),
    ...SIZE,
    cwd: workdir.work,
    env: { ...shellEnv(workdir, TERM), PS1: COLOUR_PS1 },
  });
  const upstream = atPrompt("demo@lwm:~/work/upstream$");
  await term.settle(atPrompt(), "the first prompt");
  await term.run("ls", atPrompt());
  await term.run("cd upstream", upstream);
  await term.run("git log --oneline", upstream);
  await term.run("cd ..", atPrompt());
  await term.type([..."ecoo", "\u007f", "\u007f", ..."ho typo fixed"], shows("echo typo fixed"));
  await term.type(["\r"], atPrompt());
  await term.run("python3 -q", atPrompt(">>>"));
  await term.run("6 * 7", atPrompt(">>>"));
  await term.run("exit()", atPrompt());
  await term.run("grep -c ERROR app.log", atPrompt());
  await term.run("clear", atPrompt());
  await term.run("wc -l notes.txt", atPrompt());
  const status = await term.runToExit("exit");
  if (status !== 0) throw new Error(`bash exited with status ${status}`);
  return asciicast(term.events(), false);
}

const vimLess = await recordVimLess();
const outputOnly = await recordOutputOnly();
mkdirSync(OUT_DIR, { recursive: true });
for (const [name, content] of [
  ["vim-less.cast", vimLess],
  ["output-only.cast", outputOnly],
] as const) {
  const path = join(OUT_DIR, name);
  writeFileSync(path, content);
  console.log(`  wrote ${relative(ROOT, path)} (${Buffer.byteLength(content)} bytes)`);
}
