/**
 * Records the terminal demo data (data/demo/terminal/): a real bash, started with no profile and
 * no rc file in a fixed environment, in a scratch home (terminal-workdir.ts), driven key by key:
 *
 *   shell-session.cast     bash in a pseudo-terminal (@lydell/node-pty), saved as asciicast v2:
 *                          ls, cat, grep, a missing file and its exit status, git clone's `\r`
 *                          progress, vim on the alternate screen, clear, a resize, exit
 *   session.tmux.jsonl     bash in a tmux server (send-keys -l, capture-pane -p), saved in
 *                          lwm-data's tmux-log layout (src/read/tmux-log.ts)
 *
 * Run: npx node scripts/record-demo/terminal.ts   (or npm run record:demo -- terminal)
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { DEMO_DIR, FIXED_EPOCH_SECONDS, writeDemoFile } from "./common.ts";
import { type CastEvent, type Done, PtyRecorder } from "./terminal-pty.ts";
import { type ScreenDone, TmuxRecorder } from "./terminal-tmux.ts";
import { PROMPT, prepareWorkdir, shellEnv } from "./terminal-workdir.ts";

const SHELL = ["/bin/bash", "--noprofile", "--norc", "-i"];
const TERM = "xterm-256color";
const SIZE = { cols: 100, rows: 30 };
/** The window is made smaller once, late in the session. */
const RESIZED = { cols: 80, rows: 24 };

/** bash turns bracketed paste on before each prompt: the prompt is what comes after that. */
const promptShown: Done = (output) => output.replaceAll("\u001b[?2004h", "").endsWith(PROMPT);
/** vim has drawn the file and its `"notes.txt" 4L, 98B` message on the last row. */
const vimShown: Done = (output) => output.includes('"notes.txt"');

async function recordShellSession(): Promise<string> {
  const workdir = prepareWorkdir();
  const shell = new PtyRecorder({
    file: SHELL[0] as string,
    args: SHELL.slice(1),
    ...SIZE,
    cwd: workdir.work,
    env: shellEnv(workdir, TERM),
  });
  await shell.start(promptShown);
  await shell.run("ls -la", promptShown);
  await shell.run("cat notes.txt", promptShown);
  await shell.run("grep -n --color=auto ERROR app.log", promptShown);
  await shell.run("cat missing.txt", promptShown);
  await shell.run("echo $?", promptShown);
  await shell.run("git clone --no-local --progress upstream copy", promptShown);
  await shell.run("git -C copy log --oneline --stat", promptShown);
  await shell.run("vim notes.txt", vimShown);
  await shell.run(":q", promptShown);
  await shell.run("clear", promptShown);
  await shell.resize(RESIZED.cols, RESIZED.rows);
  await shell.run("stty size", promptShown);
  const status = await shell.runToExit("exit");
  if (status !== 0) throw new Error(`bash exited with status ${status}`);
  return asciicastV2(shell.events());
}

function asciicastV2(events: CastEvent[]): string {
  const header = { version: 2, width: SIZE.cols, height: SIZE.rows, timestamp: FIXED_EPOCH_SECONDS, env: { TERM, SHELL: SHELL[0] } };
  return `${[header, ...events].map((line) => JSON.stringify(line)).join("\n")}\n`;
}

/** The last non-empty row of a pane capture is the bare prompt: the command is done. */
const paneAtPrompt: ScreenDone = (screen) => screen.trimEnd().split("\n").at(-1) === PROMPT.trimEnd();

async function recordTmuxSession(): Promise<string> {
  const workdir = prepareWorkdir();
  const tmux = new TmuxRecorder({ ...SIZE, cwd: workdir.work, env: shellEnv(workdir, TERM), shell: SHELL });
  try {
    await tmux.open(paneAtPrompt);
    for (const command of [
      "ls",
      "grep -c ERROR app.log",
      "cat missing.txt",
      "echo $?",
      "printf 'héllo wörld ✓ 日本\\n'",
      "git -C upstream log --oneline",
      "clear",
      "wc -l notes.txt app.log",
    ])
      await tmux.run(command, paneAtPrompt);
  } finally {
    tmux.close();
  }
  return `${tmux.lines.map((line) => JSON.stringify(line)).join("\n")}\n`;
}

const cast = await recordShellSession();
const tmuxLog = await recordTmuxSession();
// Every file in the folder is a demo input: clear what an earlier recording left.
rmSync(join(DEMO_DIR, "terminal"), { recursive: true, force: true });
writeDemoFile("terminal/shell-session.cast", cast);
writeDemoFile("terminal/session.tmux.jsonl", tmuxLog);
