/**
 * Page load of a written dashboard in headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core as test/dashboard-browser.test.ts does): from `page.goto(file://…)` until the
 * page script sets `body[data-ready=true]` (every chart drawn). Each load gets a fresh browser
 * context (no cache shared with the one before); the browser itself is started once.
 */
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { CHROMIUM, collectPageErrors, launchChromium } from "../../test/support/headless-chromium.ts";

export { CHROMIUM };

const TIMEOUT_MS = 300_000;
/** Runs before the page's scripts: notes the page's clock the moment data-ready is set. */
const READY_CLOCK = `new MutationObserver((changes, observer) => {
  if (document.body?.dataset.ready === "true") { globalThis.__benchReadyAt = performance.now(); observer.disconnect(); }
}).observe(document, { attributes: true, subtree: true, attributeFilter: ["data-ready"] });`;

export interface PageLoad {
  /** Seconds from page.goto until body[data-ready=true] was seen. */
  wallS: number;
  /** The page's own clock (performance.now(), from navigation start) when data-ready was set. */
  inPageS: number;
  /** Console errors and warnings, page errors, failed requests. */
  errors: string[];
}

export interface PageLoads {
  browser: string;
  launchS: number;
  loads: PageLoad[];
}

/** Loads `htmlPath` `count` times; undefined when there is no Chromium. */
export async function pageLoads(htmlPath: string, count: number): Promise<PageLoads | undefined> {
  if (!existsSync(CHROMIUM)) return undefined;
  const launchStart = performance.now();
  const browser = await launchChromium();
  const launchS = (performance.now() - launchStart) / 1000;
  try {
    const url = pathToFileURL(htmlPath).href;
    const loads: PageLoad[] = [];
    for (let i = 0; i < count; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await context.addInitScript({ content: READY_CLOCK });
      try {
        const page = await context.newPage();
        const errors = collectPageErrors(page);
        const started = performance.now();
        await page.goto(url, { timeout: TIMEOUT_MS });
        await page.waitForSelector("body[data-ready=true]", { timeout: TIMEOUT_MS, state: "attached" });
        const wallS = (performance.now() - started) / 1000;
        const inPageS = Number(await page.evaluate("globalThis.__benchReadyAt ?? performance.now()")) / 1000;
        loads.push({ wallS, inPageS, errors });
      } finally {
        await context.close();
      }
    }
    return { browser: `Chromium ${browser.version()}`, launchS, loads };
  } finally {
    await browser.close();
  }
}
