/**
 * Bundles the CLI into dist/ with rolldown, so that every `lwm-data` process and pool thread loads a
 * few chunks instead of ~600 modules (src/ and its pure-JavaScript dependencies): ~0.3 CPU-s less per
 * process (docs/benchmarks.md). bin/lwm-data.js runs the bundle only while it matches the sources
 * (bin/source-bundle.js); otherwise it runs src/ directly, as before, so the bundle is never needed
 * and never stale.
 *
 *   node scripts/build-bundle.ts              # (re)build dist/
 *   node scripts/build-bundle.ts --if-stale   # build only when dist/ does not match the sources
 *   node scripts/build-bundle.ts --optional   # a failed build warns and exits 0 (npm install's prepare step)
 *
 * `npm install` runs it (`prepare`), and so does the test suite's global setup (--if-stale).
 */
import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUILD_INFO, BUNDLE_DIR, freshBundleEntry, sourceStamps, stampsId } from "../bin/source-bundle.js";
import { BUNDLE_ENTRIES, PACKAGE_ROOT } from "../src/core/package-files.ts";

/**
 * Dependencies bundled in: pure JavaScript, loaded by most commands, many modules each (zod alone is
 * ~95 files). The others stay imports of node_modules, resolved from dist/ as from src/: native
 * addons (DuckDB), packages that start workers or read files beside themselves (piscina, parquet-wasm,
 * tokenizer data) and packages loaded only on first use (test/stage-modules.test.ts watches those
 * load as node_modules files: entities, csv-parse, stream-json…).
 */
const BUNDLED_PACKAGES = new Set([
  "zod",
  "yaml",
  "commander",
  "cli-progress",
  "diff",
  "@huggingface/jinja",
  "@xterm/headless",
  "p-queue",
  "picocolors",
  "picomatch",
  "tinyglobby",
]);

/** Older builds kept beside the current one, for processes started before it. */
const KEPT_BUILDS = 2;

const USAGE = "usage: node scripts/build-bundle.ts [--if-stale] [--optional]";

function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
}

/** Relative and absolute imports are src/ modules; a bare one is bundled only if its package is listed. */
function isExternal(specifier: string): boolean {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("\0")) return false;
  if (specifier.startsWith("node:")) return true;
  return !BUNDLED_PACKAGES.has(packageName(specifier));
}

async function buildBundle(): Promise<string> {
  // Imported here, so that --optional also covers a machine without rolldown (a production install).
  const { build, VERSION } = await import("rolldown");
  // Taken before building: a source edited meanwhile leaves the bundle stale, never wrongly fresh.
  const stamps = sourceStamps(PACKAGE_ROOT);
  const dist = join(PACKAGE_ROOT, BUNDLE_DIR);
  const name = stampsId(stamps);
  const staging = join(dist, `.building-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  try {
    await build({
      input: Object.fromEntries(BUNDLE_ENTRIES.map((entry) => [entry, join(PACKAGE_ROOT, "src", `${entry}.ts`)])),
      platform: "node",
      external: isExternal,
      logLevel: "warn",
      output: { dir: staging, format: "esm", entryFileNames: "[name].js", chunkFileNames: "chunks/[name]-[hash].js" },
    });
    // Each build in a folder of its own, never rewritten: a process running an older build keeps
    // finding its lazily loaded chunks and its worker scripts while this one is swapped in.
    // A build of the same sources already there (another build ran meanwhile) is the same files:
    // it stays, since a process may be running it.
    if (!existsSync(join(dist, name))) renameSync(staging, join(dist, name));
    const info = {
      entry: `${name}/cli/main.js`,
      entries: BUNDLE_ENTRIES,
      rolldown: VERSION,
      bundled: [...BUNDLED_PACKAGES],
      stamps,
    };
    const infoPath = join(dist, BUILD_INFO);
    writeFileSync(`${infoPath}.${process.pid}`, `${JSON.stringify(info, null, 2)}\n`);
    renameSync(`${infoPath}.${process.pid}`, infoPath);
    pruneBuilds(dist, name);
    return VERSION;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Removes all but the newest KEPT_BUILDS older builds (a process may still be running one of them). */
function pruneBuilds(dist: string, current: string): void {
  const older = readdirSync(dist, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== current && !entry.name.startsWith("."))
    .map((entry) => ({ path: join(dist, entry.name), modified: statSync(join(dist, entry.name)).mtimeMs }))
    .sort((a, b) => b.modified - a.modified);
  for (const build of older.slice(KEPT_BUILDS)) rmSync(build.path, { recursive: true, force: true });
}

const args = process.argv.slice(2);
if (args.includes("--help") || args.includes("-h")) {
  console.log(`${USAGE}\n  bundles the CLI into ${BUNDLE_DIR}/ (see the comment at the top of this file)`);
  process.exit(0);
}
const unknown = args.filter((arg) => arg !== "--if-stale" && arg !== "--optional");
if (unknown.length > 0) {
  console.error(`build-bundle: unknown argument(s) ${unknown.join(" ")}; ${USAGE}`);
  process.exit(2);
}
if (args.includes("--if-stale") && freshBundleEntry(PACKAGE_ROOT)) process.exit(0);
try {
  const started = performance.now();
  const version = await buildBundle();
  console.error(`build-bundle: ${BUNDLE_DIR}/ built in ${((performance.now() - started) / 1000).toFixed(1)} s (rolldown ${version})`);
} catch (error) {
  if (!args.includes("--optional")) throw error;
  console.error(`build-bundle: no bundle (${(error as Error).message}); lwm-data runs from src/, with a slower start-up`);
}
