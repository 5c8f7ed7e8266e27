import { z } from "zod";
import { UserError } from "../../core/errors.ts";
import { openDecompressed } from "../../io/open-input.ts";
import { readLines } from "../../io/read-lines.ts";
import { chatCompletionBody, choicesInOrder, zodReason } from "./chat-types.ts";
import { assistantMessage, hasAnswer, type TeacherAnswer, teacherAnswer } from "./teacher-answer.ts";

/** A line that gave no candidates, with where it is and (when readable) whose prompt it was. */
export interface CandidateFileError {
  file: string;
  /** 1-based. */
  line: number;
  promptId?: string;
  reason: string;
}

export interface CandidateFileContents {
  /** prompt_id → candidates (text, and how the thinking was given); lines for the same prompt add up, in file order. */
  candidates: Map<string, TeacherAnswer[]>;
  errors: CandidateFileError[];
}

/**
 * Our own format: one prompt's candidates per line, each the answer's text or the assistant
 * message as a server returned it (`content` with `reasoning_content` and the other forms
 * teacher-answer.ts reads).
 */
const candidatesLine = z.object({
  prompt_id: z.string().min(1),
  candidates: z.array(z.union([z.string(), assistantMessage.refine(hasAnswer, { message: "has neither content nor reasoning" })])),
});

/** One line of an OpenAI Batch API output file (`/v1/chat/completions` requests). */
const batchLine = z.object({
  custom_id: z.string().min(1),
  response: z.object({ status_code: z.number(), body: z.unknown() }).nullable().optional(),
  error: z.object({ code: z.string().nullable().optional(), message: z.string().nullable().optional() }).nullable().optional(),
});

const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;

type LineOutcome = { ok: true; promptId: string; answers: TeacherAnswer[] } | { ok: false; promptId?: string; reason: string };

function batchErrorMessage(body: unknown): string {
  const error = (body as { error?: { message?: unknown } } | null)?.error;
  return typeof error?.message === "string" ? error.message : "no error message";
}

function parseBatchLine(value: unknown): LineOutcome {
  const parsed = batchLine.safeParse(value);
  if (!parsed.success) return { ok: false, reason: `batch output line: ${zodReason(parsed.error)}` };
  const { custom_id: promptId, response, error } = parsed.data;
  if (error) return { ok: false, promptId, reason: `batch error${error.code ? ` ${error.code}` : ""}: ${error.message ?? "no message"}` };
  if (!response) return { ok: false, promptId, reason: "batch output line has neither response nor error" };
  if (response.status_code !== 200)
    return { ok: false, promptId, reason: `HTTP ${response.status_code}: ${batchErrorMessage(response.body)}` };
  const body = chatCompletionBody.safeParse(response.body);
  if (!body.success) return { ok: false, promptId, reason: `malformed body: response.body.${zodReason(body.error)}` };
  const { texts, forms } = choicesInOrder(body.data);
  return { ok: true, promptId, answers: texts.map((text, i) => ({ text, form: forms[i] ?? "none" })) };
}

/** Reads one line in either format; the keys present decide which. */
export function parseCandidateLine(text: string): LineOutcome {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON: ${(err as Error).message}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { ok: false, reason: "not a JSON object" };
  if ("custom_id" in value) return parseBatchLine(value);
  if ("prompt_id" in value) {
    const parsed = candidatesLine.safeParse(value);
    const promptId = typeof value.prompt_id === "string" ? value.prompt_id : undefined;
    if (!parsed.success) return { ok: false, ...(promptId ? { promptId } : {}), reason: zodReason(parsed.error) };
    const answers = parsed.data.candidates.map((candidate) =>
      teacherAnswer(typeof candidate === "string" ? { content: candidate } : candidate),
    );
    return { ok: true, promptId: parsed.data.prompt_id, answers };
  }
  return { ok: false, reason: 'neither {"prompt_id", "candidates"} nor an OpenAI batch output line (custom_id)' };
}

/**
 * Reads candidates produced elsewhere (another sampler, the OpenAI Batch API), plain or
 * gzip/zstd, streamed line by line. Each line that yields nothing is reported with file and line,
 * so no prompt silently loses its candidates. Blank lines are skipped.
 */
export async function readCandidateFile(path: string, options: { maxLineBytes?: number } = {}): Promise<CandidateFileContents> {
  const result: CandidateFileContents = { candidates: new Map(), errors: [] };
  await addCandidateFile(result, path, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  return result;
}

/** Several files into one map (a prompt's candidates may be spread over runs). */
export async function readCandidateFiles(paths: string[], options: { maxLineBytes?: number } = {}): Promise<CandidateFileContents> {
  const result: CandidateFileContents = { candidates: new Map(), errors: [] };
  for (const path of paths) await addCandidateFile(result, path, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  return result;
}

async function addCandidateFile(into: CandidateFileContents, path: string, maxLineBytes: number): Promise<void> {
  let stream: Awaited<ReturnType<typeof openDecompressed>>["stream"];
  try {
    ({ stream } = await openDecompressed(path));
  } catch (err) {
    // A candidate file that cannot be opened is a usage error, not a candidate that failed.
    throw new UserError(`candidate file ${path} cannot be read: ${(err as Error).message}`);
  }
  for await (const line of readLines(stream, maxLineBytes)) {
    if (line.oversizedBytes !== undefined) {
      into.errors.push({
        file: path,
        line: line.lineNo,
        reason: `line of ${line.oversizedBytes} bytes is over the ${maxLineBytes}-byte limit`,
      });
      continue;
    }
    if (line.text.trim() === "") continue;
    const outcome = parseCandidateLine(line.text);
    if (!outcome.ok) {
      into.errors.push({
        file: path,
        line: line.lineNo,
        ...(outcome.promptId ? { promptId: outcome.promptId } : {}),
        reason: outcome.reason,
      });
      continue;
    }
    const answers = into.candidates.get(outcome.promptId);
    if (answers) answers.push(...outcome.answers);
    else into.candidates.set(outcome.promptId, [...outcome.answers]);
  }
}
