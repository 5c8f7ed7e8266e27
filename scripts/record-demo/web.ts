/**
 * Web demo data: Chromium (Debian's, driven by playwright-core) runs two scripted episodes on a
 * small local inventory app served from this machine, and each episode is written as BrowserGym /
 * AgentLab's `experiment_analysis.md`: the page's accessibility tree (BrowserGym's bids and AXTree
 * text) before and after each action in BrowserGym's action syntax.
 *
 *   npx node scripts/record-demo/web.ts        # or: npm run record:demo -- web
 *
 * Fixed: the app and its data, the host name (stockroom.test, mapped to the server's port, so
 * no port number reaches the files), viewport, locale and time zone, the run's date and trace IDs.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { FIXED_EPOCH_ISO, writeDemoFile } from "./common.ts";
import { actionCall, findTarget, perform } from "./web-actions.ts";
import { experimentAnalysisMarkdown, type RecordedAction, type RecordedStep } from "./web-analysis-md.ts";
import { axTreeText, markElements } from "./web-axtree.ts";
import { WEB_EPISODES, type WebEpisode } from "./web-episodes.ts";
import { serveWebApp } from "./web-server.ts";

const CHROMIUM = process.env.LWM_CHROMIUM ?? "/usr/bin/chromium";
const HOST = "stockroom.test";
const MODEL_NAME = "none (actions scripted in scripts/record-demo/web-episodes.ts)";

/** A UUID-shaped trace ID that depends only on the episode's name. */
function traceId(name: string): string {
  const h = createHash("sha256").update(`lwm-data demo web ${name}`).digest("hex");
  return [h.slice(0, 8), h.slice(8, 12), h.slice(12, 16), h.slice(16, 20), h.slice(20, 32)].join("-");
}

/** Lets the app's event handlers (hashchange, rendering) finish before the tree is read. */
async function settle(page: Page): Promise<void> {
  await page.waitForLoadState("load");
  await page.evaluate(() => {
    const win = globalThis as unknown as { requestAnimationFrame(callback: () => void): void };
    return new Promise<void>((resolve) => win.requestAnimationFrame(() => win.requestAnimationFrame(resolve)));
  });
}

async function recordEpisode(browser: Browser, episode: WebEpisode): Promise<string> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, locale: "en-US", timezoneId: "UTC" });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  const observe = async () => {
    await settle(page);
    await markElements(page);
    return { title: await page.title(), url: page.url(), tree: await axTreeText(cdp) };
  };
  await page.goto(`http://${HOST}/${episode.start}`);
  const steps: RecordedStep[] = [];
  const actions: RecordedAction[] = [];
  let seen = await observe();
  for (const scripted of episode.steps) {
    const element = "target" in scripted.action ? findTarget(seen.tree, scripted.action.target) : undefined;
    const call = actionCall(scripted.action, element?.bid);
    steps.push({ title: seen.title, url: seen.url, axtree: seen.tree.text, next: { reasoning: scripted.reasoning, call } });
    const error = await perform(page, scripted.action, element?.bid);
    if (error !== "") throw new Error(`${episode.name}: ${call} failed: ${error}`);
    actions.push({ call, ...(element ? { element } : {}), clicked: scripted.action.do === "click", error });
    seen = await observe();
  }
  steps.push({ title: seen.title, url: seen.url, axtree: seen.tree.text });
  await context.close();
  return experimentAnalysisMarkdown({
    goal: episode.goal,
    date: FIXED_EPOCH_ISO.replace("T", " ").replace(/\.\d+Z$/, ""),
    traceId: traceId(episode.name),
    modelName: MODEL_NAME,
    steps,
    actions,
  });
}

if (!existsSync(CHROMIUM)) {
  console.error(`web recorder: no Chromium at ${CHROMIUM} (apt-get install chromium, or set LWM_CHROMIUM)`);
  process.exit(1);
}
const app = await serveWebApp();
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  // The app's host name resolves to the local server; nothing else is reachable.
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", `--host-resolver-rules=MAP ${HOST} 127.0.0.1:${app.port}, MAP * ~NOTFOUND`],
});
try {
  console.log(`  Chromium ${await browser.version()} on http://${HOST}/ (127.0.0.1:${app.port})`);
  for (const episode of WEB_EPISODES) writeDemoFile(`web/${episode.name}__experiment_analysis.md`, await recordEpisode(browser, episode));
} finally {
  await browser.close();
  await app.close();
}
