import { readFileSync } from "node:fs";
import { gunzipSync, zstdDecompressSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { READERS } from "../../src/read/registry.ts";
import { applyMutations, type Compression, compress, compression, type Mutation, mutation, randomInput } from "./mutations.ts";
import type { JobResult, ReadJob } from "./properties.ts";
import { READER_SEEDS, type Seed, writeInput } from "./seeds.ts";
import {
  CaseRunner,
  DEFAULT_SETTINGS,
  FUZZ,
  failureReport,
  fuzzParameters,
  listCrashers,
  listCrasherTargets,
  PROPERTY_TIMEOUT_MS,
  Scratch,
  saveCrasher,
} from "./support.ts";

/**
 * The reader fuzz suites, for the test files that split the readers between them (so that the
 * campaign's fixed time per reader runs on two cores, not one). Every reader, fed mutated
 * fixtures (the recorded demo data, hand-made files) and random bytes (plain, gzip, zstd, damaged
 * archives): no crash, no hang, every record a valid trajectory or a located quarantine entry,
 * and each trajectory read goes through normalize too. See properties.ts for the exact properties.
 */

// Made by readerFuzzSuites, in the test file that runs them (one per vitest worker).
let runner: CaseRunner;
let scratch: Scratch;

const DEFAULT_MAX_LINE_BYTES = 256 << 20; // configs/defaults.yaml input.max_line_bytes

interface ReaderCase {
  seed: number;
  /** Input that replaces the seed's content (the seed's file name is kept). */
  random: string | number[] | null;
  mutations: Mutation[];
  compression: Compression;
  maxLineBytes: number;
  cuts: number[];
}

const readerCase = (seeds: number): fc.Arbitrary<ReaderCase> =>
  fc.record({
    seed: fc.nat(seeds - 1),
    random: fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: randomInput }),
    mutations: fc.array(mutation, { maxLength: 5 }),
    compression,
    maxLineBytes: fc.oneof(
      { weight: 4, arbitrary: fc.constant(DEFAULT_MAX_LINE_BYTES) },
      { weight: 1, arbitrary: fc.constantFrom(16, 200, 4096) },
    ),
    cuts: fc.array(fc.nat(), { maxLength: 3 }),
  });

interface Input {
  seed: Seed;
  plain: Uint8Array;
  bytes: Uint8Array;
  plainKnown: boolean;
}

function materialize(seeds: Seed[], c: ReaderCase): Input {
  const seed = seeds[c.seed] as Seed;
  const start =
    c.random === null ? seed.bytes : typeof c.random === "string" ? new TextEncoder().encode(c.random) : Uint8Array.from(c.random);
  const plain = applyMutations(start, c.mutations);
  return { seed, plain, ...compress(plain, c.compression) };
}

async function runRead(
  reader: string,
  seed: Pick<Seed, "name" | "layout">,
  file: { bytes: Uint8Array; plain: Uint8Array | null; compressed: boolean },
  options: { maxLineBytes: number; cuts: number[] },
): Promise<JobResult> {
  const dir = scratch.caseDir();
  try {
    const job: ReadJob = {
      kind: "read",
      reader,
      path: writeInput(dir, seed, file.bytes),
      options: { maxLineBytes: options.maxLineBytes },
      plain: file.plain,
      compressed: file.compressed,
      cuts: options.cuts,
      normalize: true,
      settings: DEFAULT_SETTINGS,
      recordLimitMs: FUZZ.recordLimitMs,
    };
    return await runner.run(job);
  } finally {
    scratch.clear(dir);
  }
}

function runCase(reader: (typeof READERS)[number], seeds: Seed[], c: ReaderCase): Promise<JobResult> {
  const input = materialize(seeds, c);
  const compressed = c.compression.codec !== "none";
  return runRead(
    reader.name,
    input.seed,
    { bytes: input.bytes, plain: input.plainKnown ? input.plain : null, compressed },
    // Byte ranges are only planned for uncompressed files of splittable formats.
    { maxLineBytes: c.maxLineBytes, cuts: reader.splittable && !compressed ? c.cuts : [] },
  );
}

/** The decompressed content of a saved crasher, when it decompresses (else unknown, as for a damaged archive). */
function plainOf(bytes: Uint8Array): { plain: Uint8Array | null; compressed: boolean } {
  const gzip = bytes[0] === 0x1f && bytes[1] === 0x8b;
  const zstd = bytes[0] === 0x28 && bytes[1] === 0xb5 && bytes[2] === 0x2f && bytes[3] === 0xfd;
  if (!gzip && !zstd) return { plain: bytes, compressed: false };
  try {
    return { plain: new Uint8Array(gzip ? gunzipSync(bytes) : zstdDecompressSync(bytes)), compressed: true };
  } catch {
    return { plain: null, compressed: true };
  }
}

/** The fuzz and crasher suites of every `parts`-th reader from the `part`-th (0-based). */
export function readerFuzzSuites(part: number, parts: number): void {
  runner = new CaseRunner();
  scratch = new Scratch();
  beforeAll(() => runner.warmUp());
  afterAll(async () => {
    await runner.stop();
    scratch.dispose();
  });
  const mine = READERS.filter((_, i) => i % parts === part);

  describe(`readers: mutated recorded and hand-made fixtures, and random input (part ${part + 1} of ${parts})`, () => {
    for (const reader of mine) {
      const seeds = READER_SEEDS[reader.name];
      it(
        reader.name,
        async () => {
          expect(seeds, `no fuzz seeds for reader ${reader.name} in test/fuzz/seeds.ts`).toBeDefined();
          const property = `read:${reader.name}`;
          const details = await fc.check(
            fc.asyncProperty(
              readerCase((seeds as Seed[]).length),
              async (c) => (await runCase(reader, seeds as Seed[], c)).failure === undefined,
            ),
            fuzzParameters(property),
          );
          if (!details.failed) return;
          const [c] = details.counterexample ?? [];
          if (!c) throw new Error(`${property}: ${details.errorInstance ?? "failed"}`);
          const failure = (await runCase(reader, seeds as Seed[], c)).failure ?? `failed once (flaky?): ${String(details.errorInstance)}`;
          const input = materialize(seeds as Seed[], c);
          const options = {
            ...(c.maxLineBytes !== DEFAULT_MAX_LINE_BYTES ? { maxLineBytes: c.maxLineBytes } : {}),
            ...(reader.splittable && c.compression.codec === "none" && c.cuts.length > 0 ? { cuts: c.cuts } : {}),
            ...(input.seed.layout ? { layout: input.seed.layout } : {}),
          };
          const saved = saveCrasher(reader.name, input.seed.name, input.bytes, failure, options);
          throw new Error(failureReport(property, failure, `${input.seed.name} with ${fc.stringify(c)}`, saved));
        },
        PROPERTY_TIMEOUT_MS,
      );
    }
  });

  describe(`readers: saved crashers stay fixed (test/fixtures/fuzz-crashers/<reader>, part ${part + 1} of ${parts})`, () => {
    const known = new Set(READERS.map((reader) => reader.name));
    for (const reader of mine) {
      for (const crasher of listCrashers(reader.name)) {
        it(`${reader.name}/${crasher.name}: ${crasher.note}`, async () => {
          const { maxLineBytes, cuts, layout } = (crasher.options ?? {}) as {
            maxLineBytes?: number;
            cuts?: number[];
            layout?: "droidbot-event";
          };
          const bytes = new Uint8Array(readFileSync(crasher.path));
          const result = await runRead(
            reader.name,
            { name: crasher.name, ...(layout ? { layout } : {}) },
            { bytes, ...plainOf(bytes) },
            { maxLineBytes: maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, cuts: cuts ?? [] },
          );
          expect(result.failure).toBeUndefined();
        });
      }
    }
    if (part === 0)
      it("every crasher folder names a reader or a domain normalizer", () => {
        for (const name of listCrasherTargets()) expect(known.has(name) || name.startsWith("normalize-"), name).toBe(true);
      });
  });
}
