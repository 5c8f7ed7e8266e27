/**
 * Web-agent runs with BrowserGym AXTree observations (`[bid] role 'name', prop=value`, a tab per
 * level), as in data/demo/web. The site's header and navigation stay the same from page to page
 * (what the tree diff and history novelty see); no-op clicks return the same page again.
 */
import type { CanonicalRecord, DomainParams } from "../params.ts";
import type { Rng } from "../random.ts";
import { capitalize, className, isoDate, personName, sentence, techWord, word, words } from "../text.ts";

interface Page {
  lines: string[];
  clickable: string[];
  textboxes: string[];
}

class Site {
  readonly host: string;
  readonly title: string;
  private bid = 40;
  readonly header: string[];
  readonly headerBids: string[] = [];
  private readonly rng: Rng;
  constructor(rng: Rng) {
    this.rng = rng;
    this.host = `dev${rng.int(100000, 999999)}.${rng.pick(["service-now.com", "shop.example.com", "gitlab.example.org", "wiki.example.net"])}`;
    this.title = className(rng);
    this.header = [
      `\t[${this.next()}] generic, live='assertive', atomic, relevant='additions text'`,
      `\t[${this.next()}] navigation 'Global skip links'`,
      `\t\t[${this.next()}] link 'Skip to main content', url='javascript:void(0);'`,
      `\t[${this.next()}] navigation 'Primary'`,
      ...Array.from({ length: rng.int(6, 14) }, () => {
        const bid = this.next();
        this.headerBids.push(bid);
        return `\t\t[${bid}] button '${capitalize(word(rng))}', expanded=False`;
      }),
      `\t\t[${this.next()}] button '${capitalize(personName(rng))} ${capitalize(personName(rng))}: available', expanded=False`,
    ];
  }
  next(): string {
    this.bid += this.rng.int(1, 4);
    return String(this.bid);
  }

  page(heading: string, chars: number): Page {
    const rng = this.rng;
    const clickable = [...this.headerBids];
    const textboxes: string[] = [];
    const main: string[] = [`\t[${this.next()}] main '${heading}'`, `\t\t[${this.next()}] heading '${heading}', level=1`];
    let length = this.header.join("\n").length + 200;
    while (length < chars) {
      const bid = this.next();
      const block = rng.weighted([
        [[`\t\t[${bid}] paragraph ''`, `\t\t\tStaticText '${sentence(rng, 6, 20).replace(/'/g, "")}'`], 3],
        [[`\t\t[${bid}] link '${capitalize(words(rng, rng.int(1, 4)))}', url='https://${this.host}/${word(rng)}/${rng.hex(8)}'`], 3],
        [[`\t\t[${bid}] button '${capitalize(word(rng))} ${word(rng)}'`], 2],
        [[`\t\t[${bid}] textbox '${capitalize(word(rng))}', value='', required`], 1],
        [
          [
            `\t\t[${bid}] row ''`,
            `\t\t\t[${this.next()}] gridcell '${techWord(rng).toUpperCase()}${rng.int(1000, 9999)}'`,
            `\t\t\t[${this.next()}] gridcell '${words(rng, 3)}'`,
            `\t\t\t[${this.next()}] gridcell '${isoDate(rng).replace("T", " ")}'`,
          ],
          2,
        ],
      ] as const);
      if (block[0]?.includes(" textbox ")) textboxes.push(bid);
      else if (!block[0]?.includes(" paragraph ")) clickable.push(bid);
      main.push(...block);
      length += block.join("\n").length + 1;
    }
    const url = `https://${this.host}/now/nav/ui/${word(rng)}/${rng.hex(12)}`;
    return { lines: [`RootWebArea '${heading} | ${this.title}', focused, url='${url}'`, ...this.header, ...main], clickable, textboxes };
  }
}

export function webTrajectory(rng: Rng, id: string, p: DomainParams): CanonicalRecord {
  const site = new Site(rng);
  let page = site.page("Home", rng.quantiles(p.observation));
  const initialObservation = page.lines.join("\n");
  const turns: CanonicalRecord["turns"] = [];
  for (let i = rng.quantiles(p.turns); i > 0; i--) {
    const move = rng.weighted([
      ["click", 7],
      ["noop", 1],
      ["fill", page.textboxes.length > 0 ? 1 : 0],
      ["scroll", 1],
    ] as const);
    if (move === "fill") {
      const bid = rng.pick(page.textboxes);
      const value = words(rng, rng.int(1, 3));
      page = {
        ...page,
        lines: page.lines.map((line) => (line.includes(`[${bid}] textbox`) ? line.replace("value=''", `value='${value}'`) : line)),
      };
      turns.push({ action: `fill('${bid}', '${value}')`, observation: page.lines.join("\n") });
    } else if (move === "click") {
      const bid = rng.pick(page.clickable);
      page = site.page(capitalize(words(rng, rng.int(1, 3))), rng.quantiles(p.observation));
      turns.push({ action: `click('${bid}')`, observation: page.lines.join("\n") });
    } else {
      turns.push({
        action: move === "noop" ? `click('${rng.pick(page.clickable)}')` : `scroll(0, ${rng.int(2, 8) * 100})`,
        observation: page.lines.join("\n"),
      });
    }
  }
  return {
    id,
    domain: "web",
    task: `${capitalize(words(rng, rng.int(3, 6)))} in the "${site.title}" ${rng.pick(["menu", "list", "form", "dashboard"])}, then ${words(rng, rng.int(3, 7))}.`,
    initialObservation,
    turns,
    meta: { generator: "lwm-data bench/synthetic", benchmark: "workarena-like" },
  };
}
