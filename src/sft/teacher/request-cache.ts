import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { stableStringify } from "../../config/load-config.ts";
import { writeJsonFile } from "../../io/json-file.ts";
import type { ChatRequest } from "./chat-types.ts";
import { TEACHER_ANSWER_FORMS } from "./teacher-answer.ts";

/**
 * The endpoint as it went into a v1 cache key (`legacyRequestCacheKey`): credentials (`user:pass@`)
 * removed, trailing slashes dropped, so no secret reached the hash input.
 */
export function endpointForKey(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    url.username = "";
    url.password = "";
    return url.toString().replace(/\/+$/, "");
  } catch {
    return baseUrl.replace(/\/+$/, "");
  }
}

/**
 * The version of the key's hash input. v2 keys on what decides the answer and nothing else: the
 * endpoint is left out, so the same model served on another host or port finds its answers. v1
 * (which also hashed the endpoint) is still read, as a fallback (`legacyRequestCacheKey`).
 */
export const CACHE_KEY_VERSION = 2;

/** Every field of a request besides messages and n that changes what the server samples. */
const SAMPLING_FIELDS = ["temperature", "top_p", "max_tokens", "seed"] as const satisfies readonly (keyof ChatRequest)[];

/** The request as it goes into a key: messages reduced to role and content, unset fields left out. */
function requestIdentity(request: ChatRequest): Record<string, unknown> {
  const identity: Record<string, unknown> = { messages: request.messages.map((m) => ({ role: m.role, content: m.content })), n: request.n };
  for (const field of SAMPLING_FIELDS) if (request[field] !== undefined) identity[field] = request[field];
  return identity;
}

/**
 * sha256 of the canonical JSON (sorted keys, unset fields left out) of everything that decides the
 * answer: the model, the messages, `n` (how many candidates, in choice order) and the sampling
 * settings including the seed. Not the endpoint (moving the server changes no answer), headers or
 * API keys. The model name is the identity: different weights served under one name share answers.
 */
export function requestCacheKey(model: string, request: ChatRequest): string {
  const identity = { v: CACHE_KEY_VERSION, model, ...requestIdentity(request) };
  return createHash("sha256").update(stableStringify(identity)).digest("hex");
}

/** The v1 key (endpoint, model, request): answers cached before v2 are found under it. */
export function legacyRequestCacheKey(baseUrl: string, model: string, request: ChatRequest): string {
  const identity = { baseUrl: endpointForKey(baseUrl), model, ...requestIdentity(request) };
  return createHash("sha256").update(stableStringify(identity)).digest("hex");
}

const cachedCompletion = z.object({
  texts: z.array(z.string()),
  finishReasons: z.array(z.string().nullable()),
  /** How the server returned each choice's thinking (teacher-answer.ts); absent in answers cached before it was recorded. */
  forms: z.array(z.enum(TEACHER_ANSWER_FORMS)).optional(),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number().optional() }).optional(),
});

/** What a cache file holds: the successful answer only (no request, no headers). */
export type CachedCompletion = z.infer<typeof cachedCompletion>;

export interface RequestCache {
  get(key: string): Promise<CachedCompletion | undefined>;
  put(key: string, value: CachedCompletion): Promise<void>;
}

/** Path of a key's file: two-character fan-out folders keep directories small. */
export function cacheFilePath(dir: string, key: string): string {
  return join(dir, key.slice(0, 2), `${key}.json`);
}

/**
 * A folder of answered requests, one JSON file per key. A damaged or foreign file reads as a
 * miss (the request is made again and the file replaced) rather than stopping a long run.
 */
export function createRequestCache(dir: string): RequestCache {
  return {
    async get(key) {
      let text: string;
      try {
        text = await readFile(cacheFilePath(dir, key), "utf8");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw err;
      }
      try {
        const parsed = cachedCompletion.safeParse(JSON.parse(text));
        return parsed.success ? parsed.data : undefined;
      } catch {
        return undefined;
      }
    },
    async put(key, value) {
      // Unique temp name: several clients (processes) may answer the same key at once.
      await writeJsonFile(cacheFilePath(dir, key), value, { indent: 0, concurrentWriters: true });
    },
  };
}
