import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/**
 * `npm:<package>@<version>/<file>`: a machine-independent name for a file shipped inside an npm
 * package (manifests must not depend on where node_modules happens to be).
 */
export function packageFileLabel(filePath: string): string {
  for (let dir = dirname(filePath); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (!existsSync(manifest)) continue;
    const { name, version } = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
    if (name && version) return `npm:${name}@${version}/${relative(dir, filePath)}`;
  }
  return filePath;
}
