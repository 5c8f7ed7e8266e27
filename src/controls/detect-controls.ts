/**
 * Edge-case labels of a normalized trajectory (issue 24, part 1): each turn's observation through
 * its domain's detector (src/controls/detectors/<domain>.ts), the detectors' JS-index spans turned
 * into Unicode code-point offsets (what `observation[start:end]` means in Python), the evidence
 * filled in.
 *
 * Order and repeats: labels are sorted by (turn, start, label). A label kind appears more than
 * once in a turn only with disjoint spans: of two spans of one kind that overlap (a 429 status line
 * and the "Too Many Requests" inside it), the earlier one is kept — the longer one when both start
 * together — with its facts. Exact duplicates go the same way.
 *
 * Cost: deterministic, no I/O, every regex precompiled with bounded quantifiers. An observation
 * longer than 2 × SCAN_WINDOW characters is read in its first and last SCAN_WINDOW characters only
 * (errors, summaries and exit codes sit at the ends of long outputs; a 5 MB log's middle is not
 * scanned), so a turn costs at most a fixed amount of matching whatever its size.
 */
import type { Domain, Trajectory, Turn } from "../core/trajectory.ts";
import { HARNESS_ACTION } from "../read/terminal-bench.ts";
import { CONTROL_LABELS, type ControlLabel, type ControlLabelName, type DetectorTurn, type DomainDetector } from "./control-label.ts";
import { androidDetector } from "./detectors/android.ts";
import { mcpDetector } from "./detectors/mcp.ts";
import { osDetector } from "./detectors/os.ts";
import { searchDetector } from "./detectors/search.ts";
import { sweDetector } from "./detectors/swe.ts";
import { terminalDetector } from "./detectors/terminal.ts";
import { webDetector } from "./detectors/web.ts";

export const DOMAIN_DETECTORS: Readonly<Record<Domain, DomainDetector>> = {
  terminal: terminalDetector,
  swe: sweDetector,
  mcp: mcpDetector,
  search: searchDetector,
  web: webDetector,
  android: androidDetector,
  os: osDetector,
};

/** Characters (UTF-16 code units) read at each end of an observation longer than twice this. */
export const SCAN_WINDOW = 64 * 1024;

const KNOWN_LABELS: ReadonlySet<string> = new Set(CONTROL_LABELS);

type Hit = ReturnType<DomainDetector["detect"]>[number];

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Whether a JS index falls between the two halves of a surrogate pair. */
function insidePair(text: string, index: number): boolean {
  return index > 0 && index < text.length && isLow(text.charCodeAt(index)) && isHigh(text.charCodeAt(index - 1));
}

/** The detector's hits for one turn, reading a long observation's two ends (see SCAN_WINDOW). */
function rawHits(detector: DomainDetector, turn: DetectorTurn): Hit[] {
  const text = turn.observation;
  if (text.length <= 2 * SCAN_WINDOW) return detector.detect(turn);
  let headEnd = SCAN_WINDOW;
  if (insidePair(text, headEnd)) headEnd--;
  let tailStart = text.length - SCAN_WINDOW;
  if (insidePair(text, tailStart)) tailStart--;
  const head = detector.detect({ ...turn, observation: text.slice(0, headEnd) });
  const tail = detector.detect({ ...turn, observation: text.slice(tailStart), previousObservation: undefined });
  return [...head, ...tail.map((h) => ({ ...h, start: h.start + tailStart, end: h.end + tailStart }))];
}

/** Code-point offsets of ascending JS indices into `text` (each on a code-point boundary). */
function codePointOffsets(text: string, indices: number[]): Map<number, number> {
  const out = new Map<number, number>();
  let codePoints = 0;
  let i = 0;
  for (const index of indices) {
    while (i < index) {
      i += isHigh(text.charCodeAt(i)) && i + 1 < text.length && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
      codePoints++;
    }
    out.set(index, codePoints);
  }
  return out;
}

/** One turn's labels: valid spans snapped to whole code points, repeats of a kind removed, code-point offsets, evidence. */
export function detectTurn(detector: DomainDetector, turn: DetectorTurn): ControlLabel[] {
  const text = turn.observation;
  const hits: Hit[] = [];
  for (const h of rawHits(detector, turn)) {
    if (!KNOWN_LABELS.has(h.label) || !Number.isInteger(h.start) || !Number.isInteger(h.end)) continue;
    let { start, end } = h;
    if (start < 0 || end > text.length || start >= end) continue;
    if (insidePair(text, start)) start--;
    if (insidePair(text, end)) end++;
    hits.push({ ...h, start, end });
  }
  hits.sort((a, b) => a.start - b.start || b.end - a.end || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  const keptEnd = new Map<ControlLabelName, number>();
  const kept: Hit[] = [];
  for (const h of hits) {
    if ((keptEnd.get(h.label) ?? -1) > h.start) continue;
    keptEnd.set(h.label, h.end);
    kept.push(h);
  }
  kept.sort((a, b) => a.start - b.start || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0) || a.end - b.end);
  const offsets = codePointOffsets(
    text,
    [...new Set(kept.flatMap((h) => [h.start, h.end]))].sort((a, b) => a - b),
  );
  return kept.map((h) => {
    const label: ControlLabel = {
      label: h.label,
      turn: turn.index,
      start: offsets.get(h.start) ?? h.start,
      end: offsets.get(h.end) ?? h.end,
      evidence: text.slice(h.start, h.end),
    };
    if (h.facts && Object.keys(h.facts).length > 0) label.facts = { ...h.facts };
    return label;
  });
}

/**
 * A turn the harness typed, not the agent (terminal-bench's recording start, agent install and
 * launch, test run: `HARNESS_ACTION`, or a reader's `meta.harness: true`): its output says how the
 * harness fared ("mini: command not found" while installing the agent), not how the environment
 * answered the agent, so it never yields a label. The terminal-bench reader already drops such
 * turns when it can tell them apart; this keeps them unlabelled when one comes through anyway.
 */
export function isHarnessTurn(trajectory: Trajectory, turn: Turn): boolean {
  if (turn.meta?.harness === true) return true;
  return (trajectory.domain === "terminal" || trajectory.domain === "swe") && HARNESS_ACTION.test(turn.action.trim());
}

/**
 * Every edge-case label of a normalized trajectory: each turn's observation through its domain's
 * detector, with the previous observation (the initial observation for turn 0) for screens that
 * repeat what was already there. Sorted by (turn, start, label).
 */
export function detectControls(trajectory: Trajectory): ControlLabel[] {
  const detector = DOMAIN_DETECTORS[trajectory.domain];
  const labels: ControlLabel[] = [];
  let previousObservation = trajectory.initialObservation;
  trajectory.turns.forEach((turn, index) => {
    if (isHarnessTurn(trajectory, turn)) {
      previousObservation = turn.observation;
      return;
    }
    labels.push(
      ...detectTurn(detector, {
        domain: trajectory.domain,
        index,
        action: turn.action,
        observation: turn.observation,
        previousObservation,
      }),
    );
    previousObservation = turn.observation;
  });
  return labels;
}
