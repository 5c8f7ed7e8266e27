import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
// The bundle's folder, relative to the package root: a folder per build inside, never rewritten.
import { BUNDLE_DIR } from "../../bin/source-bundle.js";

/**
 * Where the package's own files are, whether this code runs from its TypeScript sources (src/) or
 * from the bundle that scripts/build-bundle.ts writes to dist/ (bin/lwm-data.js picks the bundle when
 * it matches the sources: fewer modules to load in every process and pool thread). A module that
 * reads a file of the package, starts a worker or loads a module lazily asks here, never
 * `new URL("./x", import.meta.url)`: inside the bundle, `import.meta.url` is a chunk of dist/.
 */

const HERE = fileURLToPath(import.meta.url);

/** True inside the bundle: this module is then a chunk of dist/, not src/core/package-files.ts. */
export const BUNDLED = !HERE.endsWith(".ts");

/** The folder holding lwm-data's package.json (the repository root, or node_modules/lwm-data). */
export const PACKAGE_ROOT = findPackageRoot(dirname(HERE));

/**
 * This bundle's build folder (dist/<build>/), whose entries and chunks belong together: a process
 * keeps loading its own build's workers and lazy modules while a newer build is written beside it.
 */
const BUILD_ROOT = BUNDLED ? join(PACKAGE_ROOT, BUNDLE_DIR, relative(join(PACKAGE_ROOT, BUNDLE_DIR), HERE).split(sep)[0] as string) : null;

/**
 * The modules the bundle has as entries (src/ paths without `.ts`): the CLI, the worker threads'
 * scripts, and the modules loaded on first use with `require` (a dynamic import cannot serve a
 * synchronous caller). Each is `dist/<build>/<name>.js`, sharing its chunks with the others.
 */
export const BUNDLE_ENTRIES = [
  "cli/main",
  "pipeline/task-worker",
  "verify/parquet-worker",
  "io/parquet-decoder-worker",
  "normalize/pii/national-id",
  "normalize/pii/postal-address",
  "normalize/pii/person-name",
] as const;

export type BundleEntry = (typeof BUNDLE_ENTRIES)[number];

/** A path inside the package (configs/, pipelines/, bin/, package.json…). */
export function packagePath(...parts: string[]): string {
  return join(PACKAGE_ROOT, ...parts);
}

/** A data file kept beside the sources (a .wasm, a .py, rubrics), under src/ in both modes. */
export function sourceAsset(pathUnderSrc: string): string {
  return join(PACKAGE_ROOT, "src", pathUnderSrc);
}

/** The file to load for one of the bundle's entries: its dist/ build inside the bundle, else its source. */
export function moduleFile(entry: BundleEntry): string {
  return BUILD_ROOT ? join(BUILD_ROOT, `${entry}.js`) : join(PACKAGE_ROOT, "src", `${entry}.ts`);
}

function findPackageRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "lwm-data") return dir;
    if (dirname(dir) === dir) throw new Error(`lwm-data: no package.json of lwm-data above ${start}`);
  }
}
