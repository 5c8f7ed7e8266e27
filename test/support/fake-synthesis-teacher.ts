import { createHash } from "node:crypto";
import { fakeRephrasing } from "./fake-rephraser.ts";
import { type FakeScoreServer, type ScoreServerReply, startFakeScoreServer } from "./fake-score-server.ts";

/** A prompt's `TITLE:\n<<<\n…\n>>>` block (src/controls/synthesis/teacher-prompt.ts). */
function block(prompt: string, title: string): string | undefined {
  const start = prompt.indexOf(`${title}:\n<<<\n`);
  if (start === -1) return undefined;
  const from = start + title.length + 6;
  const end = prompt.indexOf("\n>>>", from);
  return end === -1 ? undefined : prompt.slice(from, end);
}

const withLineBeforePrompt = (observation: string, line: string): string => {
  const trimmed = observation.replace(/\s+$/, "");
  const at = trimmed.lastIndexOf("\n");
  return at === -1 ? `${line}\n${trimmed}` : `${trimmed.slice(0, at)}\n${line}${trimmed.slice(at)}`;
};

const jsonRpcError = (observation: string, code: number, message: string): string | undefined => {
  try {
    const parsed = JSON.parse(observation) as { jsonrpc?: unknown; id?: unknown };
    return JSON.stringify({ jsonrpc: parsed.jsonrpc, id: parsed.id, error: { code, message } });
  } catch {
    return undefined;
  }
};

const crashDialog = (observation: string): string => {
  const app = /^[ \t]*application "([^"\\\r\n]{1,80})"/m.exec(observation)?.[1] ?? "The application";
  return `${observation.replace(/\s+$/, "")}\n  alert "${app} quit unexpectedly." st:modal st:showing st:visible bounds=[660,400][1260,640]`;
};

/**
 * The answer a good teacher gives for a kind: the tools' own words, everything else kept (terminal
 * timeout before the prompt line, an MCP error response with the same id, a desktop crash dialog
 * over the screen). Undefined for kinds it has no answer for.
 */
export function goodObservation(kind: string, observation: string): string | undefined {
  const mcp = observation.trimStart().startsWith("{");
  if (kind === "timeout" && mcp) return jsonRpcError(observation, -32001, "Request timed out");
  if (kind === "timeout") return withLineBeforePrompt(observation, "Command timed out after 30 seconds");
  if (kind === "http_error" && mcp) return jsonRpcError(observation, -32603, "HTTP 503 Service Unavailable");
  if (kind === "app_crash") return crashDialog(observation);
  return undefined;
}

/**
 * A deterministic teacher for `controls.synthesis.teacher` (configs/demo-synthesis-teacher.yaml):
 * about one answer in four (by a hash of the prompt) is bad, as teachers' are: on a terminal
 * screen the prompt line is changed (`frame-changed`) or a full disk shows up with the timeout
 * (`other-edge-case`); elsewhere another edge case is shown instead of the one asked for
 * (`not-detected`). The verifier must reject those and use the rest.
 */
export function fakeSynthesisAnswer(prompt: string): string {
  const kind = /^EDGE CASE: ([a-z_]+)/m.exec(prompt)?.[1] ?? "";
  const observation = block(prompt, "OBSERVATION AS IT WAS") ?? "";
  const good = goodObservation(kind, observation) ?? observation;
  const digest = createHash("sha256").update(prompt).digest();
  if ((digest[0] as number) >= 64) return `<think>Keep the frame.</think>\n${good}`;
  if (kind === "timeout" && !observation.trimStart().startsWith("{")) {
    if ((digest[1] as number) < 128) return good.replace(/[$#]( ?)$/, "%$1");
    return withLineBeforePrompt(good, "write error: No space left on device");
  }
  if (observation.trimStart().startsWith("{")) return jsonRpcError(observation, -32603, "Permission denied") ?? good;
  return `${observation.replace(/\s+$/, "")}\n  dialog "Low Disk Space" st:modal st:showing st:visible`;
}

/** Whether a chat request is a synthesis question (its system message), not a rephrase one. */
const isSynthesis = (system: string | undefined): boolean => system?.startsWith("You simulate the environment") === true;

/**
 * Faults the fake teacher is told to show, changeable while it runs: `reply` returns the reply for
 * a prompt (an HTTP error, a dropped connection) or undefined to answer it normally.
 */
export interface TeacherFaults {
  reply?: (prompt: string, attempt: number) => ScoreServerReply | undefined;
}

/** One in `every` prompts (by a hash of the prompt, so the same ones on every run). */
export function somePrompts(prompt: string, every: number): boolean {
  return createHash("sha256").update(`fault\u0000${prompt}`).digest().readUInt32BE(0) % every === 0;
}

/**
 * One fake teacher for both teacher stages: synthesis questions answered as above, rephrase prompts
 * as fake-rephraser.ts does; `faults` (read at each request) make it fail some.
 */
export function startFakeTeacher(faults: TeacherFaults = {}): Promise<FakeScoreServer> {
  return startFakeScoreServer(
    (request, attempt, prompt) =>
      faults.reply?.(prompt, attempt) ?? {
        content: isSynthesis(request.messages[0]?.content) ? fakeSynthesisAnswer(prompt) : fakeRephrasing(prompt),
      },
  );
}
