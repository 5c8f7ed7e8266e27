// Whether the bundle in dist/ (scripts/build-bundle.ts) was built from the sources as they are now.
// The launcher runs the bundle only then, and the sources otherwise: an edit to src/ (or new
// dependencies) is never hidden by an older bundle, it only costs the start-up the bundle saves.
// Plain JavaScript: the launcher reads it before any TypeScript is loaded. Every process pays for
// this check, so it stats files and compares strings: no hashing, no path module (~6 ms).
import { readdirSync, readFileSync, statSync } from "node:fs";

/** The bundle's folder and its record of what it was built from. */
export const BUNDLE_DIR = "dist";
export const BUILD_INFO = "build-info.json";

/** Files outside src/ that change what the bundle would hold: the dependencies and the build itself. */
const ALSO_STAMPED = [
  "package.json",
  "package-lock.json",
  "node_modules/.package-lock.json",
  "scripts/build-bundle.ts",
  "bin/source-bundle.js",
];

/**
 * The files under src/ a bundle is built from. Data files beside them (a .wasm, a .py and the
 * `__pycache__` Python writes beside it, rubrics) are read from src/ in both modes, so they never
 * make a bundle stale.
 */
const MODULE_FILE = /\.(ts|js|mjs|cjs|json)$/;

/**
 * One line per module file under src/ (in a fixed order) and per file of ALSO_STAMPED: its path
 * relative to the package, size and modification time. Changed by any edit, checkout or install.
 * @param {string} root the package folder
 * @returns {string[]}
 */
export function sourceStamps(root) {
  const files = [];
  const walk = (/** @type {string} */ dir) => {
    const entries = readdirSync(`${root}/${dir}`, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      if (entry.isDirectory()) walk(`${dir}/${entry.name}`);
      else if (entry.isFile() && MODULE_FILE.test(entry.name)) files.push(`${dir}/${entry.name}`);
    }
  };
  walk("src");
  return [...files, ...ALSO_STAMPED].map((file) => {
    // A file of ALSO_STAMPED that does not exist (no install yet) is part of the state too.
    const stat = statSync(`${root}/${file}`, { throwIfNoEntry: false });
    return stat ? `${file} ${stat.size} ${stat.mtimeMs}` : `${file} missing`;
  });
}

/**
 * A short name for a set of stamps (53-bit FNV-style string hash, in hex): the build's folder.
 * @param {string[]} stamps
 * @returns {string}
 */
export function stampsId(stamps) {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  const text = stamps.join("\n");
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}

/**
 * The bundle's record (dist/build-info.json), or null when there is none or it is damaged.
 * @param {string} root the package folder
 * @returns {{ entry: string, stamps: string[] } | null}
 */
function buildInfo(root) {
  try {
    const info = JSON.parse(readFileSync(`${root}/${BUNDLE_DIR}/${BUILD_INFO}`, "utf8"));
    if (typeof info?.entry !== "string" || !Array.isArray(info.stamps)) return null;
    return info;
  } catch {
    return null;
  }
}

/**
 * The bundle's CLI entry when the bundle was built from the sources as they are now, else null
 * (none built, an older one, a damaged record, or no src/ to compare with).
 * @param {string} root the package folder
 * @returns {string | null}
 */
export function freshBundleEntry(root) {
  const info = buildInfo(root);
  if (!info) return null;
  try {
    return sourceStamps(root).join("\n") === info.stamps.join("\n") ? `${root}/${BUNDLE_DIR}/${info.entry}` : null;
  } catch {
    // No src/ to compare with (a trimmed copy of the package): the bundle cannot be vouched for.
    return null;
  }
}

/**
 * What changed since the bundle was built: the files whose stamp differs, was added or is gone.
 * Empty when the bundle is fresh or there is none to compare with.
 * @param {string} root the package folder
 * @returns {string[]}
 */
export function changedSinceBundle(root) {
  const info = buildInfo(root);
  if (!info) return [];
  const now = new Set(sourceStamps(root));
  const before = new Set(info.stamps);
  const changed = [...[...now].filter((stamp) => !before.has(stamp)), ...info.stamps.filter((stamp) => !now.has(stamp))];
  return [...new Set(changed.map((stamp) => stamp.split(" ")[0]))].sort();
}
