import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { stableStringify } from "../../config/load-config.ts";
import { writeJsonFile } from "../../io/json-file.ts";
import type { ChatRequest } from "./chat-types.ts";

/**
 * The endpoint as it goes into a cache key: credentials (`user:pass@`) removed, trailing slashes
 * dropped, so the same server keys the same whoever calls it and no secret reaches the hash input.
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
 * sha256 of the canonical JSON (sorted keys, unset fields left out) of everything that decides the
 * answer: endpoint, model, messages and sampling settings. Headers and API keys are not part of it.
 */
export function requestCacheKey(baseUrl: string, model: string, request: ChatRequest): string {
  const identity: Record<string, unknown> = {
    baseUrl: endpointForKey(baseUrl),
    model,
    messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
    n: request.n,
  };
  for (const field of ["temperature", "top_p", "max_tokens", "seed"] as const) {
    if (request[field] !== undefined) identity[field] = request[field];
  }
  return createHash("sha256").update(stableStringify(identity)).digest("hex");
}

const cachedCompletion = z.object({
  texts: z.array(z.string()),
  finishReasons: z.array(z.string().nullable()),
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
