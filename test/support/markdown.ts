/**
 * Just enough Markdown for the docs tests: headings, GitHub's heading anchors, links and fenced
 * blocks, each outside fenced code (a `# comment` in a bash block is not a heading).
 */

export interface FencedBlock {
  /** The info string's first word: `bash`, `yaml`, `python`, or "" for none. */
  lang: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The reason of a `<!-- not-run: reason -->` comment on the line before the fence, if any. */
  notRun?: string;
}

interface Line {
  text: string;
  /** Inside a fenced block (the fences included). */
  fenced: boolean;
  /** This line opens a fenced block (`open`) or closes one (`close`). */
  fence?: "open" | "close";
}

/** CommonMark fences: ``` or ~~~ (3 or more), closed by the same character, at least as many, nothing after. */
function lines(markdown: string): Line[] {
  let fence: string | undefined;
  return markdown.split("\n").map((text): Line => {
    const match = /^(`{3,}|~{3,})(.*)$/.exec(text);
    const marks = match?.[1] ?? "";
    const rest = match?.[2] ?? "";
    if (fence !== undefined) {
      if (match && marks[0] === fence[0] && marks.length >= fence.length && rest.trim() === "") {
        fence = undefined;
        return { text, fenced: true, fence: "close" };
      }
      return { text, fenced: true };
    }
    // A backtick fence's info string holds no backtick: "```` ``` ````" opens an inline code span.
    if (match && !(marks[0] === "`" && rest.includes("`"))) {
      fence = marks;
      return { text, fenced: true, fence: "open" };
    }
    return { text, fenced: false };
  });
}

/** Every ATX heading's text, in order, any level. */
export function headingsOf(markdown: string): string[] {
  return lines(markdown)
    .filter((line) => !line.fenced && /^#{1,6} /.test(line.text))
    .map((line) => line.text.replace(/^#{1,6} /, "").trim());
}

/** GitHub's anchor of a heading: lower case, punctuation dropped (code ticks too), spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors a page's headings make; a repeated heading gets `-1`, `-2`, … as on GitHub. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const heading of headingsOf(markdown)) {
    const base = slug(heading);
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The targets of inline links `[text](target)` outside fenced code and code spans. */
export function markdownLinks(markdown: string): string[] {
  return lines(markdown)
    .filter((line) => !line.fenced)
    .flatMap((line) => [...line.text.replace(/`[^`]*`/g, "``").matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string));
}

/** Every fenced block, with its language and a `<!-- not-run: reason -->` mark if it has one. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const all = lines(markdown);
  const blocks: FencedBlock[] = [];
  all.forEach((open, i) => {
    if (open.fence !== "open") return;
    let end = i + 1;
    while (end < all.length && all[end]?.fence !== "close") end++;
    blocks.push({
      lang:
        open.text
          .replace(/^(`{3,}|~{3,})/, "")
          .trim()
          .split(/\s/)[0] ?? "",
      code: all
        .slice(i + 1, end)
        .map((line) => line.text)
        .join("\n"),
      line: i + 1,
      notRun: /^<!-- not-run: (.+?) -->$/.exec(all[i - 1]?.text.trim() ?? "")?.[1],
    });
  });
  return blocks;
}

/** The line (1-based) of a fence that is never closed — a stray ``` at a line start swallows the rest of the page. */
export function unclosedFence(markdown: string): number | undefined {
  const all = lines(markdown);
  let open: number | undefined;
  all.forEach((line, i) => {
    if (line.fence === "open") open = i + 1;
    else if (line.fence === "close") open = undefined;
  });
  return open;
}
