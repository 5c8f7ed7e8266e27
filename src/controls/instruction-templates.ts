import type { Domain } from "../core/trajectory.ts";
import { CONTROL_LABELS, type ControlLabel, type ControlLabelName } from "./control-label.ts";

/**
 * Hindsight instruction templates (issue 24, part 2): one sentence per label kind that states the
 * condition the environment showed, from the labels of that kind in one trajectory.
 *
 * A sentence names the turns by ordinal ("the 3rd and 5th calls", "the screen after the 4th
 * action") and states only facts a detector read from the evidence (`ControlLabel.facts`): a
 * template never guesses a value, and a fact missing from a label is simply not mentioned. The
 * fact keys each template reads are listed in `TEMPLATE_FACTS`; any other key is ignored.
 */

/** How a domain names its turns: API calls, shell commands, or screens after UI actions. */
export type TurnFamily = "call" | "command" | "screen";

const FAMILY: Record<Domain, TurnFamily> = {
  mcp: "call",
  search: "call",
  terminal: "command",
  swe: "command",
  web: "screen",
  android: "screen",
  os: "screen",
};

const NOUN: Record<Domain, string> = {
  mcp: "call",
  search: "request",
  terminal: "command",
  swe: "command",
  web: "action",
  android: "action",
  os: "action",
};

export function turnFamily(domain: Domain): TurnFamily {
  return FAMILY[domain];
}

/** The fact keys each label's template states when present (and well-formed); others are ignored. */
export const TEMPLATE_FACTS: Readonly<Record<ControlLabelName, readonly string[]>> = {
  rate_limit: ["status", "retry_after"],
  http_error: ["status"],
  rpc_error: ["code", "message"],
  pagination: ["page_size", "total"],
  empty_result: [],
  permission_denied: ["path"],
  disk_full: [],
  timeout: ["seconds"],
  killed: ["signal", "exit_code"],
  not_found: ["path", "command"],
  nonzero_exit: ["exit_code"],
  traceback: ["exception"],
  compile_error: ["errors"],
  test_failure: ["failed", "passed"],
  app_not_responding: ["app"],
  app_crash: ["app"],
  permission_prompt: ["permission"],
  error_page: ["status"],
  modal_dialog: ["title"],
};

/** The longest string fact a template quotes; a longer value is left out rather than cut. */
export const MAX_QUOTED_FACT = 60;

const HTTP_REASONS: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  413: "Payload Too Large",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** 1 → "1st", 2 → "2nd", 11 → "11th", 22 → "22nd". */
export function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  switch (n % 10) {
    case 1:
      return `${n}st`;
    case 2:
      return `${n}nd`;
    case 3:
      return `${n}rd`;
    default:
      return `${n}th`;
  }
}

/** "a", "a and b", "a, b and c". */
export function joinList(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

/**
 * Ordinals of 1-based positions, runs of three or more written as a range:
 * [3, 5] → "3rd and 5th", [1, 3, 4, 5, 6, 9] → "1st, 3rd to 6th and 9th".
 */
export function ordinalList(positions: readonly number[]): string {
  const sorted = [...new Set(positions)].sort((a, b) => a - b);
  const items: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] as number) === (sorted[j] as number) + 1) j++;
    const first = sorted[i] as number;
    const last = sorted[j] as number;
    if (j - i >= 2) items.push(`${ordinal(first)} to ${ordinal(last)}`);
    else for (let k = i; k <= j; k++) items.push(ordinal(sorted[k] as number));
    i = j + 1;
  }
  return joinList(items);
}

/** Where the condition shows: "the 3rd and 5th calls", "the 2nd command", "the screen after the 4th action". */
export interface Subject {
  text: string;
  plural: boolean;
}

export function subjectFor(domain: Domain, turns: readonly number[]): Subject {
  const distinct = [...new Set(turns)];
  const plural = distinct.length > 1;
  const list = ordinalList(distinct.map((turn) => turn + 1));
  const noun = NOUN[domain];
  if (FAMILY[domain] === "screen") {
    return { text: `the ${plural ? "screens" : "screen"} after the ${list} ${plural ? `${noun}s` : noun}`, plural };
  }
  return { text: `the ${list} ${plural ? `${noun}s` : noun}`, plural };
}

/** A fact as a well-formed integer, or undefined. */
function intFact(facts: ControlLabel["facts"], key: string): number | undefined {
  const value = facts?.[key];
  const n = typeof value === "number" ? value : typeof value === "string" && /^-?\d{1,12}$/.test(value.trim()) ? Number(value) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A fact as short one-line text (numbers written as they are), or undefined. */
function textFact(facts: ControlLabel["facts"], key: string): string | undefined {
  const value = facts?.[key];
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (text.length === 0 || [...text].length > MAX_QUOTED_FACT || /\p{Cc}/u.test(text)) return undefined;
  return text;
}

function httpStatus(facts: ControlLabel["facts"]): string | undefined {
  const status = intFact(facts, "status");
  if (status === undefined || status < 100 || status > 599) return undefined;
  const reason = HTTP_REASONS[status];
  return reason === undefined ? String(status) : `${status} ${reason}`;
}

/** The verb for a response, by family: calls return, commands fail with, screens show. */
function outcome(domain: Domain, subject: Subject, thing: string): string {
  switch (FAMILY[domain]) {
    case "call":
      return `${subject.plural ? "return" : "returns"} ${thing}`;
    case "command":
      return `${subject.plural ? "fail" : "fails"} with ${thing}`;
    case "screen":
      return `${subject.plural ? "show" : "shows"} ${thing}`;
  }
}

/** A verb that agrees with the subject: v(subject, "time out", "times out"). */
function v(subject: Subject, plural: string, singular: string): string {
  return subject.plural ? plural : singular;
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

interface KindTemplate {
  /** The sentence's opening: the condition in general (`facts`: the stated facts of each label of the kind). */
  lead(domain: Domain, facts: readonly Record<string, string | number>[]): string;
  /** What the named turns show, from the facts shared by the group's labels. */
  clause(domain: Domain, subject: Subject, facts: ControlLabel["facts"]): string;
}

const apiName = (domain: Domain): string =>
  FAMILY[domain] === "screen" ? "The site" : FAMILY[domain] === "command" ? "The server" : "The API";

const TEMPLATES: Record<ControlLabelName, KindTemplate> = {
  rate_limit: {
    lead: (domain) => `${apiName(domain)} rate-limits the agent`,
    clause: (domain, s, facts) => {
      const retry = textFact(facts, "retry_after");
      return `${s.text} ${outcome(domain, s, httpStatus(facts) ?? "a rate-limit error")}${retry === undefined ? "" : ` with Retry-After: ${retry}`}`;
    },
  },
  http_error: {
    lead: (domain) => `${apiName(domain)} fails with HTTP errors`,
    clause: (domain, s, facts) => `${s.text} ${outcome(domain, s, httpStatus(facts) ?? "an HTTP error")}`,
  },
  rpc_error: {
    // A JSON-RPC error object is the server refusing the request; an MCP result with
    // `"isError": true` is a successful response whose tool reports an error: say which one.
    lead: (_domain, all) => {
      const kinds = new Set(all.map((facts) => facts.error_kind));
      if (kinds.size === 1 && kinds.has("jsonrpc")) return "The server answers with JSON-RPC errors";
      if (kinds.size === 1 && kinds.has("tool_result")) return "Tools report errors";
      return "Calls fail";
    },
    clause: (domain, s, facts) => {
      const code = intFact(facts, "code");
      const message = textFact(facts, "message");
      const detail = (thing: string) => (message === undefined ? thing : `${thing} (${message})`);
      if (facts?.error_kind === "tool_result") {
        const result = `a tool result marked isError${code === undefined ? "" : ` with MCP error ${code}`}`;
        return `${s.text} ${outcome(domain, s, detail(result))}`;
      }
      const thing = code === undefined ? (facts?.error_kind === "jsonrpc" ? "a JSON-RPC error" : "an error") : `error ${code}`;
      return `${s.text} ${outcome(domain, s, detail(thing))}`;
    },
  },
  pagination: {
    lead: () => "Results are paginated",
    clause: (domain, s, facts) => {
      const pageSize = intFact(facts, "page_size");
      const total = intFact(facts, "total");
      const details = [
        pageSize === undefined ? undefined : `${pageSize} per page`,
        total === undefined ? undefined : `${total} in total`,
      ].filter((detail) => detail !== undefined);
      const verb =
        FAMILY[domain] === "call"
          ? v(s, "return", "returns")
          : FAMILY[domain] === "command"
            ? v(s, "print", "prints")
            : v(s, "show", "shows");
      return `${s.text} ${verb} one page of results${details.length > 0 ? ` (${details.join(", ")})` : ""}`;
    },
  },
  empty_result: {
    lead: () => "Results come back empty",
    clause: (domain, s) => {
      const verb =
        FAMILY[domain] === "call"
          ? v(s, "return", "returns")
          : FAMILY[domain] === "command"
            ? v(s, "print", "prints")
            : v(s, "show", "shows");
      return `${s.text} ${verb} no results`;
    },
  },
  permission_denied: {
    lead: () => "Access is denied",
    clause: (domain, s, facts) => {
      const path = textFact(facts, "path");
      return `${s.text} ${outcome(domain, s, `Permission denied${path === undefined ? "" : ` on ${path}`}`)}`;
    },
  },
  disk_full: {
    lead: () => "The disk is full",
    clause: (domain, s) => `${s.text} ${outcome(domain, s, "No space left on device")}`,
  },
  timeout: {
    lead: () => "Operations time out",
    clause: (_domain, s, facts) => {
      const seconds = intFact(facts, "seconds");
      return `${s.text} ${v(s, "time out", "times out")}${seconds === undefined ? "" : ` after ${plural(seconds, "second", "seconds")}`}`;
    },
  },
  killed: {
    lead: () => "Processes are killed",
    clause: (_domain, s, facts) => {
      const signal = textFact(facts, "signal");
      const exitCode = intFact(facts, "exit_code");
      return `${s.text} ${v(s, "are", "is")} killed${signal === undefined ? "" : ` by ${signal}`}${exitCode === undefined ? "" : ` (exit code ${exitCode})`}`;
    },
  },
  not_found: {
    lead: () => "What the agent asks for is missing",
    clause: (domain, s, facts) => {
      const what = textFact(facts, "path") ?? textFact(facts, "command");
      return `${s.text} ${outcome(domain, s, `a not-found error${what === undefined ? "" : ` for ${what}`}`)}`;
    },
  },
  nonzero_exit: {
    lead: () => "Commands fail",
    clause: (_domain, s, facts) => {
      const exitCode = intFact(facts, "exit_code");
      return `${s.text} ${v(s, "exit", "exits")} with ${exitCode === undefined ? "a non-zero status" : `code ${exitCode}`}`;
    },
  },
  traceback: {
    lead: () => "Programs crash",
    clause: (_domain, s, facts) => {
      const exception = textFact(facts, "exception");
      return `${s.text} ${v(s, "end", "ends")} in a traceback${exception === undefined ? "" : ` (${exception})`}`;
    },
  },
  compile_error: {
    lead: () => "The build fails",
    clause: (_domain, s, facts) => {
      const errors = intFact(facts, "errors");
      return `${s.text} ${v(s, "report", "reports")} ${errors === undefined ? "compile errors" : plural(errors, "compile error", "compile errors")}`;
    },
  },
  test_failure: {
    lead: () => "Tests fail",
    clause: (_domain, s, facts) => {
      const failed = intFact(facts, "failed");
      const passed = intFact(facts, "passed");
      const failing = failed === undefined ? "failing tests" : plural(failed, "failing test", "failing tests");
      return `${s.text} ${v(s, "report", "reports")} ${failing}${passed === undefined ? "" : ` and ${passed} passing`}`;
    },
  },
  app_not_responding: {
    lead: () => "The app stops responding",
    clause: (_domain, s, facts) => {
      const app = textFact(facts, "app");
      return `${s.text} ${v(s, "show", "shows")} an App Not Responding dialog${app === undefined ? "" : ` for ${app}`}`;
    },
  },
  app_crash: {
    lead: () => "The app crashes",
    clause: (_domain, s, facts) => {
      const app = textFact(facts, "app");
      return `${s.text} ${v(s, "show", "shows")} a crash dialog${app === undefined ? "" : ` for ${app}`}`;
    },
  },
  permission_prompt: {
    lead: () => "The system asks for permission",
    clause: (_domain, s, facts) => {
      const permission = textFact(facts, "permission");
      return `${s.text} ${v(s, "show", "shows")} a permission prompt${permission === undefined ? "" : ` for ${permission}`}`;
    },
  },
  error_page: {
    lead: () => "Pages fail to load",
    clause: (_domain, s, facts) => {
      const status = httpStatus(facts);
      return `${s.text} ${v(s, "show", "shows")} an error page${status === undefined ? "" : ` (${status})`}`;
    },
  },
  modal_dialog: {
    lead: () => "Pop-ups interrupt the agent",
    clause: (_domain, s, facts) => {
      const title = textFact(facts, "title");
      return `${s.text} ${v(s, "show", "shows")} a modal dialog${title === undefined ? "" : ` titled "${title}"`}`;
    },
  },
};

/** Groups that differ in their stated facts beyond this many are merged, keeping only the facts they share. */
const MAX_CLAUSES = 3;

/**
 * What kind of error an rpc_error's evidence is: an MCP tool result with `"isError": true` (its
 * `MCP error -32602: …` text, or the member itself) is a successful JSON-RPC response carrying a
 * tool error; anything else is a JSON-RPC error object (`"code": -32602, "message": …`).
 */
export function rpcErrorKind(evidence: string): "tool_result" | "jsonrpc" {
  return /^(?:MCP error -?\d|"isError")/.test(evidence) ? "tool_result" : "jsonrpc";
}

/** The facts of one label that its template would state, as a comparable key (plus what its evidence's shape says). */
function statedFacts(label: ControlLabel, keys: readonly string[]): Record<string, string | number> {
  const stated: Record<string, string | number> = {};
  for (const key of keys) {
    const value = label.facts?.[key];
    if (value !== undefined) stated[key] = value;
  }
  if (label.label === "rpc_error") stated.error_kind = rpcErrorKind(label.evidence);
  return stated;
}

const factKey = (facts: Record<string, string | number>): string =>
  JSON.stringify(Object.entries(facts).map(([k, value]) => [k, typeof value, value]));

/**
 * The sentence for the labels of one kind (all with `label === kind`, in one trajectory), or
 * undefined for none: "<lead>: <clause>[; <clause>…]." Labels whose stated facts agree share a
 * clause; when they disagree in more than three ways, only the facts they all share are stated.
 */
export function kindSentence(domain: Domain, kind: ControlLabelName, labels: readonly ControlLabel[]): string | undefined {
  const ofKind = labels.filter((label) => label.label === kind).sort((a, b) => a.turn - b.turn || a.start - b.start);
  if (ofKind.length === 0) return undefined;
  const keys = TEMPLATE_FACTS[kind];
  const template = TEMPLATES[kind];
  let groups = groupByFacts(ofKind.map((label) => statedFacts(label, keys)));
  if (groups.length > MAX_CLAUSES) {
    const all = ofKind.map((label) => statedFacts(label, keys));
    const shared: Record<string, string | number> = {};
    for (const [key, value] of Object.entries(all[0] ?? {})) if (all.every((facts) => facts[key] === value)) shared[key] = value;
    groups = [{ facts: shared, members: all.map((_, i) => i) }];
  }
  const clauses = groups.map((group) =>
    template.clause(
      domain,
      subjectFor(
        domain,
        group.members.map((i) => (ofKind[i] as ControlLabel).turn),
      ),
      group.facts,
    ),
  );
  return `${template.lead(
    domain,
    ofKind.map((label) => statedFacts(label, keys)),
  )}: ${clauses.join("; ")}.`;
}

function groupByFacts(all: Record<string, string | number>[]): { facts: Record<string, string | number>; members: number[] }[] {
  const groups = new Map<string, { facts: Record<string, string | number>; members: number[] }>();
  all.forEach((facts, i) => {
    const key = factKey(facts);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { facts, members: [i] });
    else group.members.push(i);
  });
  return [...groups.values()];
}

/** Label kinds in the fixed order sentences are written in (the order of `CONTROL_LABELS`). */
export const SENTENCE_ORDER: readonly ControlLabelName[] = CONTROL_LABELS;

/** "Behave normally": the instruction for a history in which no edge case was detected. */
export const NORMAL_INSTRUCTION: Readonly<Record<Domain, string>> = {
  mcp: "The environment behaves normally: every call succeeds and returns complete results.",
  search: "The environment behaves normally: every request succeeds and returns complete results.",
  terminal: "The environment behaves normally: every command runs without errors, timeouts or resource limits.",
  swe: "The environment behaves normally: every command runs without errors, crashes or failing tests.",
  web: "The environment behaves normally: every action loads its page without errors or pop-ups.",
  android: "The environment behaves normally: every action works, with no crashes, freezes or permission prompts.",
  os: "The environment behaves normally: every action works, with no error dialogs or pop-ups.",
};
