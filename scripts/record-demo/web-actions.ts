/**
 * The scripted agent's actions in BrowserGym's action space: each names its element by role and
 * name, as an agent reading the AXTree text would; the bid is looked up in the tree it sees,
 * written into the call (`click('12')`), and the call is carried out on the element with that
 * bid, as BrowserGym's action functions do (playwright, 500 ms timeout).
 */
import type { Page } from "playwright-core";
import { type AxTreeText, type PrintedNode, pyRepr } from "./web-axtree.ts";

export interface Target {
  role: string;
  name: string;
}

export type ScriptedAction =
  | { do: "click"; target: Target }
  | { do: "fill"; target: Target; text: string }
  | { do: "press"; target: Target; key: string }
  | { do: "select_option"; target: Target; option: string }
  | { do: "send_msg_to_user"; text: string };

/** What the agent wrote down for this step: its reasoning and the action. */
export interface ScriptedStep {
  reasoning: string;
  action: ScriptedAction;
}

const ACTION_TIMEOUT_MS = 500; // BrowserGym's own

/** The one printed node with this role and name that has a bid; fails the recording otherwise. */
export function findTarget(tree: AxTreeText, target: Target): PrintedNode & { bid: string } {
  const found = tree.nodes.filter((node) => node.bid !== undefined && node.role === target.role && node.name === target.name);
  if (found.length !== 1) throw new Error(`expected one ${target.role} ${JSON.stringify(target.name)} with a bid, found ${found.length}`);
  return found[0] as PrintedNode & { bid: string };
}

/** The action as BrowserGym's Python call, with the bid found in the tree. */
export function actionCall(action: ScriptedAction, bid: string | undefined): string {
  const call = (...args: string[]) => `${action.do}(${args.map(pyRepr).join(", ")})`;
  switch (action.do) {
    case "click":
      return call(bid as string);
    case "fill":
      return call(bid as string, action.text);
    case "press":
      return call(bid as string, action.key);
    case "select_option":
      return call(bid as string, action.option);
    case "send_msg_to_user":
      return call(action.text);
  }
}

/** Carries the action out; returns BrowserGym's outcome text for it ("" when it raised nothing). */
export async function perform(page: Page, action: ScriptedAction, bid: string | undefined): Promise<string> {
  if (action.do === "send_msg_to_user") return ""; // goes to the chat, not the page
  const element = page.locator(`[bid="${bid}"]`);
  try {
    if (action.do === "click") await element.click({ timeout: ACTION_TIMEOUT_MS });
    else if (action.do === "fill") await element.fill(action.text, { timeout: ACTION_TIMEOUT_MS });
    else if (action.do === "press") await element.press(action.key, { timeout: ACTION_TIMEOUT_MS });
    else await element.selectOption(action.option, { timeout: ACTION_TIMEOUT_MS });
  } catch (err) {
    const error = err as Error;
    return `${error.name}: ${error.message.split("\n")[0]}`;
  }
  return "";
}
