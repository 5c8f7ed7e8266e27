import { parseJsonLine } from "../reader.ts";
import { isRecord } from "../record-helpers.ts";
import { geminiDeclarations } from "./gemini-contents.ts";
import type { Call } from "./message.ts";

/**
 * Tools by name: which are shell, file-editing, browser or web-search tools (from the words of the
 * name), a shell call's command line, and a row's tool specs and their names.
 */

/** Lower-case words of a tool name (`execute_bash` → execute, bash; `runShellCommand` → run, shell, command). */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

const SHELL_WORDS = new Set(["bash", "shell", "sh", "zsh", "terminal", "powershell", "cmd"]);
const RUN_WORDS = new Set(["run", "exec", "execute"]);
const EDIT_NAMES =
  /^(str_replace_editor|str_replace_based_edit_tool|edit_file|write_file|create_file|apply_patch|file_editor|replace_in_file|search_replace|edit|insert_content|write_to_file)$/i;
const BROWSER_WORDS = new Set(["browser", "browse", "click", "goto", "navigate", "playwright", "puppeteer", "selenium", "scroll", "hover"]);
const SEARCH_ENGINE_WORDS = new Set([
  "web",
  "google",
  "bing",
  "brave",
  "tavily",
  "duckduckgo",
  "ddg",
  "serper",
  "serp",
  "serpapi",
  "exa",
  "searx",
  "searxng",
  "internet",
]);

export function isShellTool(name: string): boolean {
  const words = nameWords(name);
  if (words.some((w) => SHELL_WORDS.has(w))) return true;
  return words.some((w) => RUN_WORDS.has(w)) && words.some((w) => w === "command" || w === "cmd");
}

export function isEditTool(name: string): boolean {
  return EDIT_NAMES.test(name);
}

export function isBrowserTool(name: string): boolean {
  return nameWords(name).some((w) => BROWSER_WORDS.has(w));
}

export function isSearchTool(name: string): boolean {
  const words = nameWords(name);
  return (words.length === 1 && words[0] === "search") || (words.includes("search") && words.some((w) => SEARCH_ENGINE_WORDS.has(w)));
}

/** A shell call's command: `command` (or `cmd`) as a string, or an argv (`["bash", "-lc", "ls"]` → `ls`). */
export function shellCommand(call: Call): string | undefined {
  if (call.name === undefined || !isShellTool(call.name) || !isRecord(call.args)) return undefined;
  const command = call.args.command ?? call.args.cmd;
  if (typeof command === "string") return command;
  if (Array.isArray(command) && command.length > 0 && command.every((part) => typeof part === "string")) {
    const argv = command as string[];
    if (argv.length === 3 && /^(ba|z)?sh$/.test(argv[0] as string) && /^-l?c$/.test(argv[1] as string)) return argv[2];
    return argv.join(" ");
  }
  return undefined;
}

/** The tool specs of a row (`tools`, `available_tools` or legacy `functions`: a list, or a JSON string of one; Gemini's function declarations flattened). */
export function toolSpecs(row: Record<string, unknown>): unknown[] {
  for (const key of ["tools", "available_tools", "functions"]) {
    let value = row[key];
    if (typeof value === "string") {
      const parsed = parseJsonLine(value);
      value = parsed.ok ? parsed.value : value.trim() === "" ? undefined : [value];
    }
    // Gemini's `[{functionDeclarations: […]}]`: the declarations, one spec each.
    if (Array.isArray(value) && value.length > 0) return geminiDeclarations(value) ?? value;
  }
  return [];
}

export function specName(spec: unknown): string | undefined {
  if (!isRecord(spec)) return undefined;
  const fn = isRecord(spec.function) ? spec.function : spec;
  return typeof fn.name === "string" ? fn.name : undefined;
}
