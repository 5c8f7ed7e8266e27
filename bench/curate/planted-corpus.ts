/**
 * Planted corpus for corpus curation (issue 20): a deterministic training corpus with known
 * duplicates, near duplicates, benchmark leaks and hard negatives, a benchmark file they leak
 * from, and the truth about every trajectory. Same options and seed → same bytes.
 *
 *   node bench/curate/planted-corpus.ts --out DIR [--trajectories N | --bytes 50MB] [--seed S]
 *
 * Writes
 *   DIR/train/part-NNNNN.jsonl          canonical JSONL, `files` files; every plant's members are
 *                                       spread over all files, so duplicates cross files and tasks
 *   DIR/benchmark/<domain>_test.jsonl   AgentWorldBench layout (one row per evaluated turn; rows
 *                                       sharing an id are one episode), one file per benchmark domain
 *   DIR/truth.json                      by trajectory id: `must_go` (stage exact | near |
 *                                       decontaminate, with kept_id or benchmark + benchmark_id) and
 *                                       `must_stay` (originals, hard negatives, unique trajectories)
 *
 * Text comes from the synthetic trajectory generators of bench/synthetic (all seven domains,
 * lengths from the measured parameters in bench/synthetic/params.ts). Every trajectory carries
 * volatile values — timestamps, pids, ports, temp dirs, hex ids, UUIDs, durations — planted as
 * log lines, status nodes or JSON fields in its domain's own format (planted-parts.ts lists the
 * forms); a copy re-draws all of them.
 *
 * Options (fractions are of the training trajectories; what is left is unique trajectories):
 *   trajectories       training trajectories (default 400); or `bytes`: about this many bytes of
 *                      training JSONL (the count is estimated from the mean size of a sample)
 *   seed               every random draw derives from it (default 1)
 *   files              training files (default 8)
 *   exact              exact copies (default 0.08): an earlier trajectory under a new id with every
 *                      volatile value re-drawn; a quarter also get another task text and a quarter a
 *                      system prompt (neither makes two episodes different). Must go: stage exact.
 *   near               near copies (default 0.08): an earlier trajectory under a new id, volatile
 *                      values re-drawn and `editRate` of its prose words edited (insert / delete /
 *                      substitute, one at random per edit). Must go: near.
 *   editRate           [min, max] share of prose words edited per near copy, drawn uniformly
 *                      (default [0.01, 0.02]); prose words are whole lowercase words (JSON keys,
 *                      markup and code punctuation are never touched, so every record still parses)
 *   leakWhole          benchmark episodes leaked whole (default 0.02): the episode's turns as a
 *                      training trajectory. Must go: decontaminate, naming the episode.
 *   leakPart           benchmark episodes leaked in part (default 0.04): the episode's last 2–3
 *                      turns appended to (half) or embedded in the middle of (half) a new
 *                      trajectory of the same domain. Must go: decontaminate; truth lists the turns.
 *   hardNegatives      hard negatives (default 0.12), in groups of `groupSize` ([3, 5]): the same
 *                      system prompt and the same first turns (`ls -la` + README for terminal/swe,
 *                      `initialize` + a long `tools/list` for mcp, the same first screen for
 *                      web/android/os), then different work. The shared turns are at most
 *                      `boilerplateShare` (default 0.3) of each member's words, and a member's
 *                      work grows until its word 5-gram Jaccard similarity to every other member
 *                      is at most `maxSimilarity` (default 0.3; 14 bands × 8 rows make such a pair
 *                      a candidate with probability 0.1%). Must stay.
 *   benchmarkNegatives trajectories that open with a benchmark environment's boilerplate turns and
 *                      system prompt (the ones all its episodes share) and then do other work,
 *                      kept within `maxSimilarity` of every episode and of each other
 *                      (default 0.03). Must stay. Episodes are kept as far apart as well.
 *   domains            relative counts of unique trajectories per domain (default terminal, swe,
 *                      mcp 0.2 each; web, search, android, os 0.1 each); hard-negative groups use the
 *                      same weights without search
 *   maxTurns           turns per generated trajectory are drawn from bench/synthetic/params.ts
 *                      (measured per domain), capped at this (default 12)
 *   minWords           trajectories with fewer words in their turns are redrawn (default 150): two
 *                      unrelated one-turn `ping` transcripts are genuinely identical and would blur
 *                      the truth
 *   benchmarkDomains   domains with a benchmark file (default mcp, terminal, swe, web)
 *   benchmarkEpisodes  episodes per benchmark domain (default 30, and more when the leaks need more;
 *                      each episode leaks at most once). Keep it above decontaminate's
 *                      max_episode_frequency (10), or the shared environment turns stop being
 *                      boilerplate and the benchmark negatives rightly match.
 *
 * Similarity: near copies come out at word 5-gram Jaccard 0.8–0.97 of their original (after the
 * pipeline's normalization and volatile canonicalization), where 14 bands × 8 rows find them with
 * probability > 0.98. Unrelated synthetic trajectories of one domain stay below ~0.35 (mcp,
 * android and os share JSON envelopes and XML attributes; the others below 0.15): such a pair is
 * a candidate with probability ≤ 0.3%, so a large corpus has a few legitimately close uniques.
 *
 * Input order decides keepers: the original of every copy group is placed before all its copies
 * (files in name order, then lines), so "keep the first in input order" keeps it.
 */
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Domain } from "../../src/core/trajectory.ts";
import { parseBytes } from "../synthetic/generate.ts";
import { type CanonicalRecord, type DomainParams, PARAMS } from "../synthetic/params.ts";
import { Rng, seedOf } from "../synthetic/random.ts";
import { sentence } from "../synthetic/text.ts";
import {
  agentWorldBenchRows,
  type BenchmarkEpisode,
  boilerplateTurns,
  editWords,
  environmentPrompt,
  GENERATORS,
  jaccard,
  plantVolatile,
  renderTurns,
  shingles,
  substanceTurns,
  type Turn,
  turnWords,
  VOLATILE_FORMS,
} from "./planted-parts.ts";

export interface PlantedOptions {
  trajectories?: number;
  bytes?: number;
  seed?: number;
  files?: number;
  exact?: number;
  near?: number;
  editRate?: [number, number];
  leakWhole?: number;
  leakPart?: number;
  hardNegatives?: number;
  groupSize?: [number, number];
  boilerplateShare?: number;
  maxSimilarity?: number;
  benchmarkNegatives?: number;
  domains?: Partial<Record<Domain, number>>;
  maxTurns?: number;
  minWords?: number;
  benchmarkDomains?: Domain[];
  benchmarkEpisodes?: number;
}

type Resolved = Required<Omit<PlantedOptions, "bytes" | "domains">> & { domains: Partial<Record<Domain, number>> };

const DEFAULTS: Resolved = {
  trajectories: 400,
  seed: 1,
  files: 8,
  exact: 0.08,
  near: 0.08,
  editRate: [0.01, 0.02],
  leakWhole: 0.02,
  leakPart: 0.04,
  hardNegatives: 0.12,
  groupSize: [3, 5],
  boilerplateShare: 0.3,
  maxSimilarity: 0.3,
  benchmarkNegatives: 0.03,
  domains: { terminal: 0.2, swe: 0.2, mcp: 0.2, web: 0.1, search: 0.1, android: 0.1, os: 0.1 },
  maxTurns: 12,
  minWords: 150,
  benchmarkDomains: ["mcp", "terminal", "swe", "web"],
  benchmarkEpisodes: 30,
};

export type MustGo =
  | { id: string; domain: Domain; kind: "exact-copy"; stage: "exact"; kept_id: string; changed: string[] }
  | { id: string; domain: Domain; kind: "near-copy"; stage: "near"; kept_id: string; edits: number; edit_rate: number }
  | {
      id: string;
      domain: Domain;
      kind: "leak-whole" | "leak-suffix" | "leak-embedded";
      stage: "decontaminate";
      benchmark: string;
      benchmark_id: string;
      /** 0-based turns of the training trajectory that come from the episode (its boilerplate turns left out). */
      turns: number[];
    };

export interface MustStay {
  id: string;
  domain: Domain;
  kind: "original" | "unique" | "hard-negative" | "benchmark-negative";
  /** Hard negatives: their group; benchmark negatives: the benchmark file whose boilerplate they share. */
  group?: string;
}

export interface PlantedTruth {
  generator: string;
  seed: number;
  options: Resolved;
  volatile_forms: Record<string, string>;
  /** Training files in input order, relative to the corpus folder. */
  train_files: string[];
  benchmark_files: { path: string; domain: Domain; episodes: number; rows: number }[];
  counts: Record<string, number>;
  bytes: number;
  must_go: MustGo[];
  must_stay: MustStay[];
}

export interface PlantedCorpus {
  dir: string;
  trainDir: string;
  benchmarkFiles: string[];
  truthPath: string;
  truth: PlantedTruth;
}

type Slot =
  | { kind: "unique"; u: number }
  | { kind: "exact"; u: number; copy: number }
  | { kind: "near"; u: number; copy: number }
  | { kind: "leak-whole"; episode: number }
  | { kind: "leak-part"; episode: number; host: number; embedded: boolean }
  | { kind: "hard-negative"; group: number; member: number }
  | { kind: "benchmark-negative"; index: number };

/** Per-domain parameters with turn counts capped. */
function cappedParams(maxTurns: number): Record<Domain, DomainParams> {
  const cap = (v: number) => Math.min(v, maxTurns);
  return Object.fromEntries(
    Object.entries(PARAMS).map(([domain, p]) => [
      domain,
      {
        ...p,
        turns: { min: cap(p.turns.min), p10: cap(p.turns.p10), p50: cap(p.turns.p50), p90: cap(p.turns.p90), max: cap(p.turns.max) },
      },
    ]),
  ) as Record<Domain, DomainParams>;
}

function weightedDomain(rng: Rng, weights: Partial<Record<Domain, number>>): Domain {
  return rng.weighted(Object.entries(weights).filter(([, w]) => (w ?? 0) > 0) as [Domain, number][]);
}

function shuffle<T>(items: T[], rng: Rng): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

interface Group {
  domain: Domain;
  system: string;
  /** The shared boilerplate turns, then each member's own work. */
  boilerplate: Turn[];
  members: Turn[][];
  /** Members not written yet. */
  left: number;
}

/** Builds every trajectory of the corpus on demand, from the seed alone (cached: the benchmark, negatives' groups). */
class Planter {
  readonly o: Resolved;
  readonly params: Record<Domain, DomainParams>;
  readonly episodes: BenchmarkEpisode[] = [];
  private readonly envTurns = new Map<Domain, { turns: Turn[]; system: string }>();
  private readonly groups = new Map<number, Group>();
  private readonly benchmarkNegatives = new Map<Domain, Turn[][]>();

  constructor(o: Resolved) {
    this.o = o;
    this.params = cappedParams(o.maxTurns);
  }

  rng(...parts: (string | number)[]): Rng {
    return new Rng(seedOf(this.o.seed, ...parts));
  }

  uniqueDomain(u: number): Domain {
    return weightedDomain(this.rng("unique-domain", u), this.o.domains);
  }

  /** Unique trajectory `u` before volatile values: the synthetic generator, redrawn until it has `minWords` words. */
  uniqueBase(u: number): CanonicalRecord {
    const domain = this.uniqueDomain(u);
    for (let attempt = 0; ; attempt++) {
      const record = GENERATORS[domain](this.rng("unique", u, attempt), "", this.params[domain]);
      if (turnWords(record.turns) >= this.o.minWords || attempt >= 50) return record;
    }
  }

  /** Unique trajectory `u` with volatile slots planted (the same slots for it and all its copies). */
  uniqueTemplate(u: number, edit?: { rate: number; rng: Rng }): { base: CanonicalRecord; turns: Turn[]; edits?: number } {
    const base = this.uniqueBase(u);
    let turns = base.turns;
    let edits: number | undefined;
    if (edit) {
      const result = editWords(turns, edit.rate, edit.rng);
      turns = result.turns;
      edits = result.edits;
    }
    // Planted after the edits and from the same draws as the original's, so edits never touch a volatile value.
    return {
      base,
      turns: plantVolatile(base.domain, turns, this.rng("volatile", u), base.turns),
      ...(edits !== undefined ? { edits } : {}),
    };
  }

  /** Words of work that keep `prefix` at most `boilerplateShare` of a trajectory. */
  private workWords(prefix: readonly Turn[]): number {
    return Math.max(this.o.minWords, Math.ceil((turnWords(prefix) * (1 - this.o.boilerplateShare)) / this.o.boilerplateShare));
  }

  /**
   * Turns of new work after `prefix` (volatile values planted and drawn): at least `minWords`
   * words, grown by a third at a time until the trajectory's similarity to each of `others` is at
   * most `maxSimilarity`.
   */
  private separatedWork(
    {
      domain,
      prefix,
      others,
      minTurns,
      minObservationWords = 0,
    }: {
      domain: Domain;
      prefix: readonly Turn[];
      others: readonly Set<number>[];
      minTurns: number;
      minObservationWords?: number;
    },
    ...seed: (string | number)[]
  ): { work: Turn[]; set: Set<number> } {
    const rng = this.rng(...seed);
    const work: Turn[] = [];
    let target = this.workWords(prefix);
    for (let round = 0; ; round++) {
      const more = substanceTurns(domain, rng, this.params[domain], {
        minWords: target - turnWords(work),
        minTurns: Math.max(1, minTurns - work.length),
        minObservationWords,
      });
      work.push(...renderTurns(plantVolatile(domain, more, rng), rng));
      const set = shingles([...prefix, ...work]);
      if (round >= 12 || others.every((other) => jaccard(set, other) <= this.o.maxSimilarity)) return { work, set };
      target = Math.ceil(turnWords(work) * 1.34);
    }
  }

  environment(domain: Domain): { turns: Turn[]; system: string } {
    let env = this.envTurns.get(domain);
    if (!env) {
      const rng = this.rng("benchmark-environment", domain);
      const turns = boilerplateTurns(domain, rng, this.params[domain], rng.int(120, 220));
      env = { turns, system: environmentPrompt(domain, rng, `awb-${domain}`) };
      this.envTurns.set(domain, env);
    }
    return env;
  }

  /** Benchmark episodes: the environment's boilerplate turns, then 3 or more turns of work, kept apart from each other. */
  buildEpisodes(perDomain: number): void {
    for (const domain of this.o.benchmarkDomains) {
      const env = this.environment(domain);
      const sets: Set<number>[] = [];
      for (let e = 0; e < perDomain; e++) {
        const { work, set } = this.separatedWork(
          // Every turn of work has something to match: 40 words or more.
          { domain, prefix: env.turns, others: sets, minTurns: 3, minObservationWords: 40 },
          "episode",
          domain,
          e,
        );
        sets.push(set);
        const turns = [...env.turns, ...work];
        this.episodes.push({
          id: `${domain}-${String(e).padStart(5, "0")}`,
          domain,
          system: env.system,
          turns,
          boilerplate: env.turns.length,
        });
      }
    }
  }

  /** Hard-negative group `g` of `size` members: shared system prompt and first turns, then each member's own work. */
  group(g: number, size: number): Group {
    let group = this.groups.get(g);
    if (!group) {
      const rng = this.rng("group", g);
      const { search: _search, ...weights } = this.o.domains;
      const domain = weightedDomain(rng, weights);
      const boilerplate = boilerplateTurns(domain, rng, this.params[domain], rng.int(250, 600));
      const system = environmentPrompt(domain, rng, `sandbox-${g}`);
      const sets: Set<number>[] = [];
      const members: Turn[][] = [];
      for (let m = 0; m < size; m++) {
        const { work, set } = this.separatedWork({ domain, prefix: boilerplate, others: sets, minTurns: 2 }, "member", g, m);
        sets.push(set);
        members.push(work);
      }
      group = { domain, system, boilerplate, members, left: size };
      this.groups.set(g, group);
    }
    return group;
  }

  /** Frees a group's member once written; the group goes when all its members have. */
  release(g: number, member: number): void {
    const group = this.groups.get(g);
    if (!group) return;
    group.members[member] = [];
    group.left -= 1;
    if (group.left === 0) this.groups.set(g, { ...group, boilerplate: [], members: [] });
  }

  /** The `index`-th benchmark negative of `domain`'s environment: its boilerplate, then work kept apart from every episode and earlier negative. */
  benchmarkNegative(domain: Domain, index: number): Turn[] {
    let made = this.benchmarkNegatives.get(domain);
    if (!made) {
      made = [];
      this.benchmarkNegatives.set(domain, made);
    }
    const env = this.environment(domain);
    const others = this.episodes.filter((e) => e.domain === domain).map((e) => shingles(e.turns));
    for (const turns of made) others.push(shingles(turns));
    while (made.length <= index) {
      const { work, set } = this.separatedWork(
        { domain, prefix: env.turns, others, minTurns: 2 },
        "benchmark-negative",
        domain,
        made.length,
      );
      others.push(set);
      made.push([...env.turns, ...work]);
    }
    return made[index] as Turn[];
  }

  /** A fresh trajectory of `domain` (a leak's host), volatile values planted and drawn. */
  freshTurns(domain: Domain, minWords: number, ...seed: (string | number)[]): Turn[] {
    const rng = this.rng(...seed);
    const turns = substanceTurns(domain, rng, this.params[domain], { minWords, minTurns: 2 });
    return renderTurns(plantVolatile(domain, turns, rng), rng);
  }
}

/** About how many trajectories make `bytes` of training JSONL: the mean size of the first unique trajectories. */
function estimateTrajectories(planter: Planter, bytes: number): number {
  let total = 0;
  const sample = 300;
  for (let u = 0; u < sample; u++) {
    const { base, turns } = planter.uniqueTemplate(u);
    total += Buffer.byteLength(JSON.stringify({ ...base, turns: renderTurns(turns, planter.rng("values", u, 0)) })) + 1;
  }
  return Math.max(50, Math.round(bytes / (total / sample)));
}

export function generatePlantedCorpus(dir: string, options: PlantedOptions = {}): PlantedCorpus {
  const { bytes, ...rest } = options;
  const o: Resolved = { ...DEFAULTS, ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) };
  const planter = new Planter(o);
  const n = bytes !== undefined ? estimateTrajectories(planter, bytes) : o.trajectories;
  o.trajectories = n;

  // How many of each kind.
  const count = (share: number) => Math.round(n * share);
  const exact = count(o.exact);
  const near = count(o.near);
  const leakWhole = count(o.leakWhole);
  const leakPart = count(o.leakPart);
  const benchNegatives = o.benchmarkDomains.length > 0 ? count(o.benchmarkNegatives) : 0;
  const planRng = planter.rng("plan");
  const groupSizes: number[] = [];
  for (let members = 0; members < count(o.hardNegatives); ) {
    const size = planRng.int(o.groupSize[0], o.groupSize[1]);
    groupSizes.push(size);
    members += size;
  }
  const hardNegatives = groupSizes.reduce((a, b) => a + b, 0);
  const uniques = n - exact - near - leakWhole - leakPart - benchNegatives - hardNegatives;
  if (uniques < Math.max(1, Math.ceil((exact + near) / 3)))
    throw new Error(`planted corpus: the plant fractions leave ${uniques} unique trajectories for ${exact + near} copies; lower them`);
  const leaks = leakWhole + leakPart;
  if (leaks > 0 && o.benchmarkDomains.length === 0) throw new Error("planted corpus: leaks need at least one benchmark domain");
  const perDomain = Math.max(o.benchmarkEpisodes, Math.ceil(leaks / Math.max(1, o.benchmarkDomains.length)) + 5);
  o.benchmarkEpisodes = perDomain;
  planter.buildEpisodes(o.benchmarkDomains.length > 0 ? perDomain : 0);

  // The slots, shuffled, then each copy group's original moved to the group's first position.
  const slots: Slot[] = [];
  for (let u = 0; u < uniques; u++) slots.push({ kind: "unique", u });
  for (let c = 0; c < exact; c++) slots.push({ kind: "exact", u: planRng.int(0, uniques - 1), copy: c });
  for (let c = 0; c < near; c++) slots.push({ kind: "near", u: planRng.int(0, uniques - 1), copy: c });
  const episodeOrder = shuffle(
    planter.episodes.map((_, i) => i),
    planRng,
  );
  for (let i = 0; i < leakWhole; i++) slots.push({ kind: "leak-whole", episode: episodeOrder[i] as number });
  for (let i = 0; i < leakPart; i++)
    slots.push({ kind: "leak-part", episode: episodeOrder[leakWhole + i] as number, host: i, embedded: i % 2 === 1 });
  groupSizes.forEach((size, group) => {
    for (let member = 0; member < size; member++) slots.push({ kind: "hard-negative", group, member });
  });
  for (let i = 0; i < benchNegatives; i++) slots.push({ kind: "benchmark-negative", index: i });
  shuffle(slots, planRng);
  const firstOfGroup = new Map<number, number>();
  slots.forEach((slot, i) => {
    if (slot.kind !== "exact" && slot.kind !== "near") return;
    if (!firstOfGroup.has(slot.u) || (firstOfGroup.get(slot.u) as number) > i) firstOfGroup.set(slot.u, i);
  });
  slots.forEach((slot, i) => {
    if (slot.kind !== "unique") return;
    const first = firstOfGroup.get(slot.u);
    if (first !== undefined && first < i) [slots[i], slots[first]] = [slots[first] as Slot, slot];
  });

  // Ids by position; the original of each copy group is known once positions are.
  const idOf = (position: number) => `pc${o.seed}-${String(position).padStart(6, "0")}`;
  const originalId = new Map<number, string>();
  slots.forEach((slot, i) => {
    if (slot.kind === "unique") originalId.set(slot.u, idOf(i));
  });
  const copied = new Set([...firstOfGroup.keys()]);

  mkdirSync(join(dir, "train"), { recursive: true });
  mkdirSync(join(dir, "benchmark"), { recursive: true });
  const benchmarkPath = (domain: Domain) => `benchmark/${domain}_test.jsonl`;
  const mustGo: MustGo[] = [];
  const mustStay: MustStay[] = [];
  const trainFiles: string[] = [];
  let totalBytes = 0;

  const record = (slot: Slot, id: string): CanonicalRecord => {
    switch (slot.kind) {
      case "unique": {
        const { base, turns } = planter.uniqueTemplate(slot.u);
        mustStay.push({ id, domain: base.domain, kind: copied.has(slot.u) ? "original" : "unique" });
        return { ...base, id, turns: renderTurns(turns, planter.rng("values", slot.u, 0)) };
      }
      case "exact": {
        const { base, turns } = planter.uniqueTemplate(slot.u);
        const rng = planter.rng("exact", slot.copy);
        const changed = ["volatile values"];
        const variant = rng.next();
        const copy: CanonicalRecord & { system?: string } = {
          ...base,
          id,
          turns: renderTurns(turns, planter.rng("values", slot.u, 1 + slot.copy)),
        };
        if (variant < 0.25) {
          copy.task = sentence(rng, 8, 20);
          changed.push("task");
        } else if (variant < 0.5) {
          copy.system = environmentPrompt(base.domain, rng, `retry-${slot.copy}`);
          changed.push("system");
        }
        mustGo.push({ id, domain: base.domain, kind: "exact-copy", stage: "exact", kept_id: originalId.get(slot.u) as string, changed });
        return copy;
      }
      case "near": {
        const rng = planter.rng("near", slot.copy);
        const rate = o.editRate[0] + rng.next() * (o.editRate[1] - o.editRate[0]);
        const { base, turns, edits } = planter.uniqueTemplate(slot.u, { rate, rng });
        mustGo.push({
          id,
          domain: base.domain,
          kind: "near-copy",
          stage: "near",
          kept_id: originalId.get(slot.u) as string,
          edits: edits ?? 0,
          edit_rate: Math.round(rate * 10000) / 10000,
        });
        return { ...base, id, turns: renderTurns(turns, planter.rng("values", slot.u, 100_000 + slot.copy)) };
      }
      case "leak-whole": {
        const episode = planter.episodes[slot.episode] as BenchmarkEpisode;
        const rng = planter.rng("leak", slot.episode);
        const turns = episode.turns.map((turn) => ({ ...turn }));
        mustGo.push({
          id,
          domain: episode.domain,
          kind: "leak-whole",
          stage: "decontaminate",
          benchmark: benchmarkPath(episode.domain),
          benchmark_id: episode.id,
          turns: turns.flatMap((_, i) => (i >= episode.boilerplate ? [i] : [])),
        });
        return {
          id,
          domain: episode.domain,
          ...(rng.chance(0.5) ? { system: episode.system } : {}),
          ...(rng.chance(0.5) ? { task: sentence(rng, 6, 16) } : {}),
          turns,
        } as CanonicalRecord;
      }
      case "leak-part": {
        const episode = planter.episodes[slot.episode] as BenchmarkEpisode;
        const rng = planter.rng("leak", slot.episode);
        const host = planter.freshTurns(episode.domain, o.minWords, "host", slot.host);
        const work = episode.turns.length - episode.boilerplate;
        const k = Math.min(work, rng.int(2, 3));
        const suffix = episode.turns.slice(-k);
        const at = slot.embedded ? rng.int(1, host.length - 1) : host.length;
        const turns = [...host.slice(0, at), ...suffix, ...host.slice(at)];
        mustGo.push({
          id,
          domain: episode.domain,
          kind: slot.embedded ? "leak-embedded" : "leak-suffix",
          stage: "decontaminate",
          benchmark: benchmarkPath(episode.domain),
          benchmark_id: episode.id,
          turns: suffix.map((_, i) => at + i),
        });
        return { id, domain: episode.domain, task: sentence(rng, 6, 16), turns } as CanonicalRecord;
      }
      case "hard-negative": {
        const group = planter.group(slot.group, groupSizes[slot.group] as number);
        mustStay.push({ id, domain: group.domain, kind: "hard-negative", group: `group-${slot.group}` });
        const rng = planter.rng("member-task", slot.group, slot.member);
        const turns = [...group.boilerplate, ...(group.members[slot.member] as Turn[])];
        planter.release(slot.group, slot.member);
        return { id, domain: group.domain, system: group.system, task: sentence(rng, 6, 16), turns } as CanonicalRecord;
      }
      case "benchmark-negative": {
        const domain = o.benchmarkDomains[slot.index % o.benchmarkDomains.length] as Domain;
        const turns = planter.benchmarkNegative(domain, Math.floor(slot.index / o.benchmarkDomains.length));
        mustStay.push({ id, domain, kind: "benchmark-negative", group: benchmarkPath(domain) });
        return { id, domain, system: planter.environment(domain).system, turns } as CanonicalRecord;
      }
    }
  };

  for (let f = 0; f < o.files; f++) {
    const name = `train/part-${String(f).padStart(5, "0")}.jsonl`;
    trainFiles.push(name);
    const fd = openSync(join(dir, name), "w");
    try {
      let pending: string[] = [];
      let pendingBytes = 0;
      const [from, to] = [Math.floor((f * n) / o.files), Math.floor(((f + 1) * n) / o.files)];
      for (let i = from; i < to; i++) {
        const line = `${JSON.stringify(record(slots[i] as Slot, idOf(i)))}\n`;
        pending.push(line);
        pendingBytes += Buffer.byteLength(line);
        if (pendingBytes >= 1 << 20) {
          writeSync(fd, pending.join(""));
          totalBytes += pendingBytes;
          pending = [];
          pendingBytes = 0;
        }
      }
      writeSync(fd, pending.join(""));
      totalBytes += pendingBytes;
    } finally {
      closeSync(fd);
    }
  }

  const benchmarkFiles: PlantedTruth["benchmark_files"] = [];
  for (const domain of o.benchmarkDomains) {
    const episodes = planter.episodes.filter((e) => e.domain === domain);
    const rows = episodes.flatMap(agentWorldBenchRows);
    writeFileSync(join(dir, benchmarkPath(domain)), `${rows.join("\n")}\n`);
    benchmarkFiles.push({ path: benchmarkPath(domain), domain, episodes: episodes.length, rows: rows.length });
  }

  const counts: Record<string, number> = { trajectories: n, must_go: mustGo.length, must_stay: mustStay.length };
  for (const entry of [...mustGo, ...mustStay]) counts[entry.kind] = (counts[entry.kind] ?? 0) + 1;
  counts.hard_negative_groups = groupSizes.length;
  const truth: PlantedTruth = {
    generator: "bench/curate/planted-corpus.ts",
    seed: o.seed,
    options: o,
    volatile_forms: VOLATILE_FORMS,
    train_files: trainFiles,
    benchmark_files: benchmarkFiles,
    counts,
    bytes: totalBytes,
    must_go: mustGo,
    must_stay: mustStay,
  };
  const truthPath = join(dir, "truth.json");
  writeFileSync(truthPath, `${JSON.stringify(truth, null, 1)}\n`);
  return { dir, trainDir: join(dir, "train"), benchmarkFiles: benchmarkFiles.map((b) => join(dir, b.path)), truthPath, truth };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      out: { type: "string" },
      trajectories: { type: "string" },
      bytes: { type: "string" },
      seed: { type: "string", default: "1" },
      files: { type: "string" },
    },
  });
  if (!values.out) {
    console.error("usage: node bench/curate/planted-corpus.ts --out DIR [--trajectories N | --bytes 50MB] [--seed S] [--files F]");
    process.exit(2);
  }
  const options: PlantedOptions = { seed: Number(values.seed) };
  try {
    if (values.bytes) options.bytes = parseBytes(values.bytes);
    if (values.trajectories) options.trajectories = Number(values.trajectories);
    if (values.files) options.files = Number(values.files);
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
  const started = performance.now();
  const corpus = generatePlantedCorpus(values.out, options);
  const seconds = (performance.now() - started) / 1000;
  const { counts, bytes, benchmark_files } = corpus.truth;
  console.log(
    `${values.out}: ${counts.trajectories} trajectories, ${(bytes / 1e6).toFixed(1)} MB in ${corpus.truth.train_files.length} files`,
  );
  for (const [kind, value] of Object.entries(counts)) console.log(`  ${kind.padEnd(22)} ${value}`);
  for (const b of benchmark_files) console.log(`  ${b.path}: ${b.episodes} episodes, ${b.rows} rows`);
  console.log(`truth: ${corpus.truthPath} (${seconds.toFixed(1)} s)`);
}
