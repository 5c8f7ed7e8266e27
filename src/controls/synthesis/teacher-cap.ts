/**
 * The teacher's cost cap, `controls.synthesis.teacher.ask_margin` (docs/controls.md "Teacher
 * cost"): the stage asks about only as many trajectories per task, domain and kind as the target
 * share could use, times the margin. Pure arithmetic over one task's candidates.
 *
 * Which trajectories: those with the lowest sha256(seed, id) order value (`synthesisOrder`), the
 * order the mix plan takes eligible trajectories in (synthesis-quota.ts), so a trajectory left
 * unasked is one the plan would have taken last. A task's candidates are fixed by its input and
 * the config, so what is asked does not depend on workers, ranks or timing.
 */

/** One trajectory the stage could ask about for a kind: its place in the plan's order and the requests it would cost. */
export interface AskCandidate {
  item: number;
  order: number;
  requests: number;
}

/**
 * The most trajectories one task asks about for a kind of a domain: the samples the target share
 * t could use among the task's n trajectories of the domain (their counterfactual samples, a share
 * s, count in the denominator too, as do the syntheses of all the domain's targets T), times the margin:
 * ceil(margin × t × n × (1 + s) / (1 − T)).
 */
export function askLimit(margin: number, target: number, trajectories: number, counterfactualShare: number, domainTargets: number): number {
  return Math.ceil((margin * target * trajectories * (1 + counterfactualShare)) / (1 - domainTargets));
}

/** The key of an (item, kind) the cap lets through. */
export const askKey = (item: number, kind: string): string => `${item}\u0000${kind}`;

/** What the cap decided for one task: the (item, kind) pairs asked, and the requests and trajectories it left out. */
export interface AskSelection {
  asked: Set<string>;
  notAskedRequests: number;
  notAskedTrajectories: number;
}

/** Per `domain kind` group, the `limits` lowest-order candidates (ties by item, then first listed). */
export function chooseAsks(groups: ReadonlyMap<string, { kind: string; limit: number; candidates: AskCandidate[] }>): AskSelection {
  const selection: AskSelection = { asked: new Set(), notAskedRequests: 0, notAskedTrajectories: 0 };
  for (const { kind, limit, candidates } of groups.values()) {
    const ordered = [...candidates].sort((a, b) => a.order - b.order || a.item - b.item);
    ordered.forEach((candidate, rank) => {
      if (rank < limit) selection.asked.add(askKey(candidate.item, kind));
      else {
        selection.notAskedRequests += candidate.requests;
        selection.notAskedTrajectories += 1;
      }
    });
  }
  return selection;
}
