/**
 * Counterfactual synthesis with verification (issue 37 items 1–2): a normal turn's observation
 * replaced by what the environment would have returned under a chosen edge case, the trajectory
 * ending there, and the result written only when the project's own checks pass:
 *
 * - `not-detected`: the detectors (src/controls/detect-controls.ts) label the synthesized turn
 *   with the intended kind;
 * - `history-changed`: everything before it is the original's (system prompt, task, initial
 *   observation, earlier turns, the turn's action);
 * - `frame-changed`: what the edge case does not change in the observation itself is kept (a
 *   per-domain check: the shell's prompt line and echo and the harness wrapper, the JSON-RPC id,
 *   the search query, the screen under a dialog, the page's URL);
 * - `contradicts-history`: the history does not contradict what the observation asserts (a file
 *   said to be missing that an earlier `ls` listed, one said to be unreadable that was read);
 * - `instruction-unfaithful` / `copies-instruction`: the instruction built for it passes the
 *   hindsight-instruction checks, and shares no stretch of text with the observation beyond its
 *   evidence (neither copies the other);
 * - `continues`: the trajectory ends at the synthesized turn (later turns answered the real
 *   observation, not this one).
 */
import type { Domain, Trajectory } from "../../core/trajectory.ts";
import { faithfulInstruction } from "../control-instruction.ts";
import type { ControlLabel, ControlLabelName } from "../control-label.ts";
import { detectControls } from "../detect-controls.ts";
import { ANDROID_RULES, OS_RULES, WEB_RULES } from "./screen-rules.ts";
import { jsonOf, MCP_RULES, SEARCH_RULES } from "./service-rules.ts";
import { SHELL_RULES, SWE_RULES, shellFrame } from "./shell-rules.ts";
import type { SynthesisRule, SynthesisTurn } from "./synthesis-rule.ts";

export const SYNTHESIS_RULES: Readonly<Record<Domain, readonly SynthesisRule[]>> = {
  terminal: SHELL_RULES,
  swe: SWE_RULES,
  mcp: MCP_RULES,
  search: SEARCH_RULES,
  web: WEB_RULES,
  android: ANDROID_RULES,
  os: OS_RULES,
};

/** The edge-case kinds the rules can synthesize, per domain. */
export function synthesizableKinds(domain: Domain): ControlLabelName[] {
  return [...new Set(SYNTHESIS_RULES[domain].map((rule) => rule.kind))];
}

/** Why a synthesis is not written, by reason (counted in the manifest's controls block). */
export const REJECT_REASONS = [
  "not-applicable",
  "not-detected",
  "history-changed",
  "frame-changed",
  "contradicts-history",
  "instruction-unfaithful",
  "copies-instruction",
  "continues",
  // A teacher's answer (teacher-source.ts): it shows an edge case besides the one asked for, or none came.
  "other-edge-case",
  "no-answer",
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

/** Where a synthesized sample came from: `meta.control_synthesis` of its trajectory. */
export interface SynthesisRecord {
  /** "rule": a transform from SYNTHESIS_RULES; "teacher": a teacher's answer (teacher-source.ts), `rule` then "teacher". */
  source: "rule" | "teacher";
  rule: string;
  kind: ControlLabelName;
  /** The synthesized turn (0-based): the trajectory's last. */
  turn: number;
  /** The original trajectory's id. */
  from: string;
}

/** The suffix of a synthesized trajectory's id: `<id>#synth-<kind>-<turn>`. */
export const SYNTH_ID_MARK = "#synth-";

export interface Synthesis {
  trajectory: Trajectory;
  record: SynthesisRecord;
  labels: ControlLabel[];
  /** The hindsight instruction for the synthesized trajectory (checked). */
  instruction: string;
}

export type SynthesisResult = { ok: true; synthesis: Synthesis } | { ok: false; reasons: RejectReason[]; details: string[] };

export function turnOf(trajectory: Trajectory, index: number): SynthesisTurn {
  const turn = trajectory.turns[index] as Trajectory["turns"][number];
  const previous = index === 0 ? trajectory.initialObservation : trajectory.turns[index - 1]?.observation;
  return {
    index,
    action: turn.action,
    observation: turn.observation,
    ...(previous === undefined ? {} : { previousObservation: previous }),
    ...(trajectory.domain === "swe" ? { plainOutput: true } : {}),
    earlier: trajectory.turns.slice(0, index).map(({ action, observation }) => ({ action, observation })),
  };
}

/** The synthesized trajectory for `rule` at turn `index`, before verification; undefined when the rule does not apply. */
export function applyRule(trajectory: Trajectory, index: number, rule: SynthesisRule): Trajectory | undefined {
  if (index < 0 || index >= trajectory.turns.length) return undefined;
  const observation = rule.observe(turnOf(trajectory, index));
  if (observation === undefined || observation === trajectory.turns[index]?.observation) return undefined;
  const record: SynthesisRecord = { source: "rule", rule: rule.name, kind: rule.kind, turn: index, from: trajectory.id };
  return withObservation(trajectory, record, observation, `${rule.kind}-${index}`);
}

/** The trajectory cut after the record's turn, that turn's observation replaced, `<id>#synth-<suffix>`, the record in its meta. */
export function withObservation(trajectory: Trajectory, record: SynthesisRecord, observation: string, suffix: string): Trajectory {
  const index = record.turn;
  const turns = trajectory.turns.slice(0, index + 1).map((turn, i) => (i === index ? { ...turn, observation } : turn));
  return {
    ...trajectory,
    id: `${trajectory.id}${SYNTH_ID_MARK}${suffix}`,
    turns,
    meta: { ...trajectory.meta, control_synthesis: record },
  };
}

/** What the edge case must not change in the observation itself, per domain: the problems found. */
export function frameProblems(domain: Domain, original: SynthesisTurn, synthesized: string, rule: SynthesisRule): string[] {
  const problems: string[] = [];
  switch (domain) {
    case "terminal":
    case "swe": {
      const before = shellFrame(original, original.plainOutput === true);
      const after = shellFrame({ ...original, observation: synthesized }, original.plainOutput === true);
      if (before === undefined || after === undefined) return ["not a shell observation"];
      if (after.before !== before.before) problems.push("the earlier screen or the command's echo changed");
      if (after.after !== before.after) problems.push("the prompt line changed");
      if (/^<returncode>/.test(original.observation) !== /^<returncode>/.test(synthesized)) problems.push("the harness wrapper changed");
      break;
    }
    case "mcp": {
      if (jsonRpcIdentity(synthesized) !== jsonRpcIdentity(original.observation)) problems.push("the JSON-RPC id or version changed");
      break;
    }
    case "search": {
      const query = (text: string) => JSON.stringify((jsonOf(text) as { query?: { original?: unknown } } | undefined)?.query?.original);
      if (rule.kind === "empty_result" && query(synthesized) !== query(original.observation)) problems.push("the query changed");
      break;
    }
    case "web": {
      const url = (text: string) => /^RootWebArea [^\r\n]*?\burl=(\S+)/m.exec(text)?.[1];
      if (url(synthesized) !== url(original.observation)) problems.push("the page's URL changed");
      // A dialog is drawn over the page (a teacher's empty results or pagination redraw it; the URL check holds for those).
      if (rule.kind === "modal_dialog" && !synthesized.startsWith(original.observation.replace(/\s+$/, "")))
        problems.push("the screen under the dialog changed");
      break;
    }
    case "android":
    case "os":
      if (!synthesized.startsWith(original.observation.replace(/\s+$/, ""))) problems.push("the screen under the dialog changed");
      break;
  }
  return problems;
}

/** A response's `jsonrpc` and `id`, as one comparable string (undefined when it is not JSON). */
function jsonRpcIdentity(text: string): string | undefined {
  const parsed = jsonOf(text);
  return typeof parsed === "object" && parsed !== null
    ? JSON.stringify([(parsed as { jsonrpc?: unknown }).jsonrpc, (parsed as { id?: unknown }).id])
    : undefined;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * The checks of a synthesized trajectory against its original (see the file comment): the
 * reasons it fails (empty: it may be written), with a detail for each.
 */
export function verifySynthesis(
  original: Trajectory,
  synthesized: Trajectory,
  rule: SynthesisRule,
  index: number,
): { reasons: RejectReason[]; details: string[]; labels: ControlLabel[]; instruction?: string } {
  const reasons = new Set<RejectReason>();
  const details: string[] = [];
  const fail = (reason: RejectReason, detail: string) => {
    reasons.add(reason);
    details.push(`${reason}: ${detail}`);
  };
  if (synthesized.turns.length !== index + 1)
    fail("continues", `${synthesized.turns.length - index - 1} turn(s) after the synthesized one`);
  for (const key of ["system", "task", "initialObservation", "domain"] as const)
    if (!same(original[key], synthesized[key])) fail("history-changed", `${key} differs`);
  for (let i = 0; i < index; i++) if (!same(original.turns[i], synthesized.turns[i])) fail("history-changed", `turn ${i} differs`);
  if (original.turns[index]?.action !== synthesized.turns[index]?.action) fail("history-changed", "the turn's action differs");

  const synthesizedObservation = synthesized.turns[index]?.observation ?? "";
  for (const problem of frameProblems(original.domain, turnOf(original, index), synthesizedObservation, rule))
    fail("frame-changed", problem);

  const contradiction = rule.contradiction?.(turnOf(original, index));
  if (contradiction !== undefined) fail("contradicts-history", contradiction);

  const labels = detectControls(synthesized);
  if (!labels.some((label) => label.turn === index && label.label === rule.kind))
    fail(
      "not-detected",
      `the detectors do not label turn ${index} ${rule.kind} (found: ${labels.map((l) => `${l.turn}:${l.label}`).join(", ") || "none"})`,
    );

  const built = faithfulInstruction(synthesized, () => labels);
  if (built.instruction === undefined) {
    const leaks = built.problems.filter((p) => p.includes("verbatim"));
    if (leaks.length > 0) for (const leak of leaks) fail("copies-instruction", leak);
    else fail("instruction-unfaithful", built.problems.join("; ") || "no instruction can be stated");
  }
  return { reasons: [...reasons], details, labels, ...(built.instruction ? { instruction: built.instruction.text } : {}) };
}

/** Synthesizes and verifies one turn: the synthesis, or the reasons it was rejected. */
export function synthesizeTurn(trajectory: Trajectory, index: number, rule: SynthesisRule): SynthesisResult {
  const synthesized = applyRule(trajectory, index, rule);
  if (synthesized === undefined) return { ok: false, reasons: ["not-applicable"], details: [] };
  const verdict = verifySynthesis(trajectory, synthesized, rule, index);
  if (verdict.reasons.length > 0 || verdict.instruction === undefined)
    return { ok: false, reasons: verdict.reasons.length > 0 ? verdict.reasons : ["instruction-unfaithful"], details: verdict.details };
  const record = (synthesized.meta as { control_synthesis: SynthesisRecord }).control_synthesis;
  return { ok: true, synthesis: { trajectory: synthesized, record, labels: verdict.labels, instruction: verdict.instruction } };
}
