import type { Page } from "playwright-core";

// The dashboard's "no broken words" check, shared by the browser suites (test/dashboard-browser.test.ts,
// test/dashboard-measured.test.ts, test/ablate-dashboard.test.ts).
/**
 * Every word the browser laid out across two lines, in the table cells, the contents bar, the
 * summary cards and the charts' legends of what is shown: "cell text: word". Each word is measured
 * as a DOM Range: a word on one line has all its boxes at one height. A word is a run of non-space
 * characters; in a record id's cell (td.id) the id may also break after - / _ . or :.
 */
export async function brokenWords(page: Page): Promise<string[]> {
  return page.locator("body").evaluate((body) => {
    const doc = body.ownerDocument;
    const broken: string[] = [];
    for (const element of body.querySelectorAll("main :is(td, th, nav a, .card span, figure.chart span)")) {
      if (element.getClientRects().length === 0) continue; // not shown
      const pattern = element.closest("td.id") ? /[^\s\-/_.:]+[-/_.:]?/g : /\S+/g;
      const walker = doc.createTreeWalker(element, 4 /* NodeFilter.SHOW_TEXT */);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const match of (node.textContent ?? "").matchAll(pattern)) {
          const range = doc.createRange();
          range.setStart(node, match.index);
          range.setEnd(node, match.index + match[0].length);
          const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
          if (lines.size > 1) broken.push(`${element.textContent}: ${match[0]}`);
        }
      }
    }
    return broken;
  });
}
