import { parseArguments, textCall } from "./calls.ts";
import { type Call, type Message, makeMessage } from "./message.ts";

/**
 * Glaive function-calling `chat` transcripts: the text cut at its "USER:", "ASSISTANT:",
 * "FUNCTION RESPONSE:" and "SYSTEM:" markers into messages, a `<functioncall>` in an assistant
 * part read as its call (arguments often a single-quoted JSON string).
 */

/** A message Glaive's `chat` transcript holds, already in the reader's shape. */
export class GlaiveMessage {
  readonly message: Message;
  constructor(message: Message) {
    this.message = message;
  }
}

const GLAIVE_MARKER = /(?:^|\n)[ \t]*(USER|ASSISTANT|FUNCTION RESPONSE|SYSTEM):[ \t]?/g;
const GLAIVE_ROLES: Record<string, string> = { USER: "user", ASSISTANT: "assistant", "FUNCTION RESPONSE": "tool", SYSTEM: "system" };

/**
 * Glaive function-calling (v1/v2) `chat`: "USER: …", "ASSISTANT: …" (a call is
 * `<functioncall> {"name": …, "arguments": '{…}'}`), "FUNCTION RESPONSE: …", each reply ending
 * in `<|endoftext|>`. Undefined when the text has no such marker.
 */
export function glaiveMessages(chat: string): GlaiveMessage[] | undefined {
  const markers = [...chat.matchAll(GLAIVE_MARKER)];
  if (markers.length === 0) return undefined;
  const messages: GlaiveMessage[] = [];
  const before = chat.slice(0, markers[0]?.index).trim();
  if (before !== "") messages.push(new GlaiveMessage(makeMessage("other", "", { skipped: ["chat_text_before_first_role"] })));
  for (const [i, marker] of markers.entries()) {
    const end = markers[i + 1]?.index ?? chat.length;
    const text = chat
      .slice((marker.index as number) + marker[0].length, end)
      .trim()
      .replace(/\s*<\|endoftext\|>$/, "");
    const role = GLAIVE_ROLES[marker[1] as string] as string;
    const at = text.indexOf("<functioncall>");
    if (role === "assistant" && at !== -1) {
      const call = glaiveCall(text.slice(at + "<functioncall>".length).replace(/\s*<\|endoftext\|>/g, ""));
      messages.push(new GlaiveMessage(makeMessage("assistant", text.slice(0, at).trim(), { calls: [call] })));
    } else if (role === "tool") messages.push(new GlaiveMessage(makeMessage("tool", text, { results: [text] })));
    else messages.push(new GlaiveMessage(makeMessage(role, text)));
  }
  return messages;
}

/** A Glaive call: JSON, or JSON whose `arguments` is a single-quoted JSON string (as the dataset writes it). */
function glaiveCall(text: string): Call {
  const quoted = /^\{\s*"name"\s*:\s*"([^"]+)"\s*,\s*"arguments"\s*:\s*'([\s\S]*)'\s*\}$/.exec(text.trim());
  if (quoted) return { name: quoted[1] as string, args: parseArguments(quoted[2]) };
  return textCall(text);
}
