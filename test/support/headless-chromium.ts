import { type Browser, chromium, type Page } from "playwright-core";

/**
 * Debian's Chromium (`apt-get install chromium`; .ci/run installs it), driven by playwright-core,
 * for the dashboard's browser test and benchmark. LWM_CHROMIUM points at another binary.
 */
export const CHROMIUM = process.env.LWM_CHROMIUM ?? "/usr/bin/chromium";

/** Headless, no sandbox (CI runs as root), and nothing that reaches the network by itself. */
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}

/** Everything the page reports as a problem (console errors and warnings, page errors, failed requests), as it happens. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") errors.push(`${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  page.on("requestfailed", (request) => errors.push(`request failed: ${request.url()}`));
  return errors;
}
