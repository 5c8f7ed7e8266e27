/**
 * Edge-case detectors (issue 24, part 1): each domain's rules on realistic observations written
 * from the tools' documented output formats (true and false positives), the person-checked table
 * (test/fixtures/controls/labelled-turns.jsonl) with its agreement rate, and the code-point
 * offsets of every span.
 *
 * The table: one turn a line, `{domain, turn: {action, observation, previousObservation?},
 * expected, note}` for hand-made turns, or `{domain, source: {path | real, id?, turn, action},
 * expected, note}` for a turn of the demo data (`path`, under the repository) or of the
 * third-party samples (`real`, under ../shared/fixtures/real): those are read and normalized by
 * the pipeline's own readers and normalizer here, and `action` is a piece of the turn's action
 * that guards against comparing the wrong turn. Rows of third-party samples count only when the
 * samples are present. The expected labels were decided by reading each turn, before the
 * detectors' answers were looked at; `note` says why.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { CONTROL_LABELS, type ControlLabel, type ControlLabelName } from "../src/controls/control-label.ts";
import { DOMAIN_DETECTORS, detectControls, SCAN_WINDOW } from "../src/controls/detect-controls.ts";
import { freshOutputStart } from "../src/controls/detectors/terminal.ts";
import { type Domain, isDomain, type Trajectory } from "../src/core/trajectory.ts";
import { normalizeTrajectory } from "../src/normalize/normalize-trajectory.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { collect, ROOT, writeConfig } from "./helpers.ts";
import { describeThirdParty, haveThirdParty, THIRD_PARTY_DIR } from "./third-party/support.ts";

const TABLE = join(ROOT, "test/fixtures/controls/labelled-turns.jsonl");
const AGREEMENT_TARGET = 0.9;

/** A one-turn trajectory, as the normalizers would hand it over. */
function single(domain: Domain, action: string, observation: string, previousObservation?: string): Trajectory {
  return {
    id: "t",
    domain,
    source: { uri: "mem", format: "test" },
    initialObservation: previousObservation,
    turns: [{ action, observation }],
  };
}

function detect(domain: Domain, action: string, observation: string, previousObservation?: string): ControlLabel[] {
  return detectControls(single(domain, action, observation, previousObservation));
}

function labelsOf(labels: ControlLabel[]): ControlLabelName[] {
  return [...new Set(labels.map((l) => l.label))].sort();
}

function only(labels: ControlLabel[], name: ControlLabelName): ControlLabel {
  const found = labels.filter((l) => l.label === name);
  expect(found, `${name} in ${JSON.stringify(labels)}`).toHaveLength(1);
  return found[0] as ControlLabel;
}

/** Python's `observation[start:end]`: a slice by code points. */
function codePointSlice(text: string, start: number, end: number): string {
  return Array.from(text).slice(start, end).join("");
}

describe("terminal", () => {
  it("reads curl -i's 429 with its Retry-After header, and an OOM kill", () => {
    const observation = "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 30\r\n\r\n{}\n";
    const label = only(detect("terminal", "curl -i https://api.example.test/v1/items", observation), "rate_limit");
    expect(label.evidence).toBe("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 30");
    expect(label.facts).toEqual({ status: 429, retry_after: "30" });
    const oom = detect("terminal", "python train.py", "Epoch 1/50\nKilled\ndemo@lwm:~$");
    expect(only(oom, "killed").evidence).toBe("Killed");
  });

  it("reads the shell's missing files and commands, permissions, full disks, timeouts", () => {
    const cases: [string, string, ControlLabelName, string][] = [
      ["cat notes.md", "cat: notes.md: No such file or directory", "not_found", "cat: notes.md: No such file or directory"],
      ["ponyc x.pony", "bash: ponyc: command not found", "not_found", "bash: ponyc: command not found"],
      ["./run.sh", "/bin/sh: 1: ./run.sh: Permission denied", "permission_denied", "/bin/sh: 1: ./run.sh: Permission denied"],
      [
        "cp big.iso /mnt/usb/",
        "cp: error writing '/mnt/usb/big.iso': No space left on device",
        "disk_full",
        "cp: error writing '/mnt/usb/big.iso': No space left on device",
      ],
      [
        "curl -m 5 https://slow.example.test",
        "curl: (28) Operation timed out after 5001 milliseconds with 0 bytes received",
        "timeout",
        "curl: (28) Operation timed out after 5001 milliseconds with 0 bytes received",
      ],
    ];
    for (const [action, observation, name, evidence] of cases) {
      const labels = detect("terminal", action, `${observation}\ndemo@lwm:~/work$`);
      expect(labelsOf(labels), action).toEqual([name]);
      expect(only(labels, name).evidence).toBe(evidence);
    }
    expect(only(detect("terminal", "ponyc x.pony", "bash: ponyc: command not found"), "not_found").facts).toEqual({ command: "ponyc" });
    // facts an instruction may state, each read from the evidence
    expect(only(detect("terminal", "./run.sh", "bash: ./run.sh: Permission denied"), "permission_denied").facts).toEqual({
      path: "./run.sh",
    });
    const readTimeout = "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='x', port=443): Read timed out. (read timeout=30)";
    expect(only(detect("terminal", "python fetch.py", readTimeout), "timeout").facts).toEqual({ seconds: 30 });
    expect(only(detect("terminal", "go run .", "signal: killed"), "killed").facts).toBeUndefined();
    expect(only(detect("terminal", "kubectl logs x", "Error: container terminated by signal SIGKILL"), "killed").facts).toEqual({
      signal: "SIGKILL",
    });
  });

  it("does not label a file's content: cat, sed -n, head of source code and logs", () => {
    const source = 'class TimeoutError(Exception):\n    """Connection timed out."""\n\nraise PermissionError("Permission denied")\n';
    const log =
      '2026-01-15 ERROR job failed\nTraceback (most recent call last):\n  File "w.py", line 3, in run\nOSError: [Errno 28] No space left on device\nKilled\n';
    for (const action of [
      "cat errors.py",
      "sed -n '1,40p' errors.py",
      "head -50 errors.py",
      "cd src && cat -n errors.py",
      "cat errors.py | head -20",
    ]) {
      expect(detect("terminal", action, source), action).toEqual([]);
      expect(detect("terminal", action, log), action).toEqual([]);
    }
    // … but the viewer's own complaint is the environment's answer
    expect(labelsOf(detect("terminal", "cat errors.py", "cat: errors.py: Permission denied"))).toEqual(["permission_denied"]);
    // a program's own log lines are not events either
    expect(
      detect("terminal", "python app.py", "12:00:01 ERROR upstream returned no data; will retry\n12:00:02 INFO done (timeout=30s)\n"),
    ).toEqual([]);
  });

  it("reads only what a pane capture added since the previous turn", () => {
    const previous = "demo@lwm:~$ cat /etc/shadow\ncat: /etc/shadow: Permission denied\ndemo@lwm:~$";
    const observation = `${previous} ls\na.txt\ndemo@lwm:~$`;
    expect(freshOutputStart(observation, previous, "ls")).toBe(previous.lastIndexOf("demo@lwm"));
    expect(detect("terminal", "ls", observation, previous)).toEqual([]);
    // a recording's per-command output that happens to repeat the previous one is read in full
    const again = "cat: x: No such file or directory\ndemo@lwm:~$";
    expect(labelsOf(detect("terminal", "cat x", again, again))).toEqual(["not_found"]);
  });

  it("reads compiler errors: tsc, gcc, rustc, go", () => {
    const tsc = detect("terminal", "npx tsc --noEmit", "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n");
    expect(only(tsc, "compile_error").facts).toEqual({ file: "src/a.ts", line: 3, code: "TS2322" });
    const gcc = detect("terminal", "gcc main.c", "main.c: In function 'main':\nmain.c:12:5: error: expected ';' before 'return'\n");
    expect(only(gcc, "compile_error").evidence).toBe("main.c:12:5: error: expected ';' before 'return'");
    const rustc = detect("terminal", "cargo build", "error[E0308]: mismatched types\n  --> src/main.rs:4:18\n   |\n");
    expect(only(rustc, "compile_error").facts).toEqual({ code: "E0308", file: "src/main.rs", line: 4 });
    const go = detect("terminal", "go build ./...", "# example.com/app\n./main.go:5:2: undefined: fmtx\n");
    expect(only(go, "compile_error").evidence).toBe("./main.go:5:2: undefined: fmtx");
    // a grep for "error:" through sources is content
    expect(detect("terminal", 'grep -rn "error:" src', 'src/log.c:12: error: fprintf(stderr, "error: %s");\n')).toEqual([]);
  });
});

describe("swe", () => {
  it("reads a Python traceback's final exception line and the harness's exit code", () => {
    const observation =
      '<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File "<string>", line 1, in <module>\n  File "/testbed/m.py", line 5, in division\n    return a/b\n           ~^~\nZeroDivisionError: division by zero\n</output>';
    const labels = detect("swe", 'python3 -c "from m import division; division(1, 0)"', observation);
    expect(labelsOf(labels)).toEqual(["nonzero_exit", "traceback"]);
    expect(only(labels, "traceback").evidence).toBe("ZeroDivisionError: division by zero");
    expect(only(labels, "traceback").facts).toEqual({ exception: "ZeroDivisionError" });
    expect(only(labels, "nonzero_exit")).toMatchObject({ evidence: "<returncode>1</returncode>", facts: { exit_code: 1 } });
  });

  it("follows a chained traceback to its last exception", () => {
    const observation = [
      "Traceback (most recent call last):",
      '  File "a.py", line 2, in <module>',
      "    open('x')",
      "FileNotFoundError: [Errno 2] No such file or directory: 'x'",
      "",
      "During handling of the above exception, another exception occurred:",
      "",
      "Traceback (most recent call last):",
      '  File "a.py", line 4, in <module>',
      "    raise RuntimeError('config missing')",
      "RuntimeError: config missing",
    ].join("\n");
    const labels = detect("swe", "python a.py", observation);
    expect(only(labels, "traceback").evidence).toBe("RuntimeError: config missing");
    expect(labelsOf(labels)).toEqual(["not_found", "traceback"]);
  });

  it("reads test runners: pytest, unittest, jest, go test, cargo test", () => {
    const runs: [string, string, Record<string, number> | undefined][] = [
      [
        "pytest",
        "FAILED tests/test_a.py::test_x - assert 1 == 2\n========= 1 failed, 4 passed in 0.21s =========",
        { failed: 1, passed: 4 },
      ],
      ["python -m unittest", "Ran 3 tests in 0.001s\n\nFAILED (failures=2, errors=1)", { failed: 2, errors: 1 }],
      ["npx jest", "Tests:       2 failed, 7 passed, 9 total\nSnapshots:   0 total", { failed: 2, passed: 7 }],
      ["go test ./...", "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 3, want 4\nFAIL\nFAIL\texample.com/p\t0.004s", undefined],
      ["cargo test", "test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out", { failed: 1, passed: 3 }],
    ];
    for (const [action, observation, facts] of runs) {
      const labels = detect("swe", action, observation);
      expect(labelsOf(labels), action).toEqual(["test_failure"]);
      expect(only(labels, "test_failure").facts, action).toEqual(facts);
    }
    expect(detect("swe", "pytest", "========= 12 passed in 0.80s =========")).toEqual([]);
  });

  it("reads the harnesses' own reports: lint refusals, missing paths, timeouts, OpenHands exit codes", () => {
    const lint =
      "Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit commmand.\n\nERRORS:\n- E999 SyntaxError: unmatched ']'\n\nThis is how your edit would have looked if applied";
    expect(only(detect("swe", "edit 287:295", lint), "compile_error")).toMatchObject({
      evidence: "- E999 SyntaxError: unmatched ']'",
      facts: { lint_code: "E999" },
    });
    const missing = detect(
      "swe",
      "<function=str_replace_editor>\n<parameter=command>view</parameter>",
      "The path /testbed/nope.py does not exist. Please provide a valid path.",
    );
    expect(labelsOf(missing)).toEqual(["not_found"]);
    const openhands = detect("swe", "python -m pytest", "bash: pytest: command not found\n[The command completed with exit code 127.]");
    expect(labelsOf(openhands)).toEqual(["nonzero_exit", "not_found"]);
    expect(only(openhands, "nonzero_exit").facts).toEqual({ exit_code: 127 });
    const timedOut = detect("swe", "timeout 10 python slow.py", "<returncode>124</returncode>\n<output>\n</output>");
    expect(labelsOf(timedOut)).toEqual(["nonzero_exit", "timeout"]);
    expect(detect("swe", "ls", "[exit code 0, no output]")).toEqual([]);
  });

  it("does not label source shown by the agents' editors", () => {
    const view =
      "Here's the result of running `cat -n` on /testbed/errors.py:\n     1\tclass TimeoutError(Exception):\n     2\t    pass\n     3\traise PermissionError('Permission denied')\n";
    expect(detect("swe", "<function=str_replace_editor>\n<parameter=command>view</parameter>\n</function>", view)).toEqual([]);
    const open = "[File: /repo/errors.py (3 lines total)]\n1:Traceback (most recent call last):\n2:ValueError: nope\n3:Killed\n";
    expect(detect("swe", "open errors.py", open)).toEqual([]);
    expect(
      detect("swe", "git diff", "-    raise TimeoutError('Connection timed out')\n+    raise TimeoutError('Read timed out')\n"),
    ).toEqual([]);
    // a script that catches an exception and prints it is not a traceback
    expect(
      detect("swe", "python reproduce.py", "PyArrow DataFrame indexing:\nError: AttributeError: 'Index' object has no attribute 'freq'\n"),
    ).toEqual([]);
  });
});

describe("mcp", () => {
  it("reads JSON-RPC error objects with code and message", () => {
    const observation = JSON.stringify(
      { jsonrpc: "2.0", id: 8, error: { code: -32602, message: 'invalid params: missing properties: ["In"]' } },
      null,
      2,
    );
    const label = only(detect("mcp", "tools/call", observation), "rpc_error");
    expect(label.facts).toEqual({ code: -32602 }); // the message has escapes: not a fact
    expect(label.evidence).toBe('"code": -32602,\n    "message": "invalid params: missing properties: [\\"In\\"]"');
  });

  it("reads isError results, and what their text says", () => {
    const rateLimited = JSON.stringify(
      {
        result: { content: [{ type: "text", text: "MCP error -32000: Rate limit exceeded, retry after 20 seconds" }], isError: true },
        jsonrpc: "2.0",
        id: 3,
      },
      null,
      2,
    );
    const labels = detect("mcp", "tools/call", rateLimited);
    expect(labelsOf(labels)).toEqual(["rate_limit", "rpc_error"]);
    expect(only(labels, "rpc_error").facts).toEqual({ code: -32000, message: "Rate limit exceeded, retry after 20 seconds" });
    expect(only(labels, "rate_limit").facts).toEqual({ retry_after: "20 seconds" });
    const denied = JSON.stringify(
      {
        result: {
          content: [{ type: "text", text: "Access denied - path outside allowed directories: /etc/passwd not in /tmp" }],
          isError: true,
        },
        jsonrpc: "2.0",
        id: 4,
      },
      null,
      2,
    );
    expect(labelsOf(detect("mcp", "read_file", denied))).toEqual(["permission_denied", "rpc_error"]);
  });

  it("reads pagination and empty lists, not an ordinary result", () => {
    const page = JSON.stringify({ jsonrpc: "2.0", id: 2, result: { tools: [{ name: "a" }], nextCursor: "eyJwYWdlIjogM30=" } }, null, 2);
    expect(only(detect("mcp", "tools/list", page), "pagination")).toMatchObject({
      evidence: '"nextCursor": "eyJwYWdlIjogM30="',
      facts: { cursor: "eyJwYWdlIjogM30=" },
    });
    const empty = JSON.stringify({ jsonrpc: "2.0", id: 3, result: { resources: [] } }, null, 2);
    expect(only(detect("mcp", "resources/list", empty), "empty_result").evidence).toBe('"resources": []');
    const normal = JSON.stringify(
      { result: { content: [{ type: "text", text: "Error: Operation failed" }] }, jsonrpc: "2.0", id: 6 },
      null,
      2,
    );
    expect(detect("mcp", "get-annotated-message", normal)).toEqual([]);
    const done = JSON.stringify({ result: { completion: { values: ["Blob"], total: 1, hasMore: false } }, jsonrpc: "2.0", id: 9 }, null, 2);
    expect(detect("mcp", "completion/complete", done)).toEqual([]);
  });
});

describe("precision details", () => {
  it("takes exit codes printed in a file's content for data, the harness's for the command's", () => {
    expect(detect("swe", "cat results.json", '{\n  "job": 12,\n  "exit_code": 2\n}')).toEqual([]);
    expect(labelsOf(detect("swe", "python run.py --json", '{\n  "job": 12,\n  "exit_code": 2\n}'))).toEqual(["nonzero_exit"]);
    expect(
      labelsOf(
        detect("swe", "cat results.json", "<returncode>1</returncode>\n<output>\ncat: results.json: No such file or directory\n</output>"),
      ),
    ).toEqual(["nonzero_exit", "not_found"]);
  });

  it("reads an HTTP client's error page (no -i) and JSON error bodies, but not a status inside a program's JSON", () => {
    const nginx =
      "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>";
    expect(only(detect("terminal", "curl -s https://api.example.test/", nginx), "http_error")).toMatchObject({
      evidence: "<title>502 Bad Gateway</title>",
      facts: { status: 502 },
    });
    expect(detect("terminal", "python render.py", nginx)).toEqual([]);
    const github =
      '{\n  "message": "API rate limit exceeded for 203.0.113.7.",\n  "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"\n}';
    expect(labelsOf(detect("terminal", "curl -s https://api.github.com/user", github))).toEqual(["rate_limit"]);
    expect(detect("terminal", "python status.py", '{\n  "service": "billing",\n  "status": 503\n}')).toEqual([]);
  });

  it("does not read an error phrase in a listed item's field, or an empty side list beside results", () => {
    const commits = JSON.stringify(
      { result: { structuredContent: { commits: [{ sha: "a1b2c3", commit: { message: "Handle rate limit exceeded errors" } }] } } },
      null,
      2,
    );
    expect(detect("mcp", "list_commits", commits)).toEqual([]);
    const facets = JSON.stringify({ results: [{ title: "Write-Ahead Logging" }], facets: { data: [] } }, null, 2);
    expect(detect("search", "web_search", facets)).toEqual([]);
  });
});

describe("search", () => {
  it("reads API errors in JSON: Google's error object, a 429 with retry-after", () => {
    const google = JSON.stringify(
      { error: { code: 429, message: "Quota exceeded for quota metric 'Queries'.", status: "RESOURCE_EXHAUSTED" } },
      null,
      2,
    );
    expect(only(detect("search", "web_search", google), "rate_limit").facts).toEqual({ status: 429 });
    const retry = JSON.stringify({ status: 429, error: "Too Many Requests", retry_after: 12 }, null, 2);
    const label = only(detect("search", "web_search", retry), "rate_limit");
    expect(label.facts).toEqual({ status: 429, retry_after: "12" });
    expect(label.evidence).toBe('"status": 429,\n  "error": "Too Many Requests",\n  "retry_after": 12');
    const forbidden = JSON.stringify({ error: { code: 403, message: "API key not valid." } }, null, 2);
    expect(only(detect("search", "web_search", forbidden), "http_error").facts).toEqual({ status: 403 });
  });

  it("reads empty results and pages, not results about errors", () => {
    expect(only(detect("search", "web_search", "[]"), "empty_result").evidence).toBe("[]");
    expect(labelsOf(detect("search", "web_search", "No results found for “lwm-data 0x7f3a”."))).toEqual(["empty_result"]);
    const results = JSON.stringify(
      {
        web: { results: [{ title: "Rate limit exceeded - how to fix", description: "HTTP/1.1 429 Too Many Requests\nRetry-After: 60" }] },
        news: { results: [] },
      },
      null,
      2,
    );
    expect(detect("search", "web_search", results)).toEqual([]);
    const extract =
      "# HTTP 429\n\nAn example response:\n\nHTTP/1.1 429 Too Many Requests\nContent-Type: text/html\nRetry-After: 3600\n\nOperation timed out is what curl says.";
    expect(detect("search", "web_extract", extract)).toEqual([]);
    const page = "Showing 21–30 of 340 results for “zstd”";
    expect(only(detect("search", "web_search", page), "pagination").facts).toEqual({ first: 21, last: 30, page_size: 10, total: 340 });
  });
});

describe("web", () => {
  it("reads error pages by title, heading and browser error text", () => {
    const notFound = 'RootWebArea "Page not found | Stockroom" focused url=http://stockroom.test/#/x\n  [5] heading "Page not found"';
    const labels = detect("web", "goto('http://stockroom.test/#/x')", notFound);
    expect(labels.map((l) => l.evidence)).toEqual(["Page not found | Stockroom"]);
    const server = 'RootWebArea "502 Bad Gateway" focused\n  [3] heading "502 Bad Gateway"\n  StaticText "nginx"';
    expect(only(detect("web", "click('4')", server), "error_page").facts).toEqual({ status: 502 });
    const chrome = 'RootWebArea "example.test" focused\n  [4] heading "This site can’t be reached"\n  StaticText "ERR_CONNECTION_REFUSED"';
    const errors = detect("web", "goto('http://example.test')", chrome);
    // one error page per screen: the hit that carries facts
    expect(errors.map((l) => [l.label, l.evidence, l.facts])).toEqual([
      ["error_page", "ERR_CONNECTION_REFUSED", { net_error: "ERR_CONNECTION_REFUSED" }],
    ]);
    for (const title of ["500 Days of Summer (2009) - IMDb", "Error Tracking Software | Sentry", "Forbidden Island – Board Game"]) {
      expect(detect("web", "goto('x')", `RootWebArea "${title}" focused`), title).toEqual([]);
    }
  });

  it("reads dialogs (not inline alerts), empty lists and pagers", () => {
    const dialog = 'RootWebArea "Items"\n  [56] alertdialog "Discard changes?" modal=True\n    [57] button "Discard"';
    expect(only(detect("web", "click('9')", dialog), "modal_dialog")).toMatchObject({
      evidence: '[56] alertdialog "Discard changes?" modal=True',
      facts: { title: "Discard changes?" },
    });
    const inline =
      'RootWebArea "New item"\n  [67] alert atomic live=assertive relevant="additions text"\n    StaticText "Name is required."';
    expect(detect("web", "click('77')", inline)).toEqual([]);
    expect(
      labelsOf(
        detect("web", "press('20', 'Enter')", 'RootWebArea "Search"\n  [9] paragraph\n    StaticText "No results found for “stapler”."'),
      ),
    ).toEqual(["empty_result"]);
    expect(
      detect(
        "web",
        "fill('224', 'x')",
        'RootWebArea "Home"\n  StaticText "FAVORITES"\n  StaticText "No Results"\n  StaticText "ALL RESULTS"',
      ),
    ).toEqual([]);
    expect(only(detect("web", "click('3')", 'RootWebArea "Orders"\n  StaticText "Page 2 of 5"'), "pagination").facts).toEqual({
      page: 2,
      total_pages: 5,
    });
    expect(detect("web", "click('3')", 'RootWebArea "Orders"\n  StaticText "Page 1 of 1"')).toEqual([]);
  });
});

describe("android", () => {
  const crash = (title: string, id = "android:id/alertTitle"): string =>
    `hierarchy rotation=0\n  android.widget.FrameLayout package=android bounds=[63,908][1017,1431]\n    android.widget.TextView "${title}" resource-id=${id} bounds=[126,971][954,1048]\n    android.widget.Button "Close app" clickable focusable resource-id=android:id/aerr_close bounds=[63,1279][1017,1426]`;

  it("reads the system's ANR, crash and permission dialogs, with the app's name", () => {
    expect(only(detect("android", "tap(1, 2)", crash("Quick Notes isn't responding")), "app_not_responding")).toMatchObject({
      evidence: "Quick Notes isn't responding",
      facts: { app: "Quick Notes" },
    });
    expect(labelsOf(detect("android", "tap(1, 2)", crash("Quick Notes keeps stopping")))).toEqual(["app_crash"]);
    expect(
      only(detect("android", "tap(1, 2)", crash("Unfortunately, Gallery has stopped.", "android:id/message")), "app_crash").facts,
    ).toEqual({ app: "Gallery" });
    const permission =
      'hierarchy rotation=0\n  android.widget.FrameLayout package=com.google.android.permissioncontroller bounds=[0,0][1080,2400]\n    android.widget.TextView "Allow Maps to access this device’s location?" resource-id=com.android.permissioncontroller:id/permission_message bounds=[105,1227][975,1353]';
    expect(only(detect("android", "tap(1, 2)", permission), "permission_prompt").facts).toEqual({
      app: "Maps",
      permission: "access this device’s location",
    });
  });

  it("does not take an app's text for a system dialog", () => {
    const notes =
      'hierarchy foreground_activity=org.example.notes/.List\n  android.widget.FrameLayout package=org.example.notes bounds=[0,0][1080,2340]\n    android.widget.TextView "The music has stopped" resource-id=org.example.notes:id/title bounds=[42,231][1038,294]\n    android.widget.TextView "Allow Bob to borrow the car?" resource-id=org.example.notes:id/preview bounds=[42,315][1038,378]\n    android.widget.TextView "Server is not responding" resource-id=org.example.notes:id/preview bounds=[42,400][1038,460]';
    expect(detect("android", "scroll()", notes)).toEqual([]);
  });
});

describe("os", () => {
  it("reads modal dialogs and the desktop's crash and not-responding dialogs", () => {
    const saveAs =
      'desktop-frame "main" bounds=[0,0][1920,1080]\n  application "gedit"\n    dialog "Save As" st:active st:modal st:showing bounds=[560,240][1360,840]';
    expect(only(detect("os", "pyautogui.hotkey('ctrl', 's')", saveAs), "modal_dialog")).toMatchObject({
      evidence: 'dialog "Save As" st:active st:modal st:showing bounds=[560,240][1360,840]',
      facts: { title: "Save As" },
    });
    const mac = 'AXApplication "Preview"\n  AXWindow "report.pdf"\n    AXSheet "Do you want to keep this new document?"';
    expect(labelsOf(detect("os", "pyautogui.hotkey('command', 'w')", mac))).toEqual(["modal_dialog"]);
    const quit = 'desktop-frame "main"\n  application "Finder"\n    dialog "Firefox quit unexpectedly." bounds=[600,300][1300,600]';
    expect(labelsOf(detect("os", "pyautogui.click(1, 2)", quit))).toEqual(["app_crash"]);
    const document =
      'desktop-frame "main"\n  application "gedit"\n    text st:editable text="Firefox quit unexpectedly; the dialog said Authentication Required." bounds=[0,0][10,10]';
    expect(detect("os", "pyautogui.typewrite('x')", document)).toEqual([]);
  });
});

describe("spans", () => {
  it("are code-point offsets: observation[start:end] in Python is the evidence, with emoji before the span", () => {
    const observation = "🚀 deploying 🇫🇷 naïve ✓\n👩‍💻 bash: ./deploy.sh: Permission denied\ncat: 😀.txt: No such file or directory\n";
    const labels = detect("terminal", "./deploy.sh", observation);
    expect(labelsOf(labels)).toEqual(["not_found", "permission_denied"]);
    for (const label of labels) {
      expect(codePointSlice(observation, label.start, label.end)).toBe(label.evidence);
      expect(observation.includes(label.evidence)).toBe(true);
    }
    // the JS index of the not_found span is larger than its code-point offset by the surrogate pairs before it
    const notFound = only(labels, "not_found");
    expect(observation.indexOf(notFound.evidence) - notFound.start).toBe(5); // 🚀, 🇫🇷 (two), 👩‍💻 (two)
  });

  it("are sorted by (turn, start, label), one label kind per turn unless disjoint", () => {
    const trajectory: Trajectory = {
      id: "t",
      domain: "terminal",
      source: { uri: "mem", format: "test" },
      turns: [
        { action: "curl -i x", observation: "HTTP/1.1 429 Too Many Requests\nRetry-After: 5\n\nToo Many Requests\n" },
        { action: "cat a b", observation: "cat: a: No such file or directory\ncat: b: No such file or directory\n" },
      ],
    };
    const labels = detectControls(trajectory);
    expect(labels.map((l) => [l.turn, l.label, l.evidence])).toEqual([
      [0, "rate_limit", "HTTP/1.1 429 Too Many Requests\nRetry-After: 5"],
      [0, "rate_limit", "Too Many Requests"],
      [1, "not_found", "cat: a: No such file or directory"],
      [1, "not_found", "cat: b: No such file or directory"],
    ]);
    expect(detectControls(trajectory)).toEqual(labels);
  });

  it("holds on every demo trajectory: evidence is the code-point slice, labels are known, facts are in the evidence", async () => {
    const trajectories = await normalizedTrajectories(DEMO_FILES);
    let count = 0;
    for (const list of trajectories.values()) {
      for (const trajectory of list) {
        for (const label of detectControls(trajectory)) {
          count++;
          expect(CONTROL_LABELS).toContain(label.label);
          expectFaithful(trajectory.turns[label.turn]?.observation ?? "", [label]);
        }
      }
    }
    expect(count).toBeGreaterThan(10);
  });

  it("ends on big and hostile observations: the ends of a long output are read", () => {
    const big = `${"x".repeat(SCAN_WINDOW * 3)}\n😀\nKilled\n`;
    const labels = detect("terminal", "python big.py", big);
    expect(labelsOf(labels)).toEqual(["killed"]);
    expect(codePointSlice(big, only(labels, "killed").start, only(labels, "killed").end)).toBe("Killed");
    const hostile = [
      `${"a:".repeat(60_000)}\n`,
      `${'"error": {'.repeat(20_000)}`,
      `${" ".repeat(100_000)}Traceback (most recent call last):\n${"  File x\n".repeat(20_000)}`,
      `${"HTTP/1.1 ".repeat(30_000)}`,
      `${"[1] dialog ".repeat(20_000)}`,
      `${'"Allow '.repeat(20_000)}permissioncontroller`,
    ];
    // No clock (issue 36): what this checks is that every detector ends on them; backtracking on
    // 100-200 KB would be a hang, caught by the test's hang net (vitest.config.ts).
    for (const text of hostile) for (const domain of Object.keys(DOMAIN_DETECTORS) as Domain[]) detect(domain, "run", text);
  });
});

// ---------------------------------------------------------------------------------------------
// The person-checked table
// ---------------------------------------------------------------------------------------------

interface Row {
  domain: Domain;
  turn?: { action: string; observation: string; previousObservation?: string };
  source?: { path?: string; real?: string; id?: string; turn: number; action: string };
  expected: ControlLabelName[];
  note: string;
}

const ROWS: Row[] = readFileSync(TABLE, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as Row);
const DEMO_FILES = [...new Set(ROWS.flatMap((row) => (row.source?.path ? [join(ROOT, row.source.path)] : [])))];
const REAL_FILES = [...new Set(ROWS.flatMap((row) => (row.source?.real ? [join(THIRD_PARTY_DIR, row.source.real)] : [])))];

/** Each file through the pipeline's reader and normalizer (default settings), by absolute path. */
async function normalizedTrajectories(files: string[]): Promise<Map<string, Trajectory[]>> {
  const inputs = files.map((file) => `  - path: ${JSON.stringify(file)}\n`).join("");
  const plan = await planJob(loadConfig(writeConfig(`inputs:\n${inputs}`)));
  const out = new Map<string, Trajectory[]>();
  for (const input of plan.files) {
    const list: Trajectory[] = [];
    for (const item of await collect(input.reader.read(input.path, { maxLineBytes: plan.config.input.max_line_bytes }))) {
      if (item.kind === "trajectory") list.push(await normalizeTrajectory(item.trajectory, plan.config.normalize, new Map()));
    }
    out.set(input.path, list);
  }
  return out;
}

interface Outcome {
  row: Row;
  /** The turn's observation and its labels, for the span checks. */
  observation: string;
  labels: ControlLabel[];
  detected: ControlLabelName[];
  agrees: boolean;
}

/** Every label's evidence is its code-point slice, and every fact is read from it (page_size is last − first + 1 of the evidence's range). */
function expectFaithful(observation: string, labels: ControlLabel[]): void {
  for (const label of labels) {
    expect(codePointSlice(observation, label.start, label.end)).toBe(label.evidence);
    const evidence = label.evidence.replace(/(\d),(\d)/g, "$1$2");
    for (const [key, value] of Object.entries(label.facts ?? {})) {
      if (key !== "page_size") expect(evidence, `${label.label}.${key}`).toContain(String(value));
    }
  }
}

async function outcomes(rows: Row[], files: string[]): Promise<Outcome[]> {
  const read = files.length > 0 ? await normalizedTrajectories(files) : new Map<string, Trajectory[]>();
  return rows.map((row) => {
    let labels: ControlLabel[];
    let observation: string;
    if (row.turn) {
      observation = row.turn.observation;
      labels = detect(row.domain, row.turn.action, row.turn.observation, row.turn.previousObservation);
    } else {
      const source = row.source;
      if (!source) throw new Error(`row without turn or source: ${row.note}`);
      const path = source.path !== undefined ? join(ROOT, source.path) : join(THIRD_PARTY_DIR, source.real ?? "");
      const list = read.get(path) ?? [];
      const trajectory = source.id === undefined ? list[0] : list.find((t) => t.id === source.id);
      if (!trajectory) throw new Error(`${path}: no trajectory ${source.id ?? ""} (read ${list.map((t) => t.id).join(", ")})`);
      expect(trajectory.domain, path).toBe(row.domain);
      const turn = trajectory.turns[source.turn];
      if (!turn) throw new Error(`${path}: no turn ${source.turn}`);
      expect(turn.action, `${path} turn ${source.turn}`).toContain(source.action);
      observation = turn.observation;
      labels = detectControls(trajectory).filter((l) => l.turn === source.turn);
    }
    const detected = labelsOf(labels);
    const expected = [...new Set(row.expected)].sort();
    return { row, observation, labels, detected, agrees: JSON.stringify(detected) === JSON.stringify(expected) };
  });
}

function report(title: string, results: Outcome[]): number {
  const agreed = results.filter((r) => r.agrees).length;
  const rate = agreed / results.length;
  const lines = results
    .filter((r) => !r.agrees)
    .map((r) => {
      const where = r.row.source
        ? `${r.row.source.path ?? r.row.source.real}${r.row.source.id ? ` [${r.row.source.id}]` : ""} turn ${r.row.source.turn}`
        : "hand-made";
      return `  ${r.row.domain} ${where}: expected [${r.row.expected.join(", ")}], detected [${r.detected.join(", ")}] — ${r.row.note}`;
    });
  console.log(
    `${title}: ${agreed}/${results.length} turns agree (${(rate * 100).toFixed(1)}%)${lines.length ? `; disagreements:\n${lines.join("\n")}` : ""}`,
  );
  return rate;
}

describe("person-checked table", () => {
  it("has at least 40 turns across all seven domains without the third-party samples, every label known", () => {
    const core = ROWS.filter((row) => !row.source?.real);
    expect(core.length).toBeGreaterThanOrEqual(40);
    expect(new Set(core.map((row) => row.domain))).toEqual(new Set(["terminal", "swe", "mcp", "search", "web", "android", "os"]));
    for (const row of ROWS) {
      expect(isDomain(row.domain)).toBe(true);
      for (const label of row.expected) expect(CONTROL_LABELS).toContain(label);
      expect(row.note.length).toBeGreaterThan(5);
    }
    expect(ROWS.filter((row) => row.expected.length > 0).length).toBeGreaterThanOrEqual(30);
  });

  it(`the detectors agree with the person on at least ${AGREEMENT_TARGET * 100}% of the turns (demo data, hand-made, and the third-party samples when present)`, async () => {
    const rows = ROWS.filter((row) => haveThirdParty || !row.source?.real);
    const files = haveThirdParty ? [...DEMO_FILES, ...REAL_FILES] : DEMO_FILES;
    const results = await outcomes(rows, files);
    for (const result of results) expectFaithful(result.observation, result.labels);
    const rate = report(`labelled turns${haveThirdParty ? "" : " (third-party samples absent)"}`, results);
    expect(rate).toBeGreaterThanOrEqual(AGREEMENT_TARGET);
  });
});

describeThirdParty("control detectors on the third-party samples (person-checked rows)", () => {
  it(`agree with the person on at least ${AGREEMENT_TARGET * 100}% of the real turns`, async () => {
    const rows = ROWS.filter((row) => row.source?.real);
    const results = await outcomes(rows, REAL_FILES);
    expect(report("labelled real turns", results)).toBeGreaterThanOrEqual(AGREEMENT_TARGET);
  });
});
