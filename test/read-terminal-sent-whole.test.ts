/**
 * Issue 34 item 3, terminal input sent whole and harness vs agent. Over the project's terminal-bench
 * and asciicast fixtures, the demo recordings and the shared samples: no empty turn, no harness
 * command as an agent action, no typed command echoed in a trained (rendered) observation. The
 * counters are shown to count (negative controls): the old line-by-line split of a here-document,
 * observations rendered with the echo left in, a harness-only trial taken as it was typed.
 * Fixtures recorded for real with tmux and asciinema (test/fixtures/handmade/terminal/
 * record-sent-whole.ts); bash itself (`bash -n`) is the independent reference for the splitting.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory, Turn } from "../src/core/trajectory.ts";
import { renderTerminalTrajectory } from "../src/normalize/domains/terminal.ts";
import { asciicastReader, type TerminalTurnMeta } from "../src/read/asciicast.ts";
import type { Reader } from "../src/read/reader.ts";
import { classifyCommands, HARNESS_ACTION, parsePyKeys, terminalBenchReader } from "../src/read/terminal-bench.ts";
import { findEcho, splitCommands, visibleText } from "../src/read/terminal-stream.ts";
import { tmuxLogReader } from "../src/read/tmux-log.ts";
import { collect, ROOT } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const HANDMADE = join(ROOT, "test/fixtures/handmade/terminal");
const TB_RUN = join(HANDMADE, "tb-run/2026-11-28__11-30-00");
const trialOf = (task: string) => join(TB_RUN, task, `${task}.1-of-1.2026-11-28__11-30-00`);
const PROMPT = "root@7d1e0c2b9a4f:/app#";
const OPTIONS = { maxLineBytes: 64 << 20 };

/** `bash -n`: does bash parse this text as complete? */
function bashParses(text: string): boolean {
  // An unterminated here-document is only a warning to bash -n: any message counts as a failure.
  const result = spawnSync("bash", ["-n"], { input: `${text}\n`, encoding: "utf8" });
  return result.status === 0 && result.stderr === "";
}

function files(dir: string, match: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile() && match(path))
    .sort();
}

/** Every trajectory a reader makes of a file, rendered as the terminal normalizer trains on it. */
async function rendered(reader: Reader, path: string): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  for (const item of await collect(reader.read(path, OPTIONS))) {
    if (item.kind !== "trajectory") throw new Error(`${path}: ${JSON.stringify(item)}`);
    out.push(await renderTerminalTrajectory(item.trajectory, new Map()));
  }
  return out;
}

/** The harness's command lines of a trial (commands.txt), to tell them from actions. */
function harnessLines(path: string): string[] {
  const commands = join(path, "..", "commands.txt");
  if (!existsSync(commands)) return [];
  const entries = readFileSync(commands, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => parsePyKeys(line) ?? { list: false, keys: [line] });
  return classifyCommands(entries)
    .filter((sent) => sent.harness)
    .map((sent) => sent.text.replace(/; tmux wait -S done$/, ""));
}

/** Keys sent to a full-screen program (vim's `:wq\r`, less's Space) are not command lines. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: keys are control characters.
const isKeysTurn = (turn: Turn) => /[\r\u0000-\u0008\u000b-\u001f\u007f]/.test(turn.action);

/** Does the observation show the turn's own command line as the shell echoes it, after a prompt? */
function echoes(turn: Turn): boolean {
  const first = turn.action.split("\n")[0] ?? "";
  if (first.trim() === "" || isKeysTurn(turn)) return false;
  // After a prompt only: a command's first output line may equal it (bash prints `exit` as it exits).
  return findEcho(visibleText([turn.observation]), first, 0, false) !== undefined;
}

interface Counts {
  trajectories: number;
  turns: number;
  empty: number;
  harness: number;
  echoed: number;
  examples: string[];
}

function count(trajectories: { path: string; trajectory: Trajectory; harness: string[] }[]): Counts {
  const counts: Counts = { trajectories: 0, turns: 0, empty: 0, harness: 0, echoed: 0, examples: [] };
  for (const { path, trajectory, harness } of trajectories) {
    if (trajectory.meta?.read_filter) continue; // not trained on (filtered/)
    counts.trajectories += 1;
    for (const turn of trajectory.turns) {
      counts.turns += 1;
      const label = `${path.replace(`${ROOT}/`, "")} ${JSON.stringify(turn.action)}`;
      // Nothing sent (an Enter `\r` or a Space sent to a full-screen program is a key, not an empty turn).
      if (/^\n*$/.test(turn.action) || (turn.action.trim() === "" && !/[\r \t]/.test(turn.action))) {
        counts.empty += 1;
        counts.examples.push(`empty: ${label}`);
      }
      if (harness.includes(turn.action) || HARNESS_ACTION.test(turn.action)) {
        counts.harness += 1;
        counts.examples.push(`harness: ${label}`);
      }
      if (echoes(turn)) {
        counts.echoed += 1;
        counts.examples.push(`echoed: ${label} → ${JSON.stringify(turn.observation.slice(0, 120))}`);
      }
    }
  }
  return counts;
}

/** The project's inputs: terminal-bench trials, asciicasts (hand-made, recorded, demo) and tmux logs. */
async function projectTrajectories() {
  const out: { path: string; trajectory: Trajectory; harness: string[] }[] = [];
  const trials = [
    ...files(join(ROOT, "test/fixtures/terminal-bench"), (p) => p.endsWith("results.json")),
    ...files(join(HANDMADE, "tb-run"), (p) => p.endsWith("results.json")),
  ].filter((p) => !/\/\d{4}-\d\d-\d\d__\d\d-\d\d-\d\d\/results\.json$/.test(p)); // a run's own results.json stands for its trials
  for (const path of trials)
    for (const trajectory of await rendered(terminalBenchReader, path)) out.push({ path, trajectory, harness: harnessLines(path) });
  const casts = [
    ...files(HANDMADE, (p) => /\.(cast|v1\.json)$/.test(p) && !p.includes("/tb-run/")),
    ...files(join(ROOT, "test/fixtures/recorded/terminal"), (p) => p.endsWith(".cast")),
    ...files(join(ROOT, "data/demo/terminal"), (p) => p.endsWith(".cast")),
  ];
  for (const path of casts) for (const trajectory of await rendered(asciicastReader, path)) out.push({ path, trajectory, harness: [] });
  for (const path of [join(HANDMADE, "session.tmux.jsonl"), join(ROOT, "data/demo/terminal/session.tmux.jsonl")])
    for (const trajectory of await rendered(tmuxLogReader, path)) out.push({ path, trajectory, harness: [] });
  return out;
}

describe("commands sent whole are split as the shell runs them", () => {
  const SCRIPTS = [
    "cat > notes.txt <<'EOF'\nfirst line\n\n  indented $HOME\nEOF\nwc -l notes.txt",
    "cat <<-EOF | sort\n\tb\n\ta\n\tEOF\necho done",
    "echo 'one\ntwo\nthree' | wc -l\nls",
    'python3 -c "\nimport sys\nprint(sys.argv)\n" a b\npwd',
    "printf '%s|' alpha \\\n  beta \\\n  gamma; echo\n\n\nmkdir -p out\ncd out",
    'for f in a b; do\n  echo "$f"\ndone\nif true; then\n  echo yes\nfi',
    "ls |\n  grep x &&\n  echo found\necho $(\n  date\n)",
    "git commit -m 'subject\n\nbody line'\ngit log -1",
  ];

  it("each command parses whole in bash (bash -n), none is empty, and together they are the script", () => {
    for (const script of SCRIPTS) {
      const commands = splitCommands(script);
      expect(commands.length, script).toBeGreaterThan(1);
      for (const command of commands) {
        expect(command.trim(), script).not.toBe("");
        expect(bashParses(command), command).toBe(true);
      }
      // Nothing lost or reordered (blank lines between commands submit nothing).
      const squeeze = (text: string) => text.replace(/\n(\s*\n)+/g, "\n");
      expect(squeeze(commands.join("\n")), script).toBe(squeeze(script));
    }
  });

  it("negative control: split at every line break (the old reading), commands are cut and empty turns appear", () => {
    let cut = 0;
    let empty = 0;
    for (const script of SCRIPTS)
      for (const line of script.split("\n")) {
        if (line.trim() === "") empty += 1;
        else if (!bashParses(line)) cut += 1;
      }
    expect(cut).toBeGreaterThan(10);
    expect(empty).toBeGreaterThan(0);
  });

  it("an unfinished command at the end is kept whole (sent, not dropped)", () => {
    expect(splitCommands("ls\ncat <<EOF\nno end")).toEqual(["ls", "cat <<EOF\nno end"]);
    expect(splitCommands("echo 'open\nquote")).toEqual(["echo 'open\nquote"]);
  });
});

describe("the recorded sent-whole terminal-bench trial (write-notes)", () => {
  it("one action per command: here-document, multi-line quotes, continuations, a pasted script, no empty turn", async () => {
    const [t] = await rendered(terminalBenchReader, join(trialOf("write-notes"), "results.json"));
    if (!t) throw new Error("no trajectory");
    expect(t.turns.map((turn) => turn.action)).toEqual([
      "cat > notes.txt <<'EOF'\nfirst line\n\n  indented $HOME stays literal\nEOF",
      "echo 'one\ntwo\nthree' | wc -l",
      'python3 -c "\nimport sys\nprint(sys.argv[1:])\n" a b',
      "printf '%s|' alpha \\\n  beta \\\n  gamma; echo",
      "mkdir -p out",
      "cd out",
      "printf 'x\\n' > x.txt",
      "cd ..",
      "wc -l notes.txt out/x.txt",
      'for f in notes.txt out/x.txt; do\n  echo "== $f"\ndone',
    ]);
    expect(t.initialObservation).toBe(PROMPT); // the harness's clear: context, not an action
    expect(t.meta?.terminal_bench).toMatchObject({ harness_turns: 1 });
    // The echo (with bash's `> ` continuation lines) is not observed; the output and the next prompt are.
    expect(t.turns.map((turn) => turn.observation)).toEqual([
      PROMPT,
      `3\n${PROMPT}`,
      `['a', 'b']\n${PROMPT}`,
      `alpha|beta|gamma|\n${PROMPT}`,
      PROMPT,
      PROMPT,
      PROMPT,
      `${PROMPT}\n${PROMPT}\n${PROMPT}`, // the two empty Enters after `cd ..` are no turns: their prompts are its screen
      ` 3 notes.txt\n 1 out/x.txt\n 4 total\n${PROMPT}`,
      `== notes.txt\n== out/x.txt\n${PROMPT}`,
    ]);
  });

  it("the same commands typed key by key give the same actions and the same convention", async () => {
    const [t] = await rendered(asciicastReader, join(HANDMADE, "typed-heredoc.cast"));
    expect(t?.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["cat <<EOF > greeting.txt\nhello\n\nworld\nEOF", PROMPT],
      ["echo 'a\nb' | wc -l", `2\n${PROMPT}\n${PROMPT}`],
      ["cat greeting.txt", `hello\n\nworld\n${PROMPT}`],
    ]);
  });

  it("without a recording the pane is cut at each command's echo", async () => {
    // The same trial read from commands.txt and the panes (as a disable_asciinema task is).
    const { mkdtempSync, cpSync, rmSync } = await import("node:fs");
    const dir = mkdtempSync("/tmp/lwm-sent-whole-");
    cpSync(trialOf("write-notes"), dir, { recursive: true });
    rmSync(join(dir, "sessions"), { recursive: true });
    const [item] = await collect(terminalBenchReader.read(join(dir, "results.json"), OPTIONS));
    if (item?.kind !== "trajectory") throw new Error(JSON.stringify(item));
    const t = item.trajectory;
    expect(t.meta?.terminal_bench).toMatchObject({ turns_from: "commands.txt + panes" });
    expect(t.turns).toHaveLength(10);
    expect(t.turns[0]?.observation).toBe(PROMPT);
    expect(t.turns[1]).toEqual({ action: "echo 'one\ntwo\nthree' | wc -l", observation: `3\n${PROMPT}` });
    expect(t.turns[8]?.observation).toBe(` 3 notes.txt\n 1 out/x.txt\n 4 total\n${PROMPT}`);
    expect(t.turns.filter(echoes)).toEqual([]);
    rmSync(dir, { recursive: true });
  });
});

describe("harness vs agent", () => {
  it("commands.txt: the harness's lists (recording, clear, set-up, install, agent launch, tests, C-d) are not the agent's", () => {
    const entries = readFileSync(join(trialOf("installed-agent"), "commands.txt"), "utf8")
      .trim()
      .split("\n")
      .map((line) => parsePyKeys(line) ?? { list: false, keys: [line] });
    expect(classifyCommands(entries).map((sent) => sent.harness)).toEqual([true, true, true, true, true, true]);
    const notes = readFileSync(join(trialOf("write-notes"), "commands.txt"), "utf8")
      .trim()
      .split("\n")
      .map((line) => parsePyKeys(line) ?? { list: false, keys: [line] });
    expect(classifyCommands(notes).map((sent) => sent.harness)).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      true,
    ]);
  });

  it("a trial where only the harness typed is read with meta.read_filter, its reason saying so", async () => {
    const items = await collect(terminalBenchReader.read(join(trialOf("installed-agent"), "results.json"), OPTIONS));
    expect(items).toHaveLength(1);
    const item = items[0];
    if (item?.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(item.trajectory.meta?.read_filter).toEqual({
      stage: "harness-only",
      reason: expect.stringMatching(/installed-agent\.1-of-1\..*: the agent never typed into the terminal/),
    });
    // Negative control for the harness counter: taken as typed, its turns are all harness commands.
    const asTyped = count([
      {
        path: "installed-agent",
        trajectory: { ...item.trajectory, meta: {} },
        harness: harnessLines(join(trialOf("installed-agent"), "results.json")),
      },
    ]);
    expect(asTyped.harness).toBe(item.trajectory.turns.length);
    expect(asTyped.harness).toBeGreaterThanOrEqual(3);
  });
});

describe("zero empty turns, harness actions and echoed commands", () => {
  it("over the project's terminal-bench, asciicast and tmux fixtures and the demo recordings", async () => {
    const all = await projectTrajectories();
    const counts = count(all);
    expect(counts.trajectories).toBe(14); // 15 read, the harness-only trial filtered
    expect(counts.turns).toBeGreaterThan(80);
    expect(counts.examples).toEqual([]);
    expect([counts.empty, counts.harness, counts.echoed]).toEqual([0, 0, 0]);
  });

  it("negative control: rendered with the echo observed (typing played as output), the counter finds echoes", async () => {
    const trials = [
      join(trialOf("write-notes"), "results.json"),
      join(ROOT, "test/fixtures/terminal-bench/2026-01-15__12-00-00/hello-world/hello-world.1-of-1.2026-01-15__12-00-00/results.json"),
    ];
    let echoed = 0;
    for (const path of trials) {
      const [item] = await collect(terminalBenchReader.read(path, OPTIONS));
      if (item?.kind !== "trajectory") throw new Error(JSON.stringify(item));
      const turns = item.trajectory.turns.map((turn) => {
        const terminal = turn.meta?.terminal as TerminalTurnMeta;
        return { ...turn, meta: { ...turn.meta, terminal: { ...terminal, typing: [], events: [...terminal.typing, ...terminal.events] } } };
      });
      const withEcho = await renderTerminalTrajectory({ ...item.trajectory, turns }, new Map());
      echoed += count([{ path, trajectory: withEcho, harness: [] }]).echoed;
    }
    expect(echoed).toBeGreaterThanOrEqual(10);
  });
});

describeThirdParty("zero empty turns, harness actions and echoed commands on the shared terminal samples", () => {
  it("../shared/fixtures/real/terminal/ (asciinema and the others), read in place", async () => {
    const paths = files(thirdParty("terminal"), (p) => /\.cast$/.test(p));
    expect(paths.length).toBeGreaterThan(0);
    const all: { path: string; trajectory: Trajectory; harness: string[] }[] = [];
    for (const path of paths) for (const trajectory of await rendered(asciicastReader, path)) all.push({ path, trajectory, harness: [] });
    const counts = count(all);
    expect(counts.examples).toEqual([]);
    expect([counts.empty, counts.harness, counts.echoed]).toEqual([0, 0, 0]);
    // Output-only recordings with nothing to cut at are read, and marked for filtered/, not trained on.
    const filtered = all.filter(({ trajectory }) => trajectory.meta?.read_filter);
    for (const { trajectory } of filtered) expect(trajectory.meta?.read_filter).toMatchObject({ stage: "terminal-no-action" });
  });
});
