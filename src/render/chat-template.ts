import { createHash } from "node:crypto";
import { Template } from "@huggingface/jinja";
import { RecordError, UserError } from "../core/errors.ts";
import { pythonStrip, usePythonStringMethods } from "./jinja-python-strings.ts";

export type Role = "system" | "user" | "assistant";

export interface ChatMessage {
  role: Role;
  content: string;
  /** Whether this message's content carries the training loss. */
  loss: boolean;
}

/**
 * A piece of the rendered text: template scaffolding, or one message's content verbatim.
 * Template text may name an `owner` message: structure that belongs to that message's answer
 * (an SFT answer's `<think>` tags), so it is trained with it and its added tokens are ids.
 */
export type Segment = { kind: "template"; text: string; owner?: number } | { kind: "content"; text: string; messageIndex: number };

const OPEN = "\uE000";
const CLOSE = "\uE001";

/**
 * Variables a template sees besides `messages` and `add_generation_prompt`, as `transformers`
 * passes them: the tokenizer's special tokens (`bos_token`, `eos_token`, …) from its
 * tokenizer_config.json. `raise_exception` and `strftime_now` are the jinja port's own.
 */
export type TemplateVariables = Readonly<Record<string, string | readonly string[]>>;

/** The conversation every template must render (each message once) for a job to start. */
const PROBE_ROLES: readonly Role[] = ["system", "user", "assistant", "user", "assistant"];

/** How a template strips a message's content at one end (probed, see `layout`). */
type Strip = "none" | "newlines" | "whitespace";
const LEAD_PROBE = "\n ";
const TRAIL_PROBE = " \n";

usePythonStringMethods();

/**
 * Renders a chat template (Jinja, executed by @huggingface/jinja) into segments. Each message
 * is rendered as an opaque placeholder and its content put back verbatim afterwards, so:
 *  - we know exactly which characters are template and which are content (that is the mask);
 *  - content cannot steer the template: a `</think>` or `<tool_response>` inside tool output
 *    is not interpreted by the template's string tests, it stays text.
 */
export class ChatTemplateRenderer {
  readonly source: string;
  readonly sha256: string;
  /** The Jinja source. */
  readonly template: string;
  private readonly compiled: Template;
  private readonly layouts = new Map<string, TemplateLayout>();

  private readonly variables: TemplateVariables;

  /**
   * Refuses (UserError naming `source`) a template that does not parse, or that fails on or
   * drops a message of a plain system/user/assistant conversation: better at `validate` than a
   * job whose every record is quarantined.
   */
  constructor(templateText: string, source: string, variables: TemplateVariables = {}) {
    this.source = source;
    this.sha256 = createHash("sha256").update(templateText).digest("hex");
    this.template = templateText;
    this.variables = variables;
    try {
      // The jinja port's own strftime_now reads the clock and cannot be redeclared: the template
      // calls ours under another name (see TEMPLATE_DATE).
      this.compiled = new Template(templateText.replace(/\bstrftime_now\b/g, FIXED_STRFTIME));
    } catch (error) {
      throw new UserError(`${source}: the chat template does not parse: ${(error as Error).message}`);
    }
    try {
      this.renderSegments(PROBE_ROLES.map((role) => ({ role, content: role })));
    } catch (error) {
      throw new UserError(
        `${source}: the chat template cannot render a ${PROBE_ROLES.join(", ")} conversation: ${(error as Error).message}`,
      );
    }
  }

  private render(messages: readonly Omit<ChatMessage, "loss">[], addGenerationPrompt: boolean): string {
    // As transformers: special tokens first, then tools/documents (none) and the call's own.
    return this.compiled.render({
      ...this.variables,
      [FIXED_STRFTIME]: templateStrftime,
      tools: null,
      documents: null,
      messages,
      add_generation_prompt: addGenerationPrompt,
    });
  }

  /** Plain rendering of real contents, exactly what the reference `apply_chat_template` gives. */
  renderText(messages: readonly Omit<ChatMessage, "loss">[]): string {
    return this.render(messages, false);
  }

  /** `addGenerationPrompt`: end with the template's opening of the assistant turn to be written. */
  renderSegments(messages: readonly Omit<ChatMessage, "loss">[], options: { addGenerationPrompt?: boolean } = {}): Segment[] {
    const tag = placeholderTag(messages);
    let layout: TemplateLayout;
    try {
      layout = this.layout(
        messages.map((message) => message.role),
        tag,
        options.addGenerationPrompt ?? false,
      );
    } catch (error) {
      // `raise_exception(...)` in the template, or an operation it cannot do on these roles.
      throw new RecordError(`chat template (${this.source}): ${(error as Error).message}`, "messages");
    }
    const { pieces, strips } = layout;

    const segments: Segment[] = [];
    const seen = new Array<number>(messages.length).fill(0);
    for (const piece of pieces) {
      if (piece.before !== "") segments.push({ kind: "template", text: piece.before });
      if (piece.index === undefined) continue;
      const message = messages[piece.index] as Omit<ChatMessage, "loss">;
      // Stripped as the template strips it, with Python's semantics (jinja-python-strings.ts).
      const strip = strips.get(piece.index);
      const text = strip ? stripContent(message.content, strip) : message.content;
      segments.push({ kind: "content", text, messageIndex: piece.index });
      seen[piece.index] = (seen[piece.index] as number) + 1;
    }

    // A template that drops or repeats a message would silently corrupt the mask; refuse instead.
    const wrong = seen.findIndex((count) => count !== 1);
    if (wrong !== -1) {
      throw new RecordError(
        `chat template placed message ${wrong} (${messages[wrong]?.role}) ${seen[wrong]} times; each message must appear exactly once`,
        `messages.${wrong}`,
      );
    }
    return segments;
  }

  /**
   * Where the template puts each message, for these roles. The template only ever sees
   * placeholders (roles, `tag` and indices), never real contents, so the layout is a pure
   * function of its arguments and is rendered once per distinct key: most trajectories of a
   * run share a handful of role sequences, and the Jinja interpreter is the costly part.
   */
  private layout(roles: readonly Role[], tag: string, addGenerationPrompt: boolean): TemplateLayout {
    const key = `${tag}|${addGenerationPrompt ? 1 : 0}|${roles.join(",")}`;
    const cached = this.layouts.get(key);
    if (cached) {
      // Refresh its place: the map's first key is the least recently used.
      this.layouts.delete(key);
      this.layouts.set(key, cached);
      return cached;
    }
    const render = (lead: string, trail: string) =>
      this.render(
        roles.map((role, i) => ({ role, content: `${lead}${OPEN}${tag}:${i}${CLOSE}${trail}` })),
        addGenerationPrompt,
      );
    const pattern = new RegExp(`${OPEN}${tag}:(\\d+)${CLOSE}`, "g");
    const pieces = splitAtPlaceholders(render("", ""), pattern);
    // Templates may strip some contents: Qwen3 left-strips newlines from the last assistant
    // turn, Llama 3 trims every message. A rendering with "\n " before every placeholder and one
    // with " \n" after it show where, and what: "\n" alone (newlines) or both (whitespace).
    const lead = splitAtPlaceholders(render(LEAD_PROBE, ""), pattern);
    const trail = splitAtPlaceholders(render("", TRAIL_PROBE), pattern);
    const strips = new Map<number, { lead: Strip; trail: Strip }>();
    const aligned = (probe: typeof pieces) => probe.length === pieces.length && probe.every((p, k) => p.index === pieces[k]?.index);
    if (aligned(lead) && aligned(trail)) {
      pieces.forEach((piece, k) => {
        if (piece.index === undefined) return;
        const before = piece.before;
        const after = (pieces[k + 1] as { before: string }).before;
        const leadBefore = (lead[k] as { before: string }).before;
        const trailAfter = (trail[k + 1] as { before: string }).before;
        const leadStrip: Strip =
          leadBefore === before ? "whitespace" : leadBefore === `${before}${LEAD_PROBE.slice(1)}` ? "newlines" : "none";
        const trailStrip: Strip =
          trailAfter === after ? "whitespace" : trailAfter === `${TRAIL_PROBE.slice(0, -1)}${after}` ? "newlines" : "none";
        if (leadStrip !== "none" || trailStrip !== "none") strips.set(piece.index, { lead: leadStrip, trail: trailStrip });
      });
    }
    const layout = { pieces, strips };
    if (this.layouts.size >= MAX_CACHED_LAYOUTS) this.layouts.delete(this.layouts.keys().next().value as string);
    this.layouts.set(key, layout);
    return layout;
  }
}

/** The rendered template around placeholder messages: what a message's content is put between. */
interface TemplateLayout {
  pieces: readonly { before: string; index?: number }[];
  /** Messages whose content the template strips, and how at each end. */
  strips: ReadonlyMap<number, { lead: Strip; trail: Strip }>;
}

function stripContent(content: string, strip: { lead: Strip; trail: Strip }): string {
  let text = content;
  if (strip.lead !== "none") text = pythonStrip(text, strip.lead === "newlines" ? "\n" : undefined, true, false);
  if (strip.trail !== "none") text = pythonStrip(text, strip.trail === "newlines" ? "\n" : undefined, false, true);
  return text;
}

/** Distinct role sequences kept rendered (a few KB each); long-tailed turn counts stay bounded. */
const MAX_CACHED_LAYOUTS = 512;

/** Template text before each placeholder (with the placeholder's message index), then the tail. */
function splitAtPlaceholders(rendered: string, pattern: RegExp): { before: string; index?: number }[] {
  const pieces: { before: string; index?: number }[] = [];
  let last = 0;
  for (const match of rendered.matchAll(pattern)) {
    pieces.push({ before: rendered.slice(last, match.index), index: Number(match[1]) });
    last = match.index + match[0].length;
  }
  pieces.push({ before: rendered.slice(last) });
  return pieces;
}

/** A placeholder tag that occurs in no message, so content can never forge one. */
function placeholderTag(messages: readonly Omit<ChatMessage, "loss">[]): string {
  for (let n = 0; ; n++) {
    const tag = `lwm${n}`;
    if (!messages.some((message) => message.content.includes(`${OPEN}${tag}:`))) return tag;
  }
}

/**
 * The date a template's `strftime_now` sees: fixed, so a rerun writes byte-identical shards
 * (templates such as Llama 3.1's put "Today Date" into every system message). 26 Jul 2024 is the
 * date those templates use themselves when `strftime_now` is absent.
 */
export const TEMPLATE_DATE = { year: 2024, month: 7, day: 26 } as const;

const FIXED_STRFTIME = "lwm_strftime_now_fixed";

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** Python's `strftime` for the directives chat templates use (%Y %m %d %b %B %H %M %%), at TEMPLATE_DATE 00:00. */
export function templateStrftime(format: string): string {
  const { year, month, day } = TEMPLATE_DATE;
  const pad2 = (n: number) => String(n).padStart(2, "0");
  const month0 = MONTHS[month - 1] as string;
  const values: Record<string, string> = {
    "%Y": String(year),
    "%m": pad2(month),
    "%d": pad2(day),
    "%b": month0.slice(0, 3),
    "%B": month0,
    "%H": "00",
    "%M": "00",
    "%%": "%",
  };
  return format.replace(/%[YmdbBHM%]/g, (token) => values[token] as string);
}
