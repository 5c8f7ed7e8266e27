import { DROIDBOT_TREE_FORMAT, parseDroidBotState } from "../../read/droidbot.ts";
import { parseUiautomatorXml, TreeParseError, UIAUTOMATOR_TREE_FORMAT } from "../../read/uiautomator-xml.ts";
import type { DomainNormalizer } from "../normalizer.ts";
import type { A11yNode, TreeParseOptions } from "../tree/a11y-tree.ts";
import { normalizeTreeTrajectory } from "./web.ts";

/** Android screens: a uiautomator dump (XML) or a DroidBot device state (JSON), by hint or by content. */
export function parseAndroidObservation(text: string, format: unknown, options: TreeParseOptions = {}): A11yNode {
  const start = text.trimStart();
  if (format === DROIDBOT_TREE_FORMAT || (format === undefined && start.startsWith("{"))) return parseDroidBotState(text, options);
  if (format === UIAUTOMATOR_TREE_FORMAT || (format === undefined && start.startsWith("<")))
    return parseUiautomatorXml(text.trim(), options);
  throw new TreeParseError("neither a uiautomator dump nor a DroidBot state");
}

export const androidNormalizer: DomainNormalizer = {
  domain: "android",
  normalize: (trajectory, settings, counters, scope) =>
    normalizeTreeTrajectory(trajectory, settings, counters, parseAndroidObservation, scope),
};
