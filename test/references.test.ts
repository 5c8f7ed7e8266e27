import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers.ts";

/**
 * Every reference resolves: a README section cited in code or docs (`README "Curation"`) is a
 * heading of README.md, every relative link in README.md and docs/ points at a file that exists,
 * and nothing cites design notes outside the repository.
 */
const SCANNED = ["src", "sharding", "scripts", "bench", "python", "notebooks", "test", "docs", "configs", "pipelines"];
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

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const headings = readme
  .split("\n")
  .filter((line) => /^#{2,4} /.test(line))
  .map((line) => line.replace(/^#+ /, ""));

/** Cited README sections: README "X", README 'X', README “X”. */
const CITATION = /README ["'“]([^"'”\n]+)["'”]/g;

function citations(text: string): string[] {
  return [...text.matchAll(CITATION)].map((m) => m[1] as string);
}

/** A citation resolves when a heading starts with it (headings often add a parenthesis: "Packing (`pack.enabled`)"). */
function resolves(name: string, among: readonly string[]): boolean {
  return among.some(
    (heading) => heading === name || heading.startsWith(`${name} `) || heading.startsWith(`${name},`) || heading.startsWith(`${name}:`),
  );
}

describe("references resolve", () => {
  it('every README section cited in code, tests and docs (README "X") is a README heading', () => {
    const missing: string[] = [];
    for (const file of [...SCANNED.flatMap((dir) => files(join(ROOT, dir))), join(ROOT, "README.md")]) {
      if (file.endsWith("references.test.ts")) continue; // its own examples
      const text = readFileSync(file, "utf8");
      for (const name of citations(text)) if (!resolves(name, headings)) missing.push(`${relative(ROOT, file)}: README "${name}"`);
    }
    expect([...new Set(missing)]).toEqual([]);
  });

  it("every relative link in README.md and docs/ points at a file of the repository", () => {
    const broken: string[] = [];
    for (const file of [join(ROOT, "README.md"), ...files(join(ROOT, "docs"))].filter((f) => f.endsWith(".md"))) {
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = (match[1] as string).split("#")[0] as string;
        if (target === "" || /^[a-z]+:/.test(target)) continue; // an anchor, or a URL
        if (!existsSync(resolve(dirname(file), target))) broken.push(`${relative(ROOT, file)}: ${match[1]}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("nothing cites design notes outside the repository (DESIGN.md)", () => {
    const citing = [...SCANNED.flatMap((dir) => files(join(ROOT, dir))), join(ROOT, "README.md")]
      .filter((file) => !file.endsWith("references.test.ts"))
      .filter((file) => /DESIGN\.md/.test(readFileSync(file, "utf8")))
      .map((file) => relative(ROOT, file));
    expect(citing).toEqual([]);
  });

  it("the checks catch a missing section and a broken link (negative control)", () => {
    expect(resolves("Curation", headings)).toBe(true);
    expect(resolves("No such section anywhere", headings)).toBe(false);
    expect(citations("see README \"Packing\" and README 'Curation'")).toEqual(["Packing", "Curation"]);
  });
});
