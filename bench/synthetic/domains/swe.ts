/**
 * SWE trajectories in the mini-swe-agent layout of data/demo/swe.jsonl.zst: a GitHub issue as
 * task, bash commands as actions, `<returncode>N</returncode>\n<output>…</output>` observations,
 * the agent's reasoning in `turns[].meta.agent_thought` (read, never tokenized).
 */
import type { CanonicalRecord, DomainParams } from "../params.ts";
import type { Rng } from "../random.ts";
import { className, identifier, paragraph, pythonFile, sentence, techWord, words } from "../text.ts";
import { ShellSession } from "./shell.ts";

// The fixed instruction block mini-swe-agent appends to every task (repeated in every record).
const WORKFLOW = `You can execute bash commands and edit files to implement the necessary changes.

## Recommended Workflow
1. Analyze the codebase by finding and reading relevant files
2. Create a script to reproduce the issue
3. Edit the source code to resolve the issue
4. Verify your fix works by running your script again
5. Test edge cases to ensure your fix is robust

## Important Rules
1. Every response must contain exactly one action
2. The action must be enclosed in triple backticks
3. Directory or environment variable changes are not persistent. Every action is executed in a new subshell.
   However, you can prefix any action with \`MY_ENV_VAR=MY_VALUE cd /path/to/working/dir && ...\` or write/load environment variables from files

When you've completed your work (reading, editing, testing), and cannot make further progress
issue exactly the following command:

\`\`\`bash
echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached
\`\`\``;

function issue(rng: Rng, shell: ShellSession, chars: number): string {
  const parts = [`Please solve this issue: ${className(rng)} ${words(rng, rng.int(3, 7))} when ${words(rng, rng.int(2, 5))}`, ""];
  let length = WORKFLOW.length;
  while (length < chars) {
    const part = rng.weighted([
      [paragraph(rng), 3],
      [`\`\`\`python\n${pythonFile(rng, rng.int(150, 500)).split("\n").slice(4).join("\n")}\`\`\``, 1],
      [`\`\`\`\n${shell.traceback(rng.int(200, 600))}\n\`\`\``, 1],
    ]);
    parts.push(part, "");
    length += part.length + 2;
  }
  return `${parts.join("\n")}\n${WORKFLOW}`;
}

const wrap = (code: number, output: string) => `<returncode>${code}</returncode>\n<output>\n${output}${output ? "\n" : ""}</output>`;

function turn(rng: Rng, shell: ShellSession, p: DomainParams, last: boolean): CanonicalRecord["turns"][number] {
  const thought = { agent_thought: `${sentence(rng, 6, 20)} ${rng.chance(0.5) ? sentence(rng, 6, 16) : ""}`.trim() };
  const actionChars = rng.quantiles(p.action);
  const chars = rng.quantiles(p.observation) - 45; // the wrapper is ~45 characters
  if (last)
    return {
      action: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
      observation: wrap(0, `COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n${shell.gitDiff(chars)}`),
      meta: thought,
    };
  if (actionChars > 300) {
    // Long actions carry code: a heredoc file write (empty output) or an inline script run.
    const body = pythonFile(rng, actionChars - 40);
    if (rng.chance(0.65))
      return { action: `python - <<'EOF'\n${body}EOF`, observation: wrap(rng.chance(0.4) ? 1 : 0, shell.run(chars)), meta: thought };
    const path = rng.chance(0.5) ? "reproduce_issue.py" : shell.newPath();
    shell.files.set(path, body);
    return { action: `cat <<'EOF' > ${path}\n${body}EOF`, observation: wrap(0, ""), meta: thought };
  }
  const known = shell.knownPath();
  const cd = rng.chance(0.7) ? "cd /testbed && " : "";
  if (actionChars > 110 && rng.chance(0.5)) {
    // One-liners sized like the measured mid-length actions.
    const call = `from ${shell.pkg}.${techWord(rng)} import ${identifier(rng)}; print(${identifier(rng)}(${words(rng, Math.max(1, Math.round((actionChars - 90) / 7))).replace(/ /g, ", ")}))`;
    return { action: `${cd}python -c "${call}"`, observation: wrap(rng.chance(0.3) ? 1 : 0, shell.run(chars)), meta: thought };
  }
  const kind = rng.weighted([
    ["cat", 5],
    ["reread", known ? 2 : 0],
    ["nl", 2],
    ["grep", 2],
    ["ls", 1],
    ["find", 1],
    ["sed", 1],
    ["run", 2],
    ["pytest", 1],
    ["diff", 1],
  ] as const);
  const path = kind === "reread" && known ? known : shell.newPath();
  switch (kind) {
    case "cat":
    case "reread":
      return { action: `${cd}cat ${path}`, observation: wrap(0, shell.cut(shell.content(path, chars), chars)), meta: thought };
    case "nl": {
      const from = rng.int(1, 200);
      const lines = shell.content(path, chars).split("\n");
      const shown = lines.map((line, i) => `${String(i + from).padStart(6)}\t${line}`).join("\n");
      return {
        action: `${cd}nl -ba ${path} | sed -n '${from},${from + 60}p'`,
        observation: wrap(0, shell.cut(shown, chars)),
        meta: thought,
      };
    }
    case "grep": {
      const name = identifier(rng);
      return {
        action: `${cd}grep -rn "${name}" ${shell.pkg}/ --include=*.py | head -50`,
        observation: wrap(0, shell.grep(name, chars)),
        meta: thought,
      };
    }
    case "ls":
      return { action: `${cd}ls -la ${rng.chance(0.5) ? shell.pkg : "tests/"}`, observation: wrap(0, shell.ls(chars)), meta: thought };
    case "find":
      return {
        action: `${cd}find . -name "*.py" -path "*${shell.pkg}*" | head -40`,
        observation: wrap(0, Array.from({ length: Math.max(1, Math.round(chars / 30)) }, () => `./${shell.newPath()}`).join("\n")),
        meta: thought,
      };
    case "sed":
      return { action: `${cd}sed -i 's/${identifier(rng)}(/${identifier(rng)}(/g' ${path}`, observation: wrap(0, ""), meta: thought };
    case "run":
      return { action: `${cd}python reproduce_issue.py`, observation: wrap(rng.chance(0.5) ? 1 : 0, shell.run(chars)), meta: thought };
    case "pytest":
      return {
        action: `${cd}python -m pytest tests/ -x -q 2>&1 | tail -80`,
        observation: wrap(rng.chance(0.4) ? 1 : 0, shell.cut(shell.pytest(chars), chars + 400)),
        meta: thought,
      };
    default:
      return { action: `${cd}git diff`, observation: wrap(0, shell.gitDiff(chars)), meta: thought };
  }
}

export function sweTrajectory(rng: Rng, id: string, p: DomainParams): CanonicalRecord {
  const shell = new ShellSession(rng);
  const task = issue(rng, shell, rng.quantiles(p.task));
  const n = rng.quantiles(p.turns);
  const turns = Array.from({ length: n }, (_, i) => turn(rng, shell, p, i === n - 1 && n > 2));
  return { id, domain: "swe", task, turns, meta: { generator: "lwm-data bench/synthetic", layout: "mini-swe-agent" } };
}
