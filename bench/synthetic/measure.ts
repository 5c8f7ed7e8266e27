/**
 * Measures trajectory shape per domain — turns per trajectory, action / observation / task
 * lengths, and the turn-stats mask-class mix — by running the project's own readers, normalizer
 * and default loss policy over input files. Run on the real fixtures it gives the parameters
 * in domains.ts (`node bench/synthetic/measure.ts`); run on a generated corpus it checks the
 * generator against them (`node bench/synthetic/measure.ts DIR`).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { loadConfig } from "../../src/config/load-config.ts";
import type { Domain, Trajectory } from "../../src/core/trajectory.ts";
import { turnStatsPolicy } from "../../src/mask/loss-policy.ts";
import { normalizeTrajectory } from "../../src/normalize/normalize-trajectory.ts";
import { detectReader } from "../../src/read/registry.ts";
import { loadSystemPrompts } from "../../src/render/system-prompts.ts";
import { trajectoryMessages } from "../../src/render/trajectory-messages.ts";
import { loadTokenizer } from "../../src/tokenize/load-tokenizer.ts";

const root = new URL("../..", import.meta.url).pathname;

export interface DomainShape {
  trajectories: number;
  turns: number[];
  action: number[];
  /** Observation length as read, before normalization (raw XML, pretty JSON...). */
  rawObservation: number[];
  /** Observation length after normalization: what is rendered and tokenized. */
  observation: number[];
  task: number[];
  classes: Record<string, number>;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return listFiles(path);
    // Notes (PROVENANCE.md, READMEs) are not inputs; BrowserGym runs are `*experiment_analysis.md`.
    return /\.md$/.test(entry.name) && !entry.name.endsWith("experiment_analysis.md") ? [] : [path];
  });
}

/** Reads, normalizes and classifies every trajectory in `paths` (files with equal content once). */
export async function measure(paths: string[]): Promise<Record<string, DomainShape>> {
  const { config } = loadConfig(join(root, "configs/demo.yaml"));
  const tokenizer = loadTokenizer(config.tokenizer);
  const policy = turnStatsPolicy(config.mask, tokenizer);
  const prompts = loadSystemPrompts(config.render.system_prompts_dir);
  const seen = new Set<string>();
  const shapes: Record<string, DomainShape> = {};
  for (const path of paths.sort()) {
    const digest = createHash("sha256").update(readFileSync(path)).digest("hex");
    if (seen.has(digest)) continue; // the same sample may sit in two of the folders measured
    seen.add(digest);
    let reader: Awaited<ReturnType<typeof detectReader>>;
    try {
      reader = await detectReader(path);
    } catch {
      continue; // single protocol messages, event fragments: not trajectories on their own
    }
    for await (const item of reader.read(path, { maxLineBytes: config.input.max_line_bytes })) {
      if (item.kind !== "trajectory") continue;
      const raw = item.trajectory.turns.map((turn) => turn.observation.length);
      let t: Trajectory;
      try {
        t = await normalizeTrajectory(item.trajectory, config.normalize, new Map());
      } catch {
        continue;
      }
      const shape = shapes[t.domain] ?? {
        trajectories: 0,
        turns: [],
        action: [],
        rawObservation: [],
        observation: [],
        task: [],
        classes: {},
      };
      shapes[t.domain] = shape;
      shape.trajectories += 1;
      shape.turns.push(t.turns.length);
      shape.task.push((t.task ?? "").length);
      shape.rawObservation.push(...raw);
      for (const turn of t.turns) {
        shape.action.push(turn.action.length);
        shape.observation.push(turn.observation.length);
      }
      for (const d of policy.apply(t, trajectoryMessages(t, prompts)).decisions ?? [])
        shape.classes[d.turnClass] = (shape.classes[d.turnClass] ?? 0) + 1;
    }
  }
  return shapes;
}

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);
}

export function summary(values: number[]): string {
  const s = [...values].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / Math.max(s.length, 1);
  return `n=${s.length} p10=${quantile(s, 0.1)} p50=${quantile(s, 0.5)} p90=${quantile(s, 0.9)} max=${quantile(s, 1)} mean=${mean.toFixed(0)}`;
}

export function report(shapes: Record<string, DomainShape>): string {
  return Object.entries(shapes)
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([domain, s]) => {
      const total = Object.values(s.classes).reduce((a, b) => a + b, 0);
      const mix = Object.entries(s.classes)
        .sort(([, a], [, b]) => b - a)
        .map(([c, n]) => `${c} ${((100 * n) / total).toFixed(0)}%`)
        .join(", ");
      return [
        `${domain as Domain}: ${s.trajectories} trajectories`,
        `  turns/traj   ${summary(s.turns)}`,
        `  action chars ${summary(s.action)}`,
        `  obs raw      ${summary(s.rawObservation)}`,
        `  obs chars    ${summary(s.observation)}`,
        `  task chars   ${summary(s.task)}`,
        `  classes      ${mix}`,
      ];
    })
    .join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dirs = process.argv.length > 2 ? process.argv.slice(2) : [join(root, "../shared/fixtures/real"), join(root, "data/demo")];
  const files = dirs.flatMap((d) => (statSync(d).isDirectory() ? listFiles(d) : [d]));
  console.log(`measuring ${files.length} files: ${dirs.map((d) => relative(root, d) || ".").join(", ")}`);
  console.log(report(await measure(files)));
}
