import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { sourceAsset } from "../core/package-files.ts";
import type { DashboardData } from "./dashboard-data.ts";

const require = createRequire(import.meta.url);

/**
 * A file of an installed package by its path in the package. Found from the package's entry
 * point, since `exports` hides dist/ from require.resolve (the UMD builds are an export condition).
 */
function packageFile(name: string, path: string): string {
  for (let dir = dirname(require.resolve(name)); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === name) return join(dir, path);
  }
  throw new Error(`cannot find the installed package ${name}`);
}

/** d3 and Observable Plot's UMD builds, and the page's own script: inlined so the page works offline. */
function scripts(): string[] {
  return [
    readFileSync(packageFile("d3", "dist/d3.min.js"), "utf8"),
    readFileSync(packageFile("@observablehq/plot", "dist/plot.umd.min.js"), "utf8"),
    readFileSync(sourceAsset("dashboard/client/dashboard-app.js"), "utf8"),
  ];
}

/**
 * JSON inside a script element: `<` escaped so no text in the data (tool output can contain
 * `</script>`) can end the element early; JSON.parse reads `\u003c` back as `<`.
 */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replaceAll("<", "\\u003c").replaceAll("\u2028", "\\u2028").replaceAll("\u2029", "\\u2029");
}

/** A script's text, with any `</script` (none today) broken so it cannot close the element. */
function scriptText(code: string): string {
  return code.replaceAll("</script", "<\\/script");
}

const STYLE = `
  :root { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330; background: #fafbfc; }
  body { margin: 0 auto; max-width: 1180px; padding: 0 24px 48px; }
  header h1 { margin: 20px 0 4px; font-size: 22px; }
  nav#contents { position: sticky; top: 0; background: #fafbfc; border-bottom: 1px solid #dde1e6; z-index: 2; padding-top: 6px; }
  nav#contents a { color: #2f5f9e; text-decoration: none; white-space: nowrap; }
  nav#contents a:hover { text-decoration: underline; }
  nav#contents a:focus-visible { outline: 2px solid #2f5f9e; outline-offset: 2px; border-radius: 3px; }
  nav .tabs { display: flex; flex-wrap: wrap; gap: 2px; }
  nav .tab { font-size: 14px; padding: 6px 12px; border: 1px solid transparent; border-bottom: none; border-radius: 6px 6px 0 0; margin-bottom: -1px; }
  nav .tab.current { background: white; border-color: #dde1e6; color: #1d2330; font-weight: 600; }
  nav .sublinks { background: white; border-top: 1px solid #dde1e6; padding: 6px 12px; font-size: 13px; }
  nav .sublinks[hidden], nav .view-links[hidden] { display: none; }
  nav .view-links { display: flex; flex-wrap: wrap; gap: 4px 18px; }
  nav .view-links::before { content: "On this tab:"; color: #58606e; }
  .view[hidden] { display: none; }
  section { margin-top: 28px; scroll-margin-top: calc(var(--contents-height, 70px) + 8px); }
  section:focus { outline: none; }
  h2 { font-size: 18px; border-bottom: 1px solid #dde1e6; padding-bottom: 4px; }
  p.intro, p.meta { color: #58606e; font-size: 13px; max-width: 900px; }
  .cards { display: flex; flex-wrap: wrap; gap: 10px; margin-bottom: 14px; }
  .cards h3, .cards p.meta { flex-basis: 100%; margin: 4px 0; }
  .card { background: white; border: 1px solid #dde1e6; border-radius: 6px; padding: 8px 14px; min-width: 110px; display: flex; flex-direction: column; }
  .card .value { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
  .card .label, .card .sub { font-size: 12px; color: #58606e; }
  figure.chart { margin: 12px 0; background: white; border: 1px solid #e4e7eb; border-radius: 6px; padding: 8px; overflow-x: auto; }
  p.empty { color: #58606e; font-style: italic; }
  p.error { color: #b00020; }
  .table-scroll { overflow-x: auto; max-width: 100%; margin: 10px 0; }
  .table-scroll table { margin: 0; }
  table { border-collapse: collapse; font-size: 13px; margin: 10px 0; font-variant-numeric: tabular-nums; }
  /* Cells never break inside a word: short text keeps to one line, prose wraps between words, and
     a table too wide for the page scrolls sideways in its holder. */
  th, td { border-bottom: 1px solid #e4e7eb; padding: 3px 10px; text-align: left; vertical-align: top;
    white-space: nowrap; word-break: normal; overflow-wrap: normal; hyphens: none; }
  th.prose, td.prose { white-space: normal; min-width: 14em; max-width: 36em; }
  td.id { white-space: normal; }
  th { background: #f0f2f5; }
  pre.diff { background: white; border: 1px solid #e4e7eb; padding: 8px; font-size: 12px; }
  .controls label { margin-right: 14px; font-size: 13px; }
  /* The turn list takes the width its columns need (up to 62%), the open turn the rest; on a narrow
     window the list is a scrolling box above the open turn. */
  .browser { display: grid; grid-template-columns: fit-content(62%) minmax(0, 1fr); gap: 16px; align-items: start; }
  #filtered-table { font-size: 12px; }
  #example-list { overflow-x: auto; }
  #example-table tr.example { cursor: pointer; }
  #example-table tr.example:hover { background: #eef3fb; }
  .detail { background: white; border: 1px solid #e4e7eb; border-radius: 6px; padding: 10px 14px; min-height: 120px; scroll-margin-top: calc(var(--contents-height, 70px) + 8px); }
  /* The open turn stays in view beside the list however far down the list it was clicked. */
  .browser .detail { position: sticky; top: calc(var(--contents-height, 70px) + 8px); max-height: calc(100vh - var(--contents-height, 70px) - 16px); overflow-y: auto; }
  @media (max-width: 1199px) {
    .browser { grid-template-columns: minmax(0, 1fr); }
    #example-list { max-height: 50vh; overflow-y: auto; border: 1px solid #e4e7eb; border-radius: 6px; background: white; }
    #example-list .pager { position: sticky; bottom: 0; background: white; padding: 4px 8px; }
    #example-table thead th { position: sticky; top: 0; }
    .browser .detail { position: static; max-height: none; }
  }
  .detail h3 { font-size: 15px; margin: 4px 0; overflow-wrap: break-word; }
  .detail p { font-size: 13px; margin: 4px 0; }
  pre.tokens { white-space: pre-wrap; overflow-wrap: break-word; font-size: 12px; background: #fcfcfd; border: 1px solid #eef0f3; padding: 8px; max-height: 480px; overflow-y: auto; }
  .tok.masked { color: #9aa1ad; }
  .tok.trained { color: #0b3d17; background: #c9f2d3; }
  .control-example { margin: 10px 0; min-height: 0; }
  mark.evidence { background: #ffd966; color: inherit; outline: 1px solid #e0a800; }
  footer { margin-top: 40px; color: #58606e; font-size: 12px; }
  @media print { nav#contents { display: none; } .view[hidden] { display: block; } }
`;

/** The whole dashboard as one HTML document: styles, libraries, data and the page script inline. */
export function dashboardHtml(data: DashboardData): string {
  const title =
    data.runs.length === 2 ? `${data.runs[0]?.summary.label} vs ${data.runs[1]?.summary.label}` : (data.runs[0]?.summary.label ?? "");
  const escapeHtml = (text: string) =>
    text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>lwm-data dashboard · ${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>Mask statistics · ${escapeHtml(title)}</h1></header>
<main id="app"></main>
<script type="application/json" id="dashboard-data">${scriptJson(data)}</script>
${scripts()
  .map((code) => `<script>${scriptText(code)}</script>`)
  .join("\n")}
</body>
</html>
`;
}
