import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers.ts";
import { anchorsOf, headingsOf, markdownLinks } from "./support/markdown.ts";

/**
 * Every reference resolves: a section cited in code, configs or docs — `README "Curation"`, or
 * `docs/curation.md "Stages"` — is a heading of that page; every relative link in README.md and
 * docs/*.md points at a file that exists, and at a heading of it when it names an anchor; and
 * nothing cites design notes outside the repository (DESIGN.md, ../shared/notes).
 */
const SCANNED = ["src", "bin", "sharding", "scripts", "bench", "python", "notebooks", "test", "docs", "configs", "pipelines"];
const TEXT = /\.(ts|js|mjs|py|sh|md|yaml|yml|ipynb)$/;

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter(
      (entry) =>
        entry.isFile() && TEXT.test(entry.name) && !entry.parentPath.includes("node_modules") && !entry.parentPath.includes("fixtures"),
    )
    .map((entry) => join(entry.parentPath, entry.name));
}

const DOC_PAGES = readdirSync(join(ROOT, "docs"))
  .filter((name) => name.endsWith(".md"))
  .map((name) => `docs/${name}`);
const PAGE_HEADINGS = new Map<string, string[]>(
  ["README.md", ...DOC_PAGES].map((page) => [page, headingsOf(readFileSync(join(ROOT, page), "utf8"))]),
);

/** Cited sections: README "X", README 'X', README “X”, and docs/<page>.md "X" (any of those quotes). */
const CITATION = /(README|docs\/[\w.-]+\.md) ["'“]([^"'”\n]+)["'”]/g;

function citations(text: string): { page: string; name: string }[] {
  return [...text.matchAll(CITATION)].map((m) => ({ page: m[1] === "README" ? "README.md" : (m[1] as string), name: m[2] as string }));
}

/** A citation resolves when a heading starts with it (headings often add a parenthesis: "Packing (`pack.enabled`)"). */
function resolves(name: string, among: readonly string[]): boolean {
  return among.some(
    (heading) => heading === name || heading.startsWith(`${name} `) || heading.startsWith(`${name},`) || heading.startsWith(`${name}:`),
  );
}

function unresolved(text: string, headings: ReadonlyMap<string, readonly string[]>): string[] {
  return citations(text)
    .filter(({ page, name }) => !resolves(name, headings.get(page) ?? []))
    .map(({ page, name }) => `${page === "README.md" ? "README" : page} "${name}"${headings.has(page) ? "" : " (no such page)"}`);
}

/** Where a relative link goes wrong: a missing file, or an anchor no heading of the target page makes. */
function brokenLink(fromFile: string, target: string): string | undefined {
  const [path, anchor] = target.split("#") as [string, string | undefined];
  if (/^[a-z]+:/.test(path)) return undefined; // a URL
  const file = path === "" ? fromFile : resolve(dirname(fromFile), path);
  if (!existsSync(file)) return "no such file";
  if (anchor === undefined || !file.endsWith(".md")) return undefined;
  return anchorsOf(readFileSync(file, "utf8")).has(anchor) ? undefined : `no heading makes #${anchor}`;
}

const NOTES_OUTSIDE = /DESIGN\.md|\.\.\/shared\/(?!fixtures\b)/;

describe("references resolve", () => {
  it('every section cited in code, configs, tests and docs (README "X", docs/<page>.md "X") is a heading of that page', () => {
    const missing: string[] = [];
    for (const file of [...SCANNED.flatMap((dir) => files(join(ROOT, dir))), join(ROOT, "README.md")]) {
      if (basename(file) === "references.test.ts") continue; // its own examples
      for (const problem of unresolved(readFileSync(file, "utf8"), PAGE_HEADINGS)) missing.push(`${relative(ROOT, file)}: ${problem}`);
    }
    expect([...new Set(missing)]).toEqual([]);
  });

  it("every relative link in README.md and docs/ points at a file of the repository, and at a heading of it when it names one", () => {
    const broken: string[] = [];
    for (const page of ["README.md", ...DOC_PAGES]) {
      const file = join(ROOT, page);
      for (const target of markdownLinks(readFileSync(file, "utf8"))) {
        const problem = brokenLink(file, target);
        if (problem) broken.push(`${page}: ${target} (${problem})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("nothing cites design notes outside the repository (DESIGN.md, ../shared/notes)", () => {
    const citing = [...SCANNED.flatMap((dir) => files(join(ROOT, dir))), join(ROOT, "README.md")]
      .filter((file) => basename(file) !== "references.test.ts")
      .filter((file) => NOTES_OUTSIDE.test(readFileSync(file, "utf8")))
      .map((file) => relative(ROOT, file));
    expect(citing).toEqual([]);
  });

  it("the checks catch a missing section, a missing page, a broken link and an outside citation (negative controls)", () => {
    const readme = PAGE_HEADINGS.get("README.md") ?? [];
    expect(resolves("The two commands", readme)).toBe(true);
    expect(resolves("No such section anywhere", readme)).toBe(false);
    expect(citations("see README \"Packing\" and README 'Curation'")).toEqual([
      { page: "README.md", name: "Packing" },
      { page: "README.md", name: "Curation" },
    ]);
    // A docs citation is checked against its own page, not against README or another page.
    expect(unresolved('docs/curation.md "Stages"', PAGE_HEADINGS)).toEqual([]);
    expect(unresolved('docs/curation.md "Batching in PyTorch"', PAGE_HEADINGS)).toEqual(['docs/curation.md "Batching in PyTorch"']);
    expect(unresolved('docs/no-such-page.md "Stages"', PAGE_HEADINGS)).toEqual(['docs/no-such-page.md "Stages" (no such page)']);
    // Links: a missing file, a missing anchor, a good anchor.
    const readmeFile = join(ROOT, "README.md");
    expect(brokenLink(readmeFile, "docs/no-such-page.md")).toBe("no such file");
    expect(brokenLink(readmeFile, "docs/curation.md#no-such-heading")).toBe("no heading makes #no-such-heading");
    expect(brokenLink(readmeFile, "docs/curation.md#stages")).toBeUndefined();
    expect(brokenLink(readmeFile, "#the-two-commands")).toBeUndefined();
    expect(NOTES_OUTSIDE.test("see ../shared/notes/slurm-local.md")).toBe(true);
    expect(NOTES_OUTSIDE.test("samples in ../shared/fixtures/real")).toBe(false);
  });
});
