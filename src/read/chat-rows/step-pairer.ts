import type { Turn } from "../../core/trajectory.ts";
import type { Call, Message } from "./message.ts";
import { type Step, stepTurn } from "./step-turn.ts";
import { shellCommand } from "./tools.ts";

/**
 * The pairing of calls with results, message by message: assistant calls open a step (so do a
 * user's own calls, marked `requestor: "user"`: τ²-bench), tool results fill it by call id,
 * function name or order, and what is not an environment turn (the task, the
 * system text, dialogue with the user, the final answer, skipped elements) is kept aside.
 */

/** Pairs each assistant step's calls with their results, message by message. */
export class StepPairer {
  readonly turns: Turn[] = [];
  readonly skipped: Record<string, number> = {};
  readonly systems: string[] = [];
  readonly commands: string[] = [];
  readonly calledNames: string[] = [];
  task: string | undefined;
  finalAnswer: string | undefined;
  private step: Step | undefined;
  /** Whether the last message added calls to `step` (consecutive calling messages are one step). */
  private lastWasCall = false;
  private sawAssistant = false;
  /** A text-only assistant message waiting: thought if calls follow at once, else dialogue. */
  private pending: { text: string; reasoning?: string } | undefined;
  private dialogue: { role: string; text: string }[] = [];

  add(message: Message): void {
    for (const what of message.skipped ?? []) this.count(what);
    const wasCall = this.lastWasCall;
    // An element that is no message (a hosted tool's item) leaves consecutive calls one step.
    if (message.role === "other") return;
    this.lastWasCall = false;
    switch (message.role) {
      case "system":
        if (message.text.trim() !== "") this.systems.push(message.text);
        return;
      case "user":
        this.flushPending();
        // A user that acts on the environment itself (τ²-bench's telecom customer on their own
        // phone): its calls are a step of their own, marked with who acted.
        if (message.calls.length > 0) {
          this.addCalls(message, wasCall, "user");
          this.lastWasCall = true;
          return;
        }
        // A user message right after calls that got no result stands for their output (exports
        // that write tool output as user messages); otherwise it is the task or dialogue.
        if (this.step?.results.every((r) => r === undefined)) {
          this.count("user_message_as_result");
          this.takeResult(message.text, undefined, undefined);
          return;
        }
        this.closeStep();
        if (!this.sawAssistant && this.task === undefined) this.task = message.text;
        else this.dialogue.push({ role: "user", text: message.text });
        return;
      case "tool":
        this.flushPending();
        if (message.notRun !== undefined) {
          this.dropCall(message.toolCallId, message.notRun);
          return;
        }
        for (const result of message.results) this.takeResult(result, message.toolCallId, message.toolName, message.isError === true);
        return;
      case "assistant":
        this.sawAssistant = true;
        if (message.calls.length === 0) {
          this.flushPending();
          this.closeStep();
          if (message.text.trim() !== "")
            this.pending = { text: message.text, ...(message.reasoning ? { reasoning: message.reasoning } : {}) };
          else this.count("empty_assistant_message");
          return;
        }
        this.addCalls(message, wasCall);
        this.lastWasCall = true;
        return;
      default:
        this.count(`${message.role}_message`);
    }
  }

  finish(): void {
    this.closeStep();
    if (this.pending !== undefined) {
      this.finalAnswer = this.pending.text;
      this.pending = undefined;
    }
    if (this.dialogue.length > 0) this.count("dialogue_after_last_turn", this.dialogue.length);
  }

  private addCalls(message: Message, consecutive: boolean, requestor?: "user"): void {
    const open = this.step && consecutive && this.step.requestor === requestor && this.step.results.every((r) => r === undefined);
    if (!open) this.closeStep();
    if (!this.step)
      this.step = {
        calls: [],
        results: [],
        errors: [],
        thought: [],
        reasoning: [],
        dialogue: this.takeDialogue(),
        ...(requestor ? { requestor } : {}),
      };
    const step = this.step;
    // The user's words beside its calls are dialogue, not the agent's thought.
    if (requestor === "user") {
      if (message.text.trim() !== "") step.dialogue.push({ role: "user", text: message.text });
    } else {
      if (this.pending !== undefined) {
        step.thought.push(this.pending.text.trim());
        if (this.pending.reasoning) step.reasoning.push(this.pending.reasoning);
        this.pending = undefined;
      }
      if (message.text.trim() !== "") step.thought.push(message.text.trim());
      if (message.reasoning) step.reasoning.push(message.reasoning);
    }
    for (const call of message.calls) {
      step.calls.push(call);
      step.results.push(undefined);
      if (call.name !== undefined) this.calledNames.push(call.name);
      const command = shellCommand(call);
      if (command !== undefined) this.commands.push(command);
    }
  }

  /** Matches a result to its call by id, else by the function's name (legacy role `function`), else in order. */
  private takeResult(result: string, toolCallId: string | undefined, toolName: string | undefined, isError = false): void {
    const step = this.step;
    if (!step) {
      this.count("tool_result_without_call");
      return;
    }
    const open = (match: (c: Call) => boolean) => step.calls.findIndex((c, i) => match(c) && step.results[i] === undefined);
    let index = toolCallId === undefined ? -1 : open((c) => c.id === toolCallId);
    if (index === -1 && toolName !== undefined) index = open((c) => c.name === toolName);
    if (index === -1) index = step.results.indexOf(undefined);
    if (index === -1) {
      this.count("tool_result_without_call");
      return;
    }
    step.results[index] = result;
    if (isError) step.errors[index] = true;
  }

  /** Takes a call that never ran out of the open step (by id, else the first unanswered), counted as `<reason>_call`. */
  private dropCall(toolCallId: string | undefined, reason: string): void {
    const step = this.step;
    const index = step
      ? step.calls.findIndex((c, i) => (toolCallId === undefined || c.id === toolCallId) && step.results[i] === undefined)
      : -1;
    if (!step || index === -1) {
      this.count("tool_result_without_call");
      return;
    }
    this.count(`${reason.replace(/[^a-z0-9]+/gi, "_")}_call`);
    step.calls.splice(index, 1);
    step.results.splice(index, 1);
    step.errors.splice(index, 1);
    if (step.calls.length > 0) return;
    // Nothing left to answer: the step is gone, and what was said around it stays dialogue.
    this.step = undefined;
    this.dialogue = [...step.dialogue, ...this.dialogue];
  }

  /** Ends the open step: a turn when any of its calls was answered, else its calls are counted. */
  private closeStep(): void {
    const step = this.step;
    if (!step) return;
    this.step = undefined;
    const answered = step.results.filter((r) => r !== undefined).length;
    if (answered === 0) {
      this.count("call_without_result", step.calls.length);
      this.dialogue = [...step.dialogue, ...this.dialogue];
      return;
    }
    if (answered < step.calls.length) this.count("call_without_result", step.calls.length - answered);
    this.turns.push(stepTurn(step));
  }

  private flushPending(): void {
    if (this.pending === undefined) return;
    this.dialogue.push({ role: "assistant", text: this.pending.text });
    this.pending = undefined;
  }

  private takeDialogue(): { role: string; text: string }[] {
    const dialogue = this.dialogue;
    this.dialogue = [];
    return dialogue;
  }

  count(what: string, n = 1): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + n;
  }
}
