/**
 * One recorded SWE episode written in each layout lwm-data reads (src/read/swe-agent-traj.ts,
 * mini-swe-agent.ts, openhands.ts, swe-smith.ts, canonical-jsonl.ts), shaped like the files those
 * tools save. The same commands and outputs in every layout; only the wrapping differs.
 */
import { FIXED_EPOCH_SECONDS } from "./common.ts";
import { miniSweAgentPrompts, openHandsTask, sweAgentPrompts, sweSmithPrompts } from "./swe-prompts.ts";
import type { RecordedEpisode, RecordedStep } from "./swe-session.ts";

type Json = Record<string, unknown>;

/**
 * SWE-agent 1.x `.traj` (what `DefaultAgent.save_trajectory` writes): `trajectory[]` steps, the
 * model's `history[]` with `message_type` and OpenAI tool calls, `info`, `replay_config` as a
 * JSON string, `environment`. Steps carry no `execution_time`: a measured time would differ on
 * every recording.
 */
export function sweAgentTraj(r: RecordedEpisode, id: string): string {
  const prompts = sweAgentPrompts(r);
  const history: Json[] = [
    { message_type: "system_prompt", role: "system", content: prompts.system, agent: "main" },
    { message_type: "observation", role: "user", content: prompts.instance, agent: "main" },
  ];
  const trajectory: Json[] = [];
  const calls = [
    ...r.steps.map((s) => ({ step: s, action: s.command, tool: "bash", args: { command: s.command } })),
    { step: r.submission, action: "submit", tool: "submit", args: {} },
  ];
  for (const [i, { step, action, tool, args }] of calls.entries()) {
    const query = structuredClone(history);
    const callId = `call_${i + 1}`;
    history.push(
      {
        message_type: "action",
        role: "assistant",
        content: step.thought,
        thought: step.thought,
        action,
        agent: "main",
        tool_calls: [{ function: { arguments: JSON.stringify(args), name: tool }, id: callId, type: "function" }],
      },
      { message_type: "observation", role: "tool", content: step.output, agent: "main", tool_call_ids: [callId] },
    );
    trajectory.push({
      action,
      observation: step.output,
      response: step.thought,
      thought: step.thought,
      state: { working_dir: r.repo },
      query,
      extra_info: {},
    });
  }
  const info = {
    submission: r.submission.output,
    exit_status: "submitted",
    model_stats: { instance_cost: 0, tokens_sent: 0, tokens_received: 0, api_calls: calls.length },
  };
  const replayConfig = {
    env: { deployment: { type: "local" }, repo: { path: r.repo, base_commit: r.baseCommit, type: "local" } },
    problem_statement: { text: r.episode.issue, extra_fields: {}, type: "text", id },
  };
  return `${JSON.stringify({ trajectory, history, info, replay_config: JSON.stringify(replayConfig), environment: "main" }, null, 2)}\n`;
}

/** mini-swe-agent's observation template: return code, then the output as printed. */
const miniObservation = (s: RecordedStep) => `<returncode>${s.exitCode}</returncode>\n<output>\n${s.output}</output>`;

/**
 * mini-swe-agent 1.x saved trajectory `{info, messages, trajectory_format}`: each reply a thought
 * and one ```mswea_bash_command``` block, each output a user message; the marker command ends the
 * run and its output without the marker line (the patch) is the last user message.
 */
export function miniSweAgentTraj(r: RecordedEpisode): string {
  const prompts = miniSweAgentPrompts(r);
  const reply = (s: RecordedStep) => `${s.thought}\n\n\`\`\`mswea_bash_command\n${s.command}\n\`\`\``;
  const submission = r.miniSubmission.output.slice(r.miniSubmission.output.indexOf("\n") + 1);
  const messages = [
    { role: "system", content: prompts.system },
    { role: "user", content: prompts.instance },
    ...r.steps.flatMap((s) => [
      { role: "assistant", content: reply(s) },
      { role: "user", content: miniObservation(s) },
    ]),
    { role: "assistant", content: reply(r.miniSubmission) },
    { role: "user", content: submission },
  ];
  const info = { exit_status: "Submitted", submission, model_stats: { instance_cost: 0, api_calls: r.steps.length + 1 } };
  return `${JSON.stringify({ info, messages, trajectory_format: "mini-swe-agent-1" }, null, 2)}\n`;
}

/** OpenHands event times: the fixed clock, one second per event. */
const eventTime = (id: number) => new Date((FIXED_EPOCH_SECONDS + id) * 1000).toISOString().replace("Z", "");

/**
 * An OpenHands event stream (a saved session: JSON array of events): the user's message, then per
 * step a `run` action and the `run` observation whose `cause` is the action's id, agent-state
 * changes around them, and a `finish` action to end.
 */
export function openHandsEvents(r: RecordedEpisode): string {
  const events: Json[] = [];
  const add = (event: Json) => {
    const id = events.length;
    events.push({ id, timestamp: eventTime(id), ...event });
    return id;
  };
  const state = (agentState: string) =>
    add({ source: "environment", message: "", observation: "agent_state_changed", content: "", extras: { agent_state: agentState } });
  state("loading");
  const task = openHandsTask(r);
  add({ source: "user", message: task, action: "message", args: { content: task, image_urls: [], wait_for_response: false } });
  state("running");
  for (const step of r.steps) {
    const cause = add({
      source: "agent",
      message: `Running command: ${step.command}`,
      action: "run",
      args: {
        command: step.command,
        is_input: false,
        thought: step.thought,
        blocking: false,
        hidden: false,
        confirmation_state: "confirmed",
      },
    });
    add({
      source: "agent",
      message: `Command \`${step.command}\` executed with exit code ${step.exitCode}.`,
      cause,
      observation: "run",
      content: step.output,
      extras: {
        command: step.command,
        metadata: {
          exit_code: step.exitCode,
          pid: -1,
          working_dir: r.repo,
          prefix: "",
          suffix: `\n[The command completed with exit code ${step.exitCode}.]`,
        },
        hidden: false,
      },
      success: step.exitCode === 0,
    });
  }
  const thought = r.submission.thought;
  add({
    source: "agent",
    message: thought,
    action: "finish",
    args: { final_thought: thought, task_completed: "true", outputs: {}, thought: "" },
  });
  state("finished");
  return `${JSON.stringify(events, null, 2)}\n`;
}

/**
 * A SWE-smith fine-tuning line `{messages, instance_id}`: each reply ends in one
 * `<function=…>` call, each output is a user message after `OBSERVATION:`; the closing `submit`
 * gets no answer, as in SWE-smith's exports.
 */
export function sweSmithLine(r: RecordedEpisode, instanceId: string): string {
  const prompts = sweSmithPrompts(r);
  const messages = [
    { role: "system", content: prompts.system },
    { role: "user", content: prompts.instance },
    ...r.steps.flatMap((s) => [
      { role: "assistant", content: `${s.thought}\n\n<function=bash>\n<parameter=command>${s.command}</parameter>\n</function>` },
      { role: "user", content: `OBSERVATION:\n${s.output}` },
    ]),
    { role: "assistant", content: `${r.submission.thought}\n\n<function=submit>\n</function>` },
  ];
  return JSON.stringify({ messages, instance_id: instanceId });
}

/** lwm-data's canonical record: the commands and their outputs, the submission as the last turn. */
export function canonicalLine(r: RecordedEpisode, id: string): string {
  const turns = [...r.steps, r.submission].map((s) => ({
    action: s.command,
    observation: s.output,
    meta: { exit_code: s.exitCode, agent_thought: s.thought },
  }));
  const meta = { recorded_by: "scripts/record-demo/swe.ts", repository: r.repo, base_commit: r.baseCommit };
  return JSON.stringify({ id, domain: "swe", task: r.episode.issue, turns, meta });
}
