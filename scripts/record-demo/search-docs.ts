/**
 * The document set of the demo search service: short pages written for this project
 * (scripts/record-demo/search-docs/*.md), each a YAML front matter (title, url, site, published)
 * and a plain-text body.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { z } from "zod";

export const SEARCH_DOCS_DIR = new URL("./search-docs/", import.meta.url).pathname;

const frontMatterSchema = z.object({
  title: z.string().min(1),
  url: z.url(),
  site: z.string().min(1),
  /** ISO date-time without zone, as Brave's `page_age`. */
  published: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/),
});

export interface SearchDocument extends z.infer<typeof frontMatterSchema> {
  /** The file name, also the index id. */
  id: string;
  body: string;
}

/** Every document, in file-name order (the index is built in that order, so ties rank the same way each run). */
export function loadDocuments(dir = SEARCH_DOCS_DIR): SearchDocument[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => {
      const text = readFileSync(join(dir, name), "utf8");
      const parts = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
      if (!parts) throw new Error(`${name}: expected YAML front matter between --- lines`);
      const meta = frontMatterSchema.parse(parse(parts[1] as string));
      return { id: name, ...meta, body: (parts[2] as string).trim() };
    });
}
