import type { Domain } from "../../core/trajectory.ts";
import { isBrowserTool, isEditTool, isSearchTool, isShellTool } from "./tools.ts";

/**
 * A row's domain when the run does not set one, from the tools it offers and calls: shell or
 * editing tools are `swe` when the row shows a repository, else `terminal`; browser tools `web`;
 * web search `search`; any other function tools `mcp`.
 */

const REPO_FIELDS = ["repo", "instance_id", "model_patch", "patch", "git_patch"];

export function inferDomain(row: Record<string, unknown>, toolNames: readonly string[], commands: readonly string[]): Domain {
  const shell = toolNames.some(isShellTool);
  const edit = toolNames.some(isEditTool);
  if (shell || edit) {
    const repository =
      edit ||
      REPO_FIELDS.some((key) => typeof row[key] === "string" && row[key] !== "") ||
      commands.some((command) => /(^|[\s;&|(])git\s/.test(command) || command.includes("diff --git"));
    return repository ? "swe" : "terminal";
  }
  if (toolNames.some(isBrowserTool)) return "web";
  if (toolNames.some(isSearchTool)) return "search";
  return "mcp";
}
