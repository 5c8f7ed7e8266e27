/**
 * Interactive terminal sessions as text (what the terminal showed, the form the terminal
 * normalizer produces from a recording): a typed command, then its output. Includes the turns
 * that masking must catch: silent commands (cd, mkdir), echoes, and repeated `git status`.
 */
import type { CanonicalRecord, DomainParams } from "../params.ts";
import type { Rng } from "../random.ts";
import { fillLines } from "../random.ts";
import { identifier, sentence, techWord, word, words } from "../text.ts";
import { ShellSession } from "./shell.ts";

function configFile(rng: Rng, chars: number): string {
  return fillLines(chars, (i) =>
    i % 7 === 0 ? `[${techWord(rng)}]` : `${identifier(rng)} = ${rng.chance(0.5) ? rng.int(0, 9000) : `"${words(rng, rng.int(1, 3))}"`}`,
  ).join("\n");
}

function turn(rng: Rng, shell: ShellSession, p: DomainParams, status: string): CanonicalRecord["turns"][number] {
  const chars = rng.quantiles(p.observation);
  const kind = rng.weighted([
    ["ls", 3],
    ["cat", 3],
    ["log", 2],
    ["ps", 1],
    ["pip", 1],
    ["make", 1],
    ["status", 2],
    ["silent", 2],
    ["echo", 1],
    ["df", 1],
  ] as const);
  switch (kind) {
    case "ls":
      return { action: `ls -la ${rng.chance(0.5) ? shell.pkg : ""}`.trim(), observation: shell.ls(chars) };
    case "cat": {
      const path = rng.chance(0.5) ? `${techWord(rng)}.toml` : shell.newPath(rng.pick([".cfg", ".ini", ".env"]));
      // Now and then a config holds a credential, as real ones do: the redaction pass has work.
      const secret = rng.chance(0.1) ? `\nAWS_ACCESS_KEY_ID=AKIA${rng.hex(16).toUpperCase()}\nGITHUB_TOKEN=ghp_${rng.hex(36)}` : "";
      return { action: `cat ${path}`, observation: shell.cut(configFile(rng, chars), chars) + secret };
    }
    case "log":
      return { action: `tail -n ${rng.int(20, 200)} /var/log/${techWord(rng)}.log`, observation: shell.log(chars) };
    case "ps":
      return { action: rng.pick(["ps aux", "ps aux | head -40", "ps -ef | grep python"]), observation: shell.processes(chars) };
    case "pip":
      return { action: `pip install -r requirements.txt`, observation: shell.pipInstall(chars) };
    case "make":
      return {
        action: rng.pick(["make", "make -j2", "npm run build", "cargo build"]),
        observation: fillLines(chars, () => `gcc -O2 -Wall -c src/${techWord(rng)}.c -o build/${techWord(rng)}.o`).join("\n"),
      };
    case "status":
      return { action: "git status", observation: status };
    case "silent":
      return {
        action: rng.pick([
          `cd ${shell.pkg}`,
          `mkdir -p build/${word(rng)}`,
          `export ${techWord(rng).toUpperCase()}_HOME=/opt/${word(rng)}`,
          "cd ..",
        ]),
        observation: "",
      };
    case "echo": {
      const text = sentence(rng, 2, 8);
      return { action: `echo "${text}"`, observation: text };
    }
    default:
      return {
        action: "df -h",
        observation: [
          "Filesystem      Size  Used Avail Use% Mounted on",
          ...Array.from(
            { length: rng.int(3, 9) },
            () =>
              `/dev/sd${rng.pick(["a", "b", "c"])}${rng.int(1, 4)}       ${rng.int(10, 900)}G  ${rng.int(1, 500)}G  ${rng.int(1, 400)}G  ${rng.int(1, 99)}% /${word(rng)}`,
          ),
        ].join("\n"),
      };
  }
}

export function terminalTrajectory(rng: Rng, id: string, p: DomainParams): CanonicalRecord {
  const shell = new ShellSession(rng);
  // One `git status` text per session: asking twice shows the same screen.
  const status = `On branch ${rng.pick(["main", "dev", `fix/${identifier(rng)}`])}\nChanges not staged for commit:\n  (use "git add <file>..." to update what will be committed)\n\tmodified:   ${shell.newPath()}\n\nno changes added to commit (use "git add" and/or "git commit -a")`;
  const taskChars = rng.quantiles(p.task);
  const turns = Array.from({ length: rng.quantiles(p.turns) }, () => turn(rng, shell, p, status));
  return {
    id,
    domain: "terminal",
    ...(taskChars >= 20 ? { task: sentence(rng, Math.max(3, Math.round(taskChars / 7)), Math.max(4, Math.round(taskChars / 5))) } : {}),
    turns,
    meta: { generator: "lwm-data bench/synthetic", shell: "bash", cols: 120, rows: 40 },
  };
}
