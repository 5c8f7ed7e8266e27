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

/** A piece of the rendered text: template scaffolding, or one message's content verbatim. */
export type Segment = { kind: "template"; text: string } | { kind: "content"; text: string; messageIndex: number };

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
  private readonly template: Template;

  constructor(templateText: string, source: string) {
    this.source = source;
    this.sha256 = createHash("sha256").update(templateText).digest("hex");
    this.template = new Template(templateText);
  }

  /** Plain rendering of real contents, exactly what the reference `apply_chat_template` gives. */
  renderText(messages: readonly Omit<ChatMessage, "loss">[]): string {
    return this.template.render({ messages, add_generation_prompt: false });
  }

  renderSegments(messages: readonly Omit<ChatMessage, "loss">[]): Segment[] {
    const tag = placeholderTag(messages);
    const placeholders = messages.map((message, i) => ({ role: message.role, content: `${OPEN}${tag}:${i}${CLOSE}` }));
    const rendered = this.template.render({ messages: placeholders, add_generation_prompt: false });

    const segments: Segment[] = [];
    const seen = new Array<number>(messages.length).fill(0);
    const pattern = new RegExp(`${OPEN}${tag}:(\\d+)${CLOSE}`, "g");
    let last = 0;
    for (const match of rendered.matchAll(pattern)) {
      const index = Number(match[1]);
      const message = messages[index] as Omit<ChatMessage, "loss">;
      if (match.index > last) segments.push({ kind: "template", text: rendered.slice(last, match.index) });
      segments.push({ kind: "content", text: message.content, messageIndex: index });
      seen[index] = (seen[index] as number) + 1;
      last = match.index + match[0].length;
    }
    if (last < rendered.length) segments.push({ kind: "template", text: rendered.slice(last) });

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
}

/** A placeholder tag that occurs in no message, so content can never forge one. */
function placeholderTag(messages: readonly Omit<ChatMessage, "loss">[]): string {
  for (let n = 0; ; n++) {
    const tag = `lwm${n}`;
    if (!messages.some((message) => message.content.includes(`${OPEN}${tag}:`))) return tag;
  }
}
