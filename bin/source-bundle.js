// Whether the bundle in dist/ (scripts/build-bundle.ts) was built from the sources as they are now.
// The launcher runs the bundle only then, and the sources otherwise: an edit to src/ (or new
// dependencies) is never hidden by an older bundle, it only costs the start-up the bundle saves.
// Plain JavaScript: the launcher reads it before any TypeScript is loaded.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/** The bundle's folder and its record of what it was built from. */
export const BUNDLE_DIR = "dist";
export const BUILD_INFO = "build-info.json";

/** Files outside src/ that change what the bundle would hold: the dependencies and the build itself. */
const ALSO_HASHED = [
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
 * One line per module file under src/ and per file of ALSO_HASHED: its path, size and modification
 * time. Cheap (stat only, ~10 ms) and changed by any edit, checkout or install.
 * @param {string} root the package folder
 * @returns {string[]}
 */
export function sourceStamps(root) {
  const files = readdirSync(join(root, "src"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && MODULE_FILE.test(entry.name))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
  return [...files, ...ALSO_HASHED].map((file) => {
    try {
      const stat = statSync(join(root, file));
      return `${file} ${stat.size} ${stat.mtimeMs}`;
    } catch {
      // A file of ALSO_HASHED that does not exist (no install yet) is part of the state too.
      return `${file} missing`;
    }
  });
}

/**
 * The digest of sourceStamps: what a bundle records it was built from.
 * @param {string} root the package folder
 * @returns {string}
 */
export function sourceFingerprint(root) {
  return fingerprintOf(sourceStamps(root));
}

/**
 * @param {string[]} stamps
 * @returns {string}
 */
export function fingerprintOf(stamps) {
  return createHash("sha256").update(stamps.join("\n")).digest("hex");
}

/**
 * What changed since the bundle was built (its record keeps the stamps): the files whose stamp
 * differs, was added or is gone. Empty when the bundle is fresh or there is none to compare with.
 * @param {string} root the package folder
 * @returns {string[]}
 */
export function changedSinceBundle(root) {
  let built;
  try {
    built = JSON.parse(readFileSync(join(root, BUNDLE_DIR, BUILD_INFO), "utf8")).stamps;
  } catch {
    return [];
  }
  if (!Array.isArray(built)) return [];
  const now = new Set(sourceStamps(root));
  const before = new Set(built);
  const path = (stamp) => stamp.split(" ")[0];
  return [...new Set([...[...now].filter((s) => !before.has(s)), ...built.filter((s) => !now.has(s))].map(path))].sort();
}

/**
 * The bundle's CLI entry when the bundle matches the sources, else null (none built, an older one,
 * or a damaged record).
 * @param {string} root the package folder
 * @returns {string | null}
 */
export function freshBundleEntry(root) {
  let info;
  try {
    info = JSON.parse(readFileSync(join(root, BUNDLE_DIR, BUILD_INFO), "utf8"));
  } catch {
    return null;
  }
  if (typeof info?.fingerprint !== "string" || typeof info?.entry !== "string") return null;
  try {
    return info.fingerprint === sourceFingerprint(root) ? join(root, BUNDLE_DIR, info.entry) : null;
  } catch {
    // No src/ to compare with (a trimmed copy of the package): the bundle cannot be vouched for.
    return null;
  }
}
