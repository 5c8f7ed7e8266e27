/**
 * Writes a recorded episode as AgentLab's `experiment_analysis.md` (the layout src/read/browsergym.ts
 * reads): global parameters, then per step the open tabs, the page's AXTree in a fenced block,
 * the history of past actions (the action, the element's path in the tree, the outcome) and the
 * agent's next action: its reasoning ending in the call in backticks.
 */
import type { PrintedNode } from "./web-axtree.ts";
import { pyRepr } from "./web-axtree.ts";

export interface RecordedAction {
  call: string;
  /** The element acted on, as it was in the tree the agent saw; absent for send_msg_to_user. */
  element?: PrintedNode;
  clicked: boolean;
  /** BrowserGym's last_action_error, "" when none. */
  error: string;
}

export interface RecordedStep {
  title: string;
  url: string;
  axtree: string;
  /** The agent's reasoning and action after seeing this step; absent on the last step. */
  next?: { reasoning: string; call: string };
}

export interface RecordedEpisode {
  goal: string;
  date: string;
  traceId: string;
  modelName: string;
  steps: RecordedStep[];
  actions: RecordedAction[];
}

const step = (n: number) => String(n).padStart(3, "0");

function breadcrumb(element: PrintedNode): string {
  return [...element.path, element]
    .map((node, depth) => `${"  ".repeat(depth)}[${node.bid ?? ""}] ${node.role}: ${pyRepr(node.name)}`)
    .join("\n");
}

function pastAction(n: number, action: RecordedAction): string {
  const parts = [`#### PastAction${step(n)}`, "##### Selected Action in the BrowserGym format", `\`\`\`\n${action.call}\n\`\`\``];
  if (action.element) {
    const label = action.clicked ? "Clicked Element" : "Input Element";
    parts.push(
      "##### DOM Tree Breadcrumb",
      `**${label}** (bid: ${action.element.bid})\nPath to element:\n\`\`\`\n${breadcrumb(action.element)}\n\`\`\``,
    );
  }
  parts.push("##### Outcome including errors", action.error === "" ? "No errors reported" : action.error);
  return parts.join("\n\n");
}

export function experimentAnalysisMarkdown(episode: RecordedEpisode): string {
  const out = [
    "# 1 - Global Parameters\n\n",
    `## Task\n\n* **Derived Goal**:\n  ${episode.goal}`,
    `## Run Parameters\n\n* **Date of Instance Run**: ${episode.date}\n* **Trace ID**: ${episode.traceId}\n`,
    `### Model Configuration\n* **model_name**: ${episode.modelName}\n`,
    "# 2 - Instance Type\n\n",
  ];
  episode.steps.forEach((s, i) => {
    const history =
      i === 0
        ? "No previous actions"
        : episode.actions
            .slice(0, i)
            .map((action, n) => pastAction(n, action))
            .join("\n\n");
    const next = s.next ? `\`\`\`\n${s.next.reasoning}\n\n\`\`\`${s.next.call}\`\`\`\n\`\`\`` : "No next action available";
    out.push(
      `## InstanceStep${step(i)}\n\n`,
      "### State of the World\n",
      `#### Currently Open Tabs\n\n- Tab 0 (active)\n  - Title: ${s.title}\n  - URL: ${s.url}\n\n`,
      `#### Current Page Accessibility Tree\n\n\`\`\`\n${s.axtree}\n\`\`\`\n`,
      `### History of Past Actions\n\n${history}\n`,
      `### Next Action\n\n${next}\n`,
    );
  });
  return `${out.join("\n")}`;
}
