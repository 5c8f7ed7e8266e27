import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DOMAINS, type Domain, type Trajectory } from "../../src/core/trajectory.ts";
import { DOMAIN_NORMALIZERS } from "../../src/normalize/normalize-trajectory.ts";
import type { NormalizeSettings } from "../../src/normalize/normalizer.ts";
import { readFilterOf } from "../../src/read/read-filter.ts";
import { readerByName } from "../../src/read/registry.ts";
import { collect } from "../helpers.ts";
import type { JobResult } from "./properties.ts";
import { READER_SEEDS, writeInput } from "./seeds.ts";
import { CaseRunner, FUZZ, failureReport, fuzzParameters, listCrashers, PROPERTY_TIMEOUT_MS, Scratch, saveCrasher } from "./support.ts";
import { applyTextEdits, settingsArb, syntheticTrajectory, type TextEdit, textEdit } from "./trajectories.ts";

/**
 * Every domain normalizer, through normalizeTrajectory as the pipeline calls it: synthetic
 * trajectories (hostile text, generated trees, recordings, JSON) and real ones with their texts
 * edited, under random settings. Properties (properties.ts): returns a valid trajectory or throws
 * RecordError, leaves its input alone, is deterministic, and idempotent where the code says so.
 */

const runner = new CaseRunner();
const scratch = new Scratch();
// The domain normalizers that only reformat JSON, which json-canonical.ts makes idempotent (search
// decodes entities, so `&amp;lt;` decodes again; trees and terminals re-render).
const IDEMPOTENT = new Set<Domain>(["mcp", "swe"]);

/** Real trajectories per domain: every reader seed, read as is. */
const seeds = new Map<Domain, Trajectory[]>();

beforeAll(async () => {
  await runner.warmUp();
  for (const [format, list] of Object.entries(READER_SEEDS)) {
    for (const seed of list) {
      const dir = scratch.caseDir();
      const items = await collect(readerByName(format).read(writeInput(dir, seed, seed.bytes), { maxLineBytes: 256 << 20 }));
      for (const item of items) {
        // A record its reader filtered is never normalized (it goes to filtered/ as read).
        if (item.kind !== "trajectory" || readFilterOf(item)) continue;
        const { domain } = item.trajectory;
        seeds.set(domain, [...(seeds.get(domain) ?? []), item.trajectory]);
      }
    }
  }
});

afterAll(async () => {
  await runner.stop();
  scratch.dispose();
});

type Source = { kind: "synthetic"; trajectory: Trajectory } | { kind: "seed"; seed: number; edits: TextEdit[] };
interface NormalizeCase {
  source: Source;
  settings: NormalizeSettings;
}

function trajectoryOf(domain: Domain, source: Source): Trajectory {
  if (source.kind === "synthetic") return source.trajectory;
  const list = seeds.get(domain) as Trajectory[];
  return applyTextEdits(list[source.seed % list.length] as Trajectory, source.edits);
}

function runNormalize(domain: Domain, trajectory: Trajectory, settings: NormalizeSettings): Promise<JobResult> {
  return runner.run({ kind: "normalize", trajectory, settings, idempotent: IDEMPOTENT.has(domain), recordLimitMs: FUZZ.recordLimitMs });
}

describe("normalizers: synthetic and edited real trajectories", () => {
  it("every domain with a normalizer is fuzzed", () => {
    expect(Object.keys(DOMAIN_NORMALIZERS).sort()).toEqual([...DOMAINS].sort());
  });

  for (const domain of DOMAINS) {
    it(
      domain,
      async () => {
        const fromSeeds = (seeds.get(domain) ?? []).length > 0;
        const source: fc.Arbitrary<Source> = fc.oneof(
          syntheticTrajectory(domain).map((trajectory): Source => ({ kind: "synthetic", trajectory })),
          ...(fromSeeds
            ? [fc.record({ kind: fc.constant("seed" as const), seed: fc.nat(), edits: fc.array(textEdit, { maxLength: 4 }) })]
            : []),
        );
        const property = `normalize:${domain}`;
        const run = (c: NormalizeCase) => runNormalize(domain, trajectoryOf(domain, c.source), c.settings);
        const details = await fc.check(
          fc.asyncProperty(fc.record({ source, settings: settingsArb }), async (c) => (await run(c)).failure === undefined),
          fuzzParameters(property),
        );
        if (!details.failed) return;
        const [c] = details.counterexample ?? [];
        if (!c) throw new Error(`${property}: ${details.errorInstance ?? "failed"}`);
        const failure = (await run(c)).failure ?? `failed once (flaky?): ${String(details.errorInstance)}`;
        const crasher = JSON.stringify({ trajectory: trajectoryOf(domain, c.source), settings: c.settings });
        const saved = saveCrasher(`normalize-${domain}`, `${domain}.json`, new TextEncoder().encode(crasher), failure);
        throw new Error(failureReport(property, failure, fc.stringify(c), saved));
      },
      PROPERTY_TIMEOUT_MS,
    );
  }
});

/** A saved case: `{trajectory, settings}` as JSON (lone surrogates kept as \u escapes), gzipped when big. */
function readCase(path: string): { trajectory: Trajectory; settings: NormalizeSettings } {
  const raw = readFileSync(path);
  return JSON.parse((path.endsWith(".gz") ? gunzipSync(raw) : raw).toString("utf8"));
}

describe("normalizers: saved crashers stay fixed (test/fixtures/fuzz-crashers/normalize-<domain>)", () => {
  it("every saved case is a {trajectory, settings} document", () => {
    for (const domain of DOMAINS) {
      for (const crasher of listCrashers(`normalize-${domain}`)) {
        expect(Object.keys(readCase(crasher.path)).sort(), crasher.path).toEqual(["settings", "trajectory"]);
      }
    }
  });
  for (const domain of DOMAINS) {
    for (const crasher of listCrashers(`normalize-${domain}`)) {
      it(`normalize-${domain}/${crasher.name}: ${crasher.note}`, async () => {
        const { trajectory, settings } = readCase(crasher.path);
        expect((await runNormalize(domain, trajectory, settings)).failure).toBeUndefined();
      });
    }
  }
});
