import type { Browser, Page } from "playwright-core";
import { Dashboard } from "../../src/dashboard/build-dashboard.ts";
import { startDashboardServer } from "../../src/dashboard/dashboard-server.ts";
import { dashboardHtml } from "../../src/dashboard/page-html.ts";
import { collectPageErrors } from "./headless-chromium.ts";

/**
 * The dashboard as the browser tests see it: `lwm-data dashboard` of some output folders, served on
 * a free local port, opened in a headless Chromium window once its data is drawn.
 */

/** Serves the dashboard of `dirs` (live data); its server and DuckDB session are closed by `cleanups`. */
export async function serveDashboard(dirs: string[], cleanups: (() => void)[]): Promise<string> {
  const dashboard = await Dashboard.open(dirs);
  const data = await dashboard.data({ live: true });
  const { server, url } = await startDashboardServer(dashboard, dashboardHtml(data), JSON.stringify(data), { host: "127.0.0.1", port: 0 });
  cleanups.push(() => {
    server.close();
    // A page left open keeps its connection: end it, so no request reaches the closed dashboard.
    server.closeAllConnections();
    dashboard.close();
  });
  return url;
}

/**
 * Opens `url` in a new window `width` pixels wide (`offline`: every http(s) request but the
 * page's own is refused) and waits for the page's `data-ready`; `errors` collects everything the
 * browser reports as a problem from the start.
 */
export async function openPage(
  browser: Browser,
  url: string,
  { width = 1280, offline = false }: { width?: number; offline?: boolean } = {},
): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  if (offline) await context.route(/^https?:/, (route) => route.abort());
  const page = await context.newPage();
  const errors = collectPageErrors(page);
  await page.goto(url);
  await page.waitForSelector("body[data-ready=true]");
  return { page, errors };
}

/** serveDashboard, then openPage. */
export async function openDashboardPage(
  browser: Browser,
  dirs: string[],
  cleanups: (() => void)[],
  width = 1280,
): Promise<{ page: Page; errors: string[] }> {
  return openPage(browser, await serveDashboard(dirs, cleanups), { width });
}
