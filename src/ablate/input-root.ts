import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import type { DottedOverride } from "../config/dotted-overrides.ts";
import { loadConfig } from "../config/load-config.ts";
import { UserError } from "../core/errors.ts";

/**
 * `lwm-data ablate --input-root DIR`: the config's inputs read from another folder. Every input path
 * that lies under the config's own input root (`input.root`, else the config's folder) is moved to
 * the same place under DIR, and DIR becomes `input.root` (so shards label their sources relative to
 * it, the same wherever the folder is). What bench/ablate/real-*.yaml need: they name the
 * third-party samples relative to the samples folder beside the checkout (docs/contributing.md says where it
 * lives), and a checkout whose samples live elsewhere (LWM_THIRD_PARTY_DIR, as test/third-party/support.ts
 * reads it) passes that folder.
 *
 * Returned as dotted overrides (applied to every build of the ablation); inputs outside the
 * config's root (absolute paths elsewhere, s3:// or hf:// locations) are kept as they are.
 */
export function inputRootOverrides(configPath: string, inputRoot: string): DottedOverride[] {
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(inputRoot))
    throw new UserError(`--input-root ${inputRoot}: a local folder, not a location (set input.root in the config for a bucket)`);
  const { config } = loadConfig(configPath);
  const from = config.input.root ?? dirname(resolve(configPath));
  const to = resolve(inputRoot);
  let moved = 0;
  const inputs = config.inputs.map((input) => {
    const under = relative(from, input.path);
    if (under.startsWith("..") || isAbsolute(under) || /^[a-z][a-z0-9+.-]*:\/\//.test(input.path)) return input;
    moved++;
    return { ...input, path: join(to, under) };
  });
  if (moved === 0) throw new UserError(`--input-root ${inputRoot}: no input of ${configPath} lies under its input root ${from}`);
  return [
    { key: "input.root", value: to },
    { key: "inputs", value: inputs },
  ];
}
