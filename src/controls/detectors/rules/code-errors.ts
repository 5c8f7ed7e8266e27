/** Failures of code: Python tracebacks, JVM and Node stack traces, compiler errors and test-runner failures. */
import { type Facts, type Hit, hit, lineEndAt, lineStartAt, MAX_MATCHES, matchesOf, toInt, trimSpan } from "./spans.ts";

const TRACEBACK_HEADER = "Traceback (most recent call last):";
const EXCEPTION_LINE = /^([A-Za-z_][\w.]{0,200})(?::|\r?$)/;
const CHAIN_LINE = /^(?:During handling of the above exception|The above exception was the direct cause)/;

/**
 * Python tracebacks: from each `Traceback (most recent call last):` header, the final exception
 * line (`ZeroDivisionError: division by zero`), following chained tracebacks to the last one. A
 * traceback cut off before its exception line is evidenced by its header.
 */
export function pythonTracebacks(text: string): Hit[] {
  const out: Hit[] = [];
  let from = 0;
  while (out.length < MAX_MATCHES) {
    const header = text.indexOf(TRACEBACK_HEADER, from);
    if (header === -1) break;
    const headerLine = lineStartAt(text, header);
    if (text.slice(headerLine, header).trim() !== "") {
      from = header + TRACEBACK_HEADER.length;
      continue;
    }
    let p = lineEndAt(text, header) + 1;
    let final: [number, number, string] | undefined;
    let lines = 0;
    while (p < text.length && lines++ < 5000) {
      const end = lineEndAt(text, p);
      const next = text.indexOf("\n", p);
      const code = text.charCodeAt(p);
      const line = text.slice(p, end);
      if (line.trim() === "" || code === 32 || code === 9) {
        // frames, source lines, carets, blank lines
      } else if (line.startsWith(TRACEBACK_HEADER) || CHAIN_LINE.test(line)) {
        final = undefined;
      } else {
        const m = EXCEPTION_LINE.exec(line);
        if (m) final = [p, end, m[1] ?? ""];
        if (!m || !chainFollows(text, next === -1 ? text.length : next + 1)) break;
      }
      if (next === -1) break;
      p = next + 1;
    }
    if (final) out.push(hit("traceback", text, final[0], final[1], { exception: final[2] }));
    else out.push(hit("traceback", text, header, header + TRACEBACK_HEADER.length));
    from = final ? final[1] : header + TRACEBACK_HEADER.length;
  }
  return out;
}

/** Whether the next non-blank line starts a chained traceback. */
function chainFollows(text: string, from: number): boolean {
  let p = from;
  for (let i = 0; i < 4 && p < text.length; i++) {
    const end = lineEndAt(text, p);
    const line = text.slice(p, end);
    if (line.trim() !== "") return CHAIN_LINE.test(line) || line.startsWith(TRACEBACK_HEADER);
    const next = text.indexOf("\n", p);
    if (next === -1) return false;
    p = next + 1;
  }
  return false;
}

/** JVM and Node stack traces: an exception line followed by an indented `at …` frame. */
const STACK_TRACE =
  /^(?:Exception in thread "[^"\r\n]{0,100}" |Caused by: |Uncaught )?((?:[A-Za-z_$][\w$]{0,80}\.){0,12}(?:[A-Z][\w$]{0,80})?(?:Error|Exception))\b(?: \[[A-Z_]+\])?(?::[^\r\n]{0,1000})?\r?\n[ \t]+at \S/gm;

export function stackTraces(text: string): Hit[] {
  if (!/[ \t]at \S/.test(text)) return [];
  const out: Hit[] = [];
  for (const m of matchesOf(STACK_TRACE, text))
    out.push(hit("traceback", text, m.index, lineEndAt(text, m.index), { exception: m[1] ?? "" }));
  return out;
}

interface CompileRule {
  re: RegExp;
  /** Facts from the match's groups. */
  facts(m: RegExpExecArray): Facts;
  /** The group whose span is the evidence, when not the whole match. */
  group?: number;
}

const COMPILE_RULES: CompileRule[] = [
  // gcc, clang, javac, mypy: `src/main.c:12:5: error: …`, `Main.java:3: error: ';' expected`
  {
    re: /^([^\s:][^:\r\n]{0,300}):(\d+):(?:(\d+):)? (?:fatal )?error: [^\r\n]{0,500}/gm,
    facts: (m) => ({ file: m[1] ?? "", line: toInt(m[2] ?? "0") }),
  },
  // tsc: `src/a.ts(3,7): error TS2322: …` and `src/a.ts:3:7 - error TS2322: …`; pyright's `- error:`
  {
    re: /^([^\s(][^(\r\n]{0,300})\((\d+),\d+\): error (TS\d+): [^\r\n]{0,500}/gm,
    facts: (m) => ({ file: m[1] ?? "", line: toInt(m[2] ?? "0"), code: m[3] ?? "" }),
  },
  {
    re: /^[ \t]*([^\s:][^:\r\n]{0,300}):(\d+):\d+ - error(?: (TS\d+))?: [^\r\n]{0,500}/gm,
    facts: (m): Facts =>
      m[3] ? { file: m[1] ?? "", line: toInt(m[2] ?? "0"), code: m[3] } : { file: m[1] ?? "", line: toInt(m[2] ?? "0") },
  },
  { re: /^error (TS\d+): [^\r\n]{0,500}/gm, facts: (m) => ({ code: m[1] ?? "" }) },
  // rustc: `error[E0308]: mismatched types` + ` --> src/main.rs:4:18`
  {
    re: /^error(?:\[(E\d{4})\])?: [^\r\n]{1,500}\r?\n[ \t]*--> ([^\r\n:]{1,300}):(\d+):\d+/gm,
    facts: (m): Facts =>
      m[1] ? { code: m[1], file: m[2] ?? "", line: toInt(m[3] ?? "0") } : { file: m[2] ?? "", line: toInt(m[3] ?? "0") },
  },
  {
    re: /^error: could not compile `[^`\r\n]{1,200}`[^\r\n]{0,200}/gm,
    facts: (m): Facts => {
      const count = /due to (\d+) previous errors?/.exec(m[0]);
      return count?.[1] ? { errors: toInt(count[1]) } : {};
    },
  },
  // go build: `# pkg` + `./main.go:5:2: undefined: x`
  {
    re: /^# [^\s]{1,200}\r?\n((?:\.\/)?[^\s:]{1,300}\.go):(\d+):\d+: [^\r\n]{1,500}/dgm,
    facts: (m) => ({ file: m[1] ?? "", line: toInt(m[2] ?? "0") }),
    group: 0,
  },
  // the linker
  { re: /^collect2: error: ld returned \d+ exit status\r?$/gm, facts: () => ({}) },
  { re: /^[^\r\n]{0,300}: undefined reference to `[^\r\n]{1,300}/gm, facts: () => ({}) },
];
const COMPILE_GATE = /error|Error|\.go:\d/;
const PY_SYNTAX_ERROR = /^(SyntaxError|IndentationError|TabError): [^\r\n]{0,500}/gm;
const PY_FILE_LINE = /^[ \t]*File "[^"\r\n]{1,500}", line \d+/m;

/** Compiler errors (gcc/clang/javac/tsc/rustc/go/ld) and Python's SyntaxError under its `File "…", line N` frame. */
export function compileErrors(text: string): Hit[] {
  if (!COMPILE_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const rule of COMPILE_RULES) {
    for (const m of matchesOf(rule.re, text)) {
      let start = m.index;
      if (rule.group === 0 && m.indices?.[1]) start = m.indices[1][0];
      out.push(hit("compile_error", text, start, m.index + m[0].length, rule.facts(m)));
    }
  }
  for (const m of matchesOf(PY_SYNTAX_ERROR, text)) {
    const before = text.slice(Math.max(0, m.index - 1200), m.index);
    const recent = before.split("\n").slice(-7).join("\n");
    if (PY_FILE_LINE.test(recent)) out.push(hit("compile_error", text, m.index, m.index + m[0].length, { exception: m[1] ?? "" }));
  }
  return out;
}

interface TestRule {
  re: RegExp;
  counts: boolean;
}

/** Test-runner failures, most telling first: summaries with counts, then a failing test's line, then a bare AssertionError. */
const TEST_RULES: TestRule[] = [
  { re: /^=+ [^=\r\n]{0,300}?\b\d+ (?:failed|errors?)\b[^=\r\n]{0,300} =+\r?$/gm, counts: true }, // pytest
  { re: /^\d+ failed\b(?:, \d+ \w+){0,6}(?: in [\d.]+s)?[^\r\n]{0,60}\r?$/gm, counts: true }, // pytest -q
  { re: /^FAILED \((?:failures|errors)=\d+(?:, [a-z ]+=\d+){0,4}\)\r?$/gm, counts: true }, // unittest
  { re: /^Tests:[ \t]+[^\r\n]{0,100}?\b\d+ failed\b[^\r\n]{0,200}/gm, counts: true }, // jest
  { re: /^[ \t]*Tests[ \t]+\d+ failed\b[^\r\n]{0,200}/gm, counts: true }, // vitest
  { re: /^test result: FAILED\.[^\r\n]{0,300}/gm, counts: true }, // cargo test
  { re: /^[ \t]*\d+ failing\r?$/gm, counts: true }, // mocha
  { re: /^FAILED [^\s:]{1,300}::[^\r\n]{0,500}/gm, counts: false }, // pytest's short summary line
  { re: /^(?:FAIL|ERROR): \w+ \([^\r\n)]{1,300}\)[^\r\n]{0,100}/gm, counts: false }, // unittest
  { re: /^--- FAIL: [^\r\n]{1,300}/gm, counts: false }, // go test
  { re: /^FAIL[ \t]+\S+[ \t]+[\d.]+s\r?$/gm, counts: false }, // go test's package line
  { re: /^[ \t]*FAIL[ \t]+\S+\.(?:test|spec)\.[cm]?[jt]sx?\b[^\r\n]{0,300}/gm, counts: false }, // jest/vitest file line
  { re: /^AssertionError\b(?::[^\r\n]{0,500})?/gm, counts: false },
];
const TEST_GATE = /failed|FAIL|failing|AssertionError|ERROR: /;

function testCounts(evidence: string): Facts {
  const facts: Facts = {};
  const failed = /(?:\b(\d+) failed\b|failures=(\d+)|\b(\d+) failing\b)/.exec(evidence);
  if (failed) facts.failed = toInt(failed[1] ?? failed[2] ?? failed[3] ?? "0");
  const passed = /\b(\d+) passed\b/.exec(evidence);
  if (passed) facts.passed = toInt(passed[1] ?? "0");
  const errors = /(?:\b(\d+) errors?\b|errors=(\d+))/.exec(evidence);
  if (errors) facts.errors = toInt(errors[1] ?? errors[2] ?? "0");
  return facts;
}

/** One test_failure per observation: the first rule of TEST_RULES that matches (a run is one event). */
export function testFailures(text: string): Hit[] {
  if (!TEST_GATE.test(text)) return [];
  for (const rule of TEST_RULES) {
    rule.re.lastIndex = 0;
    const m = rule.re.exec(text);
    rule.re.lastIndex = 0;
    if (m === null) continue;
    const [s, e] = trimSpan(text, m.index, m.index + m[0].length);
    return [hit("test_failure", text, s, e, rule.counts ? testCounts(text.slice(s, e)) : undefined)];
  }
  return [];
}
