import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  CONFIG_DOC,
  configReference,
  configSections,
  defaultsProblems,
  JOB_KEYS,
  missingDefaults,
  readDefaults,
  referenceDrift,
  unknownDefaults,
} from "../src/config/config-reference.ts";
import { configSchema } from "../src/config/schema.ts";
import { ROOT } from "./helpers.ts";

const defaults = readDefaults();
const rowsOf = (schema: z.ZodType, defaultValues: Record<string, unknown> = {}) =>
  configSections({ schema, defaults: defaultValues }).flatMap((section) => section.rows);

describe("config reference (docs/config.md)", () => {
  it("is what src/config/schema.ts and configs/defaults.yaml generate", () => {
    const onDisk = readFileSync(join(ROOT, CONFIG_DOC), "utf8");
    // The message says what differs and to run `npm run config:reference`.
    const drift = referenceDrift(onDisk, configReference());
    if (drift !== undefined) expect.fail(drift);
  });

  it("gives every key a type, a default or a required/optional mark, and a meaning", () => {
    const rows = configSections().flatMap((section) => section.rows);
    expect(rows.length).toBeGreaterThan(100);
    expect(rows.filter((row) => row.meaning.trim() === "").map((row) => row.path)).toEqual([]);
    expect(rows.filter((row) => row.type === "" || row.type === "any").map((row) => row.path)).toEqual([]);
    const byPath = new Map(rows.map((row) => [row.path, row]));
    expect(byPath.get("inputs")?.default).toBe("required");
    expect(byPath.get("inputs[].format")?.default).toBe("`auto`"); // a zod default, not a defaults.yaml one
    expect(byPath.get("input.root")?.default).toBe("—");
    expect(byPath.get("input.max_line_bytes")).toMatchObject({ type: "integer ≥ 1", default: "`67108864` (64 MiB)" });
    expect(byPath.get("dedup.min_similarity")?.type).toBe("number in [0, 1]");
    expect(byPath.get("decontaminate.min_overlap")?.type).toBe("number in (0, 1]");
    expect(byPath.get("mixture.total_tokens")?.type).toBe("integer ≥ 1 or `auto`");
    expect(byPath.get("pack.strategy")?.type).toBe("`best-fit` | `in-order`");
    expect(byPath.get("sft.judge.base_url")).toMatchObject({ type: "URL or null", default: "`null`" });
    // Maps: one row per map, the key a placeholder; values with keys of their own get rows.
    expect(byPath.get("mixture.sources.<name>")).toMatchObject({
      type: expect.stringContaining("`{ factor }` or `{ share }`"),
      default: "`{}`",
    });
    expect(byPath.has("mixture.sources.<name>.share")).toBe(true);
    expect(byPath.get("normalize.max_observation_chars.<domain>")?.default).toContain("web: 131072");
    expect(byPath.get("mask.domain_keep.<domain>.<class>")?.type).toContain("number in [0, 1]");
    expect(byPath.has("normalize.max_observation_chars.web")).toBe(false);
  });

  it("keeps table cells intact: pipes escaped, HTML-like text outside code spans escaped", () => {
    const doc = configReference();
    expect(doc).toContain('`{"<\\|im_start\\|>": 100264}`');
    for (const line of doc.split("\n").filter((l) => l.startsWith("| `"))) {
      expect(line.replaceAll("\\|", "").split("|").length, line).toBe(6);
    }
  });
});

describe("configs/defaults.yaml against the schema", () => {
  it("has a default for every required key but the job's own (inputs), no key the schema lacks, and parses", () => {
    expect(missingDefaults(configSchema, defaults)).toEqual([...JOB_KEYS]);
    expect(unknownDefaults(configSchema, defaults)).toEqual([]);
    expect(defaultsProblems(configSchema, defaults)).toEqual([]);
  });

  it("reports a misspelt key, a key the schema lacks and a value of the wrong type", () => {
    const output = { ...(defaults.output as object), bukets: 3, num_buckets: "8" };
    const broken = { ...defaults, output, retired_section: { on: true } };
    expect(unknownDefaults(configSchema, broken)).toEqual(["output.bukets", "retired_section"]);
    const problems = defaultsProblems(configSchema, broken);
    expect(problems).toContain("configs/defaults.yaml: output.bukets: not a key of the schema (src/config/schema.ts)");
    expect(problems).toContain("configs/defaults.yaml: retired_section: not a key of the schema (src/config/schema.ts)");
    expect(problems.some((p) => /does not parse under the schema: output\.num_buckets: .*expected number/.test(p))).toBe(true);
  });
});

describe("negative control: a schema that gained a key", () => {
  const extended = configSchema.extend({
    extra: z
      .object({
        knob: z.number().int().positive().describe("A new knob."),
        hint: z.string().optional().describe("Optional, so it needs no default."),
      })
      .strict()
      .describe("A section added after docs/config.md was generated."),
  });

  it("makes docs/config.md drift, with a message saying what to run", () => {
    const onDisk = readFileSync(join(ROOT, CONFIG_DOC), "utf8");
    const generated = configReference({ schema: extended, defaults });
    const drift = referenceDrift(onDisk, generated);
    expect(drift).toContain("docs/config.md differs from what src/config/schema.ts and configs/defaults.yaml generate");
    expect(drift).toContain("npm run config:reference");
    expect(drift).toContain("+| `extra.knob` | integer ≥ 1 | **required** | A new knob. |");
    expect(referenceDrift(undefined, generated)).toContain("docs/config.md is missing");
  });

  it("is reported as a key without a default until defaults.yaml has one", () => {
    expect(missingDefaults(extended, defaults)).toEqual(["inputs", "extra.knob"]);
    expect(defaultsProblems(extended, defaults)[0]).toMatch(
      /^configs\/defaults\.yaml: extra\.knob: no default, and the schema requires it/,
    );
    const fixed = { ...defaults, extra: { knob: 2 } };
    expect(defaultsProblems(extended, fixed)).toEqual([]);
    expect(configReference({ schema: extended, defaults: fixed })).toContain("| `extra.knob` | integer ≥ 1 | `2` | A new knob. |");
  });

  it("drifts when only a meaning changes", () => {
    const redescribed = configSchema.extend({ pipeline: z.string().min(1).describe("Another meaning.") });
    expect(referenceDrift(configReference(), configReference({ schema: redescribed, defaults }))).toContain("Another meaning.");
  });
});

describe("generic walk: sections the schema does not have yet", () => {
  it("lists union members' keys, recursive expressions once, optional sections and maps of objects", () => {
    const predicate = z
      .object({ field: z.enum(["domain", "turns"]).describe("What is compared."), min: z.number().optional().describe("Lower bound.") })
      .strict();
    type Expr = z.infer<typeof predicate> | { all: Expr[] } | { not: Expr };
    const expr: z.ZodType<Expr> = z.lazy(() =>
      z.union([predicate, z.object({ all: z.array(expr).describe("Every one holds.") }).strict(), z.object({ not: expr }).strict()]),
    );
    const schema = z
      .object({
        filters: z
          .array(
            z.discriminatedUnion("type", [
              z.object({ type: z.literal("filter"), where: expr.describe("When a record is dropped.") }).strict(),
              z.object({ type: z.literal("select"), max_per: z.string().describe("Key.") }).strict(),
            ]),
          )
          .optional()
          .describe("Record filters."),
        score: z
          .object({
            columns: z
              .record(z.string(), z.object({ rubric: z.string().describe("Rubric file.") }).strict())
              .meta({ keyName: "column", description: "Score columns." }),
          })
          .strict()
          .describe("Model scoring."),
      })
      .strict();
    const rows = new Map(rowsOf(schema, { score: { columns: {} } }).map((row) => [row.path, row]));
    expect([...rows.keys()]).toEqual([
      "filters",
      "filters[]",
      "filters[].type",
      "filters[].where",
      "filters[].where.field",
      "filters[].where.min",
      "filters[].where.all",
      "filters[].where.all[]",
      "filters[].where.not",
      "filters[].max_per",
      "score.columns.<column>",
      "score.columns.<column>.rubric",
    ]);
    expect(rows.get("filters")?.default).toBe("—");
    expect(rows.get("filters[].type")?.type).toBe("`filter` or `select`");
    expect(rows.get("filters[].where.not")?.type).toBe("the same as `filters[].where` (recursive)");
    expect(rows.get("score.columns.<column>")).toMatchObject({ default: "`{}`", meaning: "Score columns." });
  });
});

describe("scripts/config-reference.ts", () => {
  it("--check passes on this checkout and refuses unknown arguments", () => {
    const check = spawnSync(process.execPath, ["scripts/config-reference.ts", "--check"], { cwd: ROOT, encoding: "utf8" });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
    const bad = spawnSync(process.execPath, ["scripts/config-reference.ts", "--chek"], { cwd: ROOT, encoding: "utf8" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("unknown argument(s) --chek");
  });
});
