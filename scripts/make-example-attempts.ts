/**
 * Writes data/examples/attempts.jsonl: a small generated corpus of repeated agent attempts at the
 * same tasks, in canonical JSONL, for the selection example (configs/select-resolved.yaml): SWE
 * and terminal tasks, several attempts each by three agents, resolved or not, of varying length,
 * with one exact repeat (dedup) and one attempt whose turns are a benchmark item's
 * (data/examples/benchmark.jsonl, decontamination). Deterministic: rerunning writes the same bytes.
 *
 *   node scripts/make-example-attempts.ts
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const OUT = fileURLToPath(new URL("../data/examples/", import.meta.url));

/** A tiny seeded generator (mulberry32), so the corpus never depends on Math.random. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  "buffer cursor token parser branch commit module handler request response config cache index shard worker queue signal stream socket header payload schema column filter window offset record vector matrix kernel thread mutex channel router session cookie domain bucket ledger pointer symbol lexer reducer iterator promise callback adapter factory proxy bridge gateway".split(
    " ",
  );

/** A line of plausible, attempt-specific text: agents' runs differ in what they read and print. */
function prose(rand: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(" ");
}

interface Turn {
  action: string;
  observation: string;
}

const SWE_TASKS = [
  { id: "textutil__slugify-12", file: "textutil/slug.py", test: "tests/test_slug.py", fn: "slugify", bug: "punctuation is kept in slugs" },
  {
    id: "stats__median-7",
    file: "stats/core.py",
    test: "tests/test_core.py",
    fn: "median",
    bug: "median() is wrong for even-length lists",
  },
  {
    id: "dates__parse-31",
    file: "dates/parse.py",
    test: "tests/test_parse.py",
    fn: "parse_date",
    bug: "ISO dates with a trailing Z are refused",
  },
];
const TERMINAL_TASKS = [
  { id: "terminal-bench/count-errors", goal: "count the ERROR lines in /var/log/app.log and write the number to /tmp/errors.txt" },
  { id: "terminal-bench/disk-usage", goal: "write the three largest folders under /srv to /tmp/largest.txt" },
];
const AGENTS = ["openhands", "swe-agent", "terminus-2"];

function sweAttempt(task: (typeof SWE_TASKS)[number], attempt: number, rand: () => number): { turns: Turn[]; resolved: boolean } {
  const explore = 1 + Math.floor(rand() * 4);
  const turns: Turn[] = [
    {
      action: `grep -rn "${task.fn}" --include=*.py . | head -${3 + attempt}`,
      observation: Array.from({ length: 3 + attempt }, (_, n) => `./${task.file}:${10 + n * 7}: ${prose(rand, 7)}`).join("\n"),
    },
  ];
  for (let i = 0; i < explore; i++)
    turns.push({
      action: `sed -n ${1 + i * 20},${20 + i * 20}p ${task.file}`,
      observation: Array.from({ length: 6 }, (_, line) => `${1 + i * 20 + line}:     ${prose(rand, 6)}`).join("\n"),
    });
  const resolved = rand() < 0.55;
  turns.push({
    action: `python -m pytest -q ${task.test} -k ${prose(rand, 1)}`,
    observation: `F.\nFAILED ${task.test}::test_${task.fn} - AssertionError: ${task.bug}: ${prose(rand, 8)}\n1 failed, 1 passed in 0.${attempt}4s`,
  });
  turns.push({
    action: `apply_patch ${task.file} <<'EOF'\n${prose(rand, 10)}\nEOF`,
    observation: `patched ${task.file}: 1 hunk, ${2 + attempt} lines changed (${prose(rand, 4)})`,
  });
  turns.push({
    action: `python -m pytest -q ${task.test}`,
    observation: resolved
      ? `..\n2 passed in 0.${attempt}1s`
      : `F.\nFAILED ${task.test}::test_${task.fn} - AssertionError: ${task.bug} (still)\n1 failed, 1 passed in 0.${attempt}2s`,
  });
  return { turns, resolved };
}

function terminalAttempt(task: (typeof TERMINAL_TASKS)[number], attempt: number, rand: () => number): { turns: Turn[]; resolved: boolean } {
  const resolved = rand() < 0.6;
  const turns: Turn[] = [
    {
      action: `# ${task.goal}\nls -la /var/log /srv`,
      observation: `/var/log:\n-rw-r--r-- 1 root root ${40_000 + attempt * 17} app.log\n\n/srv:\ndrwxr-xr-x 4 root root 4096 api\ndrwxr-xr-x 2 root root 4096 web`,
    },
  ];
  const steps = 1 + Math.floor(rand() * 3);
  for (let i = 0; i < steps; i++)
    turns.push({
      action: `sed -n ${1 + i * 40},${6 + i * 40}p /var/log/app.log`,
      observation: Array.from(
        { length: 6 },
        (_, n) => `2026-01-0${1 + (n % 9)} 10:${10 + n}:00 ${rand() < 0.3 ? "ERROR" : "INFO"} ${prose(rand, 6)}`,
      ).join("\n"),
    });
  turns.push({
    action: resolved
      ? "grep -c ERROR /var/log/app.log > /tmp/errors.txt && cat /tmp/errors.txt"
      : "grep ERROR /var/log/app.log | wc > /tmp/errors.txt && cat /tmp/errors.txt",
    observation: resolved ? `${41 + attempt}` : `     ${41 + attempt}     ${300 + attempt}    ${4100 + attempt}`,
  });
  return { turns, resolved };
}

const rand = random(2026);
const lines: string[] = [];
let repeat: string | undefined;
for (const task of SWE_TASKS)
  for (let attempt = 1; attempt <= 8; attempt++) {
    const agent = AGENTS[(attempt + task.id.length) % 2] as string;
    const { turns, resolved } = sweAttempt(task, attempt, rand);
    const line = JSON.stringify({
      id: `${task.id}__${agent}__${attempt}`,
      domain: "swe",
      task: `Fix: ${task.bug} (${task.file}).`,
      turns,
      meta: { task_id: task.id, attempt, agent, model: "example-model", outcome: { resolved } },
    });
    lines.push(line);
    if (attempt === 1 && task === SWE_TASKS[0]) repeat = line.replace(`__${attempt}"`, `__${attempt}-rerun"`);
  }
for (const task of TERMINAL_TASKS)
  for (let attempt = 1; attempt <= 5; attempt++) {
    const { turns, resolved } = terminalAttempt(task, attempt, rand);
    lines.push(
      JSON.stringify({
        id: `${task.id.replace("/", "__")}__terminus-2__${attempt}`,
        domain: "terminal",
        task: task.goal,
        turns,
        meta: {
          task_id: task.id,
          attempt,
          agent: "terminus-2",
          model: "example-model",
          outcome: { success: resolved, reward: resolved ? 1 : 0 },
        },
      }),
    );
  }
// The same attempt submitted twice (a harness retry): exact duplicate removal keeps the first.
if (repeat) lines.push(repeat);
writeFileSync(`${OUT}attempts.jsonl`, `${lines.join("\n")}\n`);

// A benchmark item whose turns are one attempt's: decontamination removes that attempt.
const leaked = JSON.parse(lines[7] as string) as { task: string; turns: Turn[] };
writeFileSync(
  `${OUT}benchmark.jsonl`,
  `${JSON.stringify({ id: "bench-item-1", domain: "swe", task: leaked.task, turns: leaked.turns })}\n`,
);
console.log(`wrote ${lines.length} attempts to ${OUT}attempts.jsonl and 1 benchmark item to ${OUT}benchmark.jsonl`);
