import pc from "picocolors";
import { decodeText, type Tokenizer } from "../tokenize/tokenizer.ts";

export interface MaskViewOptions {
  color: boolean;
  maxChars: number;
  /** Lines shown on their own before the token at a position (per-turn masking decisions). */
  notes?: ReadonlyMap<number, string>;
}

/**
 * Runs of consecutive tokens with the same mask bit, decoded together so UTF-8 stays whole.
 * A run also ends before every position in `breaks` (where a note goes; always a special token).
 */
export function maskRuns(
  tokenizer: Tokenizer,
  ids: Int32Array,
  mask: Uint8Array,
  breaks: ReadonlySet<number> = new Set(),
): { start: number; trained: boolean; text: string }[] {
  const runs: { start: number; trained: boolean; text: string }[] = [];
  let start = 0;
  for (let i = 1; i <= ids.length; i++) {
    if (i === ids.length || mask[i] !== mask[start] || breaks.has(i)) {
      runs.push({ start, trained: mask[start] === 1, text: decodeText(tokenizer, ids.subarray(start, i)) });
      start = i;
    }
  }
  return runs;
}

/**
 * The sample as text with its loss mask visible: trained text bright green, context dim.
 * Without colour, trained spans are bracketed with ⟦ ⟧. Notes are not counted in maxChars.
 */
export function renderMaskView(tokenizer: Tokenizer, ids: Int32Array, mask: Uint8Array, options: MaskViewOptions): string {
  const colors = pc.createColors(options.color);
  let out = "";
  let shown = 0;
  const notes = options.notes ?? new Map<number, string>();
  for (const run of maskRuns(tokenizer, ids, mask, new Set(notes.keys()))) {
    const note = notes.get(run.start);
    if (note !== undefined) out += `${options.color ? colors.cyan(note) : note}\n`;
    let text = run.text;
    if (options.maxChars > 0 && shown + text.length > options.maxChars) text = `${text.slice(0, options.maxChars - shown)}…`;
    shown += text.length;
    if (options.color) out += run.trained ? colors.green(colors.bold(text)) : colors.dim(text);
    else out += run.trained ? `⟦${text}⟧` : text;
    if (options.maxChars > 0 && shown >= options.maxChars) break;
  }
  return out;
}

/** One line per token: position, id, mask bit, and the token's text with escapes visible. */
export function renderTokenTable(tokenizer: Tokenizer, ids: Int32Array, mask: Uint8Array): string {
  const lines = ["  pos       id  loss  text"];
  for (let i = 0; i < ids.length; i++) {
    const text = JSON.stringify(decodeText(tokenizer, ids.subarray(i, i + 1)));
    lines.push(`${String(i).padStart(5)} ${String(ids[i]).padStart(8)}  ${mask[i] ? "  1 " : "  0 "}  ${text}`);
  }
  return lines.join("\n");
}
