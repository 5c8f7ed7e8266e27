/**
 * Shell sessions over a small synthetic repository, shared by the swe and terminal domains.
 * The session remembers the files it has shown, so re-reading a file repeats earlier text
 * (history novelty ~0: masked as Boilerplate) while new files and test runs bring new text.
 */
import { fillLines, type Rng } from "../random.ts";
import { cutAt, identifier, isoDate, personName, pythonFile, repoPath, sentence, techWord, word, words } from "../text.ts";

export class ShellSession {
  readonly pkg: string;
  readonly files = new Map<string, string>();
  private readonly rng: Rng;
  constructor(rng: Rng) {
    this.rng = rng;
    this.pkg = `${techWord(rng)}${rng.pick(["", "lib", "py", "kit", "x"])}`;
  }

  newPath(ext = ".py"): string {
    return repoPath(this.rng, this.pkg, ext);
  }

  /** A path already shown, or undefined when none was. */
  knownPath(): string | undefined {
    const paths = [...this.files.keys()];
    return paths.length > 0 ? this.rng.pick(paths) : undefined;
  }

  /** The file's content; a new file gets about `chars` characters. */
  content(path: string, chars: number): string {
    let text = this.files.get(path);
    if (text === undefined) {
      text = pythonFile(this.rng, Math.max(chars, 120));
      this.files.set(path, text);
    }
    return text;
  }

  ls(chars: number): string {
    const rng = this.rng;
    return fillLines(chars, (i) =>
      i === 0
        ? `total ${rng.int(8, 400)}`
        : `${rng.pick(["-rw-r--r--", "drwxr-xr-x", "-rwxr-xr-x"])} ${rng.int(1, 9)} root root ${String(rng.int(61, 99999)).padStart(5)} Jul ${rng.int(10, 28)} 0${rng.int(0, 9)}:${rng.int(10, 59)} ${rng.chance(0.4) ? `${identifier(rng)}.py` : techWord(rng)}`,
    ).join("\n");
  }

  grep(pattern: string, chars: number): string {
    const rng = this.rng;
    return fillLines(chars, () => {
      const path = this.knownPath() ?? this.newPath();
      return `${path}:${rng.int(1, 900)}:    ${rng.chance(0.5) ? `${pattern} = ${identifier(rng)}(${word(rng)})` : `return ${pattern}.${techWord(rng)}()`}`;
    }).join("\n");
  }

  traceback(chars: number): string {
    const rng = this.rng;
    const frames = fillLines(Math.max(chars - 120, 80), () => {
      const path = this.knownPath() ?? this.newPath();
      return `  File "/testbed/${path}", line ${rng.int(5, 700)}, in ${identifier(rng)}\n    ${identifier(rng)} = ${word(rng)}.${techWord(rng)}(${word(rng)})`;
    });
    const error = rng.pick(["ValueError", "TypeError", "KeyError", "AttributeError", "AssertionError"]);
    return ["Traceback (most recent call last):", ...frames, `${error}: ${words(rng, rng.int(3, 9))}`].join("\n");
  }

  pytest(chars: number): string {
    const rng = this.rng;
    const file = `tests/test_${techWord(rng)}.py`;
    const failed = rng.int(0, 3);
    const passed = rng.int(1, 40);
    const head = [
      "============================= test session starts ==============================",
      "platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0",
      "rootdir: /testbed",
      `configfile: ${rng.pick(["pyproject.toml", "setup.cfg", "pytest.ini"])}`,
      `collected ${passed + failed} items`,
      "",
      `${file} ${".".repeat(passed)}${"F".repeat(failed)}${" ".repeat(Math.max(1, 40 - passed - failed))}[100%]`,
    ];
    const body =
      failed > 0
        ? [
            "",
            "=================================== FAILURES ===================================",
            ...fillLines(Math.max(chars - 900, 100), (i) =>
              i % 6 === 0
                ? `____________________ test_${identifier(rng)} ____________________`
                : `>       assert ${identifier(rng)}(${word(rng)}) == ${rng.int(0, 99)}\nE       assert ${rng.int(0, 99)} == ${rng.int(0, 99)}`,
            ),
            "=========================== short test summary info ============================",
            `FAILED ${file}::test_${identifier(rng)} - AssertionError`,
          ]
        : [];
    const tail = `${"=".repeat(20)} ${failed > 0 ? `${failed} failed, ` : ""}${passed} passed in ${(rng.next() * 5).toFixed(2)}s ${"=".repeat(20)}`;
    return [...head, ...body, tail].join("\n");
  }

  gitDiff(chars: number): string {
    const rng = this.rng;
    const path = this.knownPath() ?? this.newPath();
    const lines = this.content(path, chars).split("\n");
    const at = rng.int(0, Math.max(0, lines.length - 8));
    const hunk = fillLines(Math.max(chars - 200, 60), (i) => {
      const line = lines[(at + i) % lines.length] ?? "";
      return i % 5 === 2 ? `-${line}\n+${line.replace(/\w+\(/, `${identifier(rng)}(`)}` : ` ${line}`;
    });
    return [
      `diff --git a/${path} b/${path}`,
      `index ${rng.hex(7)}..${rng.hex(7)} 100644`,
      `--- a/${path}`,
      `+++ b/${path}`,
      `@@ -${at + 1},12 +${at + 1},13 @@`,
      ...hunk,
    ].join("\n");
  }

  log(chars: number): string {
    const rng = this.rng;
    const service = techWord(rng);
    return fillLines(
      chars,
      () =>
        `${isoDate(rng)}Z ${rng.weighted([
          ["INFO", 6],
          ["WARN", 2],
          ["ERROR", 1],
          ["DEBUG", 3],
        ])} [${service}] ${sentence(rng, 4, 12)} id=${rng.hex(8)}`,
    ).join("\n");
  }

  processes(chars: number): string {
    const rng = this.rng;
    return fillLines(chars, (i) =>
      i === 0
        ? "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND"
        : `${rng.pick(["root", "www-data", personName(rng)]).padEnd(8)} ${String(rng.int(1, 65000)).padStart(7)} ${(rng.next() * 20).toFixed(1).padStart(4)} ${(rng.next() * 10).toFixed(1).padStart(4)} ${String(rng.int(1000, 900000)).padStart(6)} ${String(rng.int(100, 90000)).padStart(5)} ?        Ss   Jul${rng.int(10, 28)}   0:0${rng.int(0, 9)} /usr/bin/${techWord(rng)} --${word(rng)}`,
    ).join("\n");
  }

  pipInstall(chars: number): string {
    const rng = this.rng;
    const packages: string[] = [];
    const lines = fillLines(chars - 60, () => {
      const pkg = `${techWord(rng)}-${word(rng)}`;
      const version = `${rng.int(0, 9)}.${rng.int(0, 30)}.${rng.int(0, 9)}`;
      packages.push(`${pkg}-${version}`);
      return `Collecting ${pkg}==${version}\n  Downloading ${pkg.replace("-", "_")}-${version}-py3-none-any.whl (${rng.int(8, 900)} kB)`;
    });
    return [
      ...lines,
      `Installing collected packages: ${packages.slice(0, 6).join(", ")}`,
      `Successfully installed ${packages.join(" ")}`,
    ].join("\n");
  }

  /** Output of running a script: a traceback, or printed values. */
  run(chars: number): string {
    const rng = this.rng;
    if (rng.chance(0.4)) return this.traceback(chars);
    return fillLines(chars, () => `${identifier(rng)}: ${rng.chance(0.5) ? rng.int(0, 100000) : `'${words(rng, rng.int(1, 4))}'`}`).join(
      "\n",
    );
  }

  cut(text: string, chars: number): string {
    return cutAt(text, Math.max(chars, 1));
  }
}
