import { createHash } from "node:crypto";
import { Template } from "@huggingface/jinja";
import { RecordError } from "../core/errors.ts";

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

  constructor(templateText: string, source: string) {
    this.source = source;
    this.sha256 = createHash("sha256").update(templateText).digest("hex");
    this.template = templateText;
    this.compiled = new Template(templateText);
  }

  /** Plain rendering of real contents, exactly what the reference `apply_chat_template` gives. */
  renderText(messages: readonly Omit<ChatMessage, "loss">[]): string {
    return this.compiled.render({ messages, add_generation_prompt: false });
  }

  /** `addGenerationPrompt`: end with the template's opening of the assistant turn to be written. */
  renderSegments(messages: readonly Omit<ChatMessage, "loss">[], options: { addGenerationPrompt?: boolean } = {}): Segment[] {
    const tag = placeholderTag(messages);
    const { pieces, stripsLeadingNewlines } = this.layout(
      messages.map((message) => message.role),
      tag,
      options.addGenerationPrompt ?? false,
    );

    const segments: Segment[] = [];
    const seen = new Array<number>(messages.length).fill(0);
    for (const piece of pieces) {
      if (piece.before !== "") segments.push({ kind: "template", text: piece.before });
      if (piece.index === undefined) continue;
      const message = messages[piece.index] as Omit<ChatMessage, "loss">;
      // Python's str.lstrip("\n") semantics, as transformers renders it.
      const text = stripsLeadingNewlines.has(piece.index) ? message.content.replace(/^\n+/, "") : message.content;
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
    const render = (lead: string) =>
      this.compiled.render({
        messages: roles.map((role, i) => ({ role, content: `${lead}${OPEN}${tag}:${i}${CLOSE}` })),
        add_generation_prompt: addGenerationPrompt,
      });
    const pattern = new RegExp(`${OPEN}${tag}:(\\d+)${CLOSE}`, "g");
    const pieces = splitAtPlaceholders(render(""), pattern);
    // Templates may strip leading newlines from some contents (Qwen3 does, for the last
    // assistant turn). A second rendering with a newline before every placeholder shows where.
    const probe = splitAtPlaceholders(render("\n"), pattern);
    const stripsLeadingNewlines = new Set<number>();
    if (probe.length === pieces.length) {
      pieces.forEach((piece, k) => {
        const probed = probe[k];
        if (piece.index !== undefined && probed?.index === piece.index && probed.before === piece.before)
          stripsLeadingNewlines.add(piece.index);
      });
    }
    const layout = { pieces, stripsLeadingNewlines };
    if (this.layouts.size >= MAX_CACHED_LAYOUTS) this.layouts.delete(this.layouts.keys().next().value as string);
    this.layouts.set(key, layout);
    return layout;
  }
}

/** The rendered template around placeholder messages: what a message's content is put between. */
interface TemplateLayout {
  pieces: readonly { before: string; index?: number }[];
  /** Messages whose content the template left-strips of newlines. */
  stripsLeadingNewlines: ReadonlySet<number>;
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
