import { describe, expect, it } from "vitest";
import { meanInterval, pairedDifference, tQuantile975 } from "../src/ablate/confidence.ts";
import { cartesianVariants, parseVary, variantName } from "../src/ablate/variants.ts";
import { applyDottedOverride, parseYamlScalar } from "../src/config/dotted-overrides.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { configSchema } from "../src/config/schema.ts";
import { DEMO_CONFIG } from "./helpers.ts";

describe("dotted config overrides", () => {
  it("set a nested key before validation, leaving the rest of the config as it was", () => {
    const plain = loadConfig(DEMO_CONFIG).config;
    const changed = loadConfig(DEMO_CONFIG, { set: [{ key: "mask.policy", value: "all-observations" }] }).config;
    expect(plain.mask.policy).toBe("turn-stats");
    expect(changed.mask.policy).toBe("all-observations");
    expect({ ...changed, mask: plain.mask }).toEqual(plain);
  });

  it("reach keys of free-form maps and numbers as YAML reads them", () => {
    const { config } = loadConfig(DEMO_CONFIG, {
      set: [
        { key: "mask.keep.Echo", value: parseYamlScalar("0.5") },
        { key: "mask.domain_keep.web", value: parseYamlScalar("{ Boilerplate: 0.2 }") },
      ],
    });
    expect(config.mask.keep.Echo).toBe(0.5);
    expect(config.mask.domain_keep.web).toEqual({ Boilerplate: 0.2 });
  });

  it("refuse an unknown key, naming it and where it was looked for", () => {
    expect(() => loadConfig(DEMO_CONFIG, { set: [{ key: "mask.polcy", value: "all-observations" }] })).toThrow(
      /config key "mask\.polcy": mask has no key "polcy" \(known: policy,/,
    );
    expect(() => applyDottedOverride({}, { key: "maks.policy", value: 1 }, configSchema)).toThrow(/the top level has no key "maks"/);
    expect(() => applyDottedOverride({ mask: { policy: "x" } }, { key: "mask.policy.deeper", value: 1 }, configSchema)).toThrow(
      /mask\.policy is not a mapping/,
    );
  });

  it("leave a value the schema refuses to the validation, which names the key", () => {
    expect(() => loadConfig(DEMO_CONFIG, { set: [{ key: "mask.policy", value: "bogus" }] })).toThrow(/mask\.policy: Invalid option/);
  });

  it("read values as YAML scalars", () => {
    expect(parseYamlScalar("0.25")).toBe(0.25);
    expect(parseYamlScalar("true")).toBe(true);
    expect(parseYamlScalar("turn-stats")).toBe("turn-stats");
    expect(parseYamlScalar("[a, b]")).toEqual(["a", "b"]);
  });
});

describe("variants", () => {
  it("are the cartesian product, the first --vary slowest, the first values the baseline", () => {
    const variants = cartesianVariants([parseVary("mask.policy=all-observations,turn-stats"), parseVary("mask.seed=0,1")]);
    expect(variants.map((v) => v.name)).toEqual([
      "mask.policy=all-observations+mask.seed=0",
      "mask.policy=all-observations+mask.seed=1",
      "mask.policy=turn-stats+mask.seed=0",
      "mask.policy=turn-stats+mask.seed=1",
    ]);
    expect(variants[3]?.set).toEqual([
      { key: "mask.policy", value: "turn-stats" },
      { key: "mask.seed", value: 1 },
    ]);
  });

  it("keep YAML flow values whole: commas inside brackets do not separate values", () => {
    expect(parseVary("mask.weights.by_class={},{ Echo: 0.1, Boilerplate: 0.2 },[a, b]").values).toEqual([
      {},
      { Echo: 0.1, Boilerplate: 0.2 },
      ["a", "b"],
    ]);
  });

  it("have folder-safe names", () => {
    expect(variantName([{ key: "mask.domain_keep.web", value: { Echo: 0.5 } }])).toBe("mask.domain_keep.web=__Echo__0.5_");
    expect(variantName([])).toBe("base");
  });

  it("refuse malformed or repeated --vary", () => {
    expect(() => parseVary("mask.policy")).toThrow(/expected <dotted.key>=<v1>,<v2>/);
    expect(() => parseVary("mask.policy=a,,b")).toThrow(/empty value/);
    expect(() => cartesianVariants([parseVary("mask.seed=0"), parseVary("mask.seed=1")])).toThrow(/given twice/);
    expect(() => cartesianVariants([parseVary("mask.seed=a b,a_b")])).toThrow(/share the folder name/);
  });
});

describe("confidence intervals", () => {
  it("match a hand computation: mean ± t(0.975, n-1) s/√n", () => {
    // [1, 2, 3]: mean 2, s = 1, t(0.975, 2) = 4.303 → half-width 4.303 / √3 = 2.48434.
    const m = meanInterval([1, 2, 3]);
    expect(m.mean).toBe(2);
    expect(m.half).toBeCloseTo(2.48434, 4);
    expect(m.low).toBeCloseTo(-0.48434, 4);
    expect(meanInterval([5]).half).toBeNull();
  });

  it("pair differences by seed", () => {
    // Differences 0.1, 0.2, -0.1: mean 0.06667, s = 0.152753, half = 4.303 · s / √3 = 0.37949.
    const variant = new Map([
      [0, 2.0],
      [1, 2.5],
      [2, 2.1],
    ]);
    const base = new Map([
      [0, 1.9],
      [1, 2.3],
      [2, 2.2],
    ]);
    const d = pairedDifference(variant, base);
    expect(d.mean).toBeCloseTo(0.066667, 5);
    expect(d.half).toBeCloseTo(0.37949, 4);
    // The interval is that of the per-seed differences themselves.
    expect(meanInterval([0.1, 0.2, -0.1]).half).toBeCloseTo(d.half as number, 10);
  });

  it("use Student's t quantiles", () => {
    expect(tQuantile975(1)).toBe(12.706);
    expect(tQuantile975(30)).toBe(2.042);
    expect(tQuantile975(60)).toBeCloseTo(2.0003, 3);
    expect(tQuantile975(1000)).toBeCloseTo(1.9623, 3);
    expect(() => tQuantile975(0)).toThrow();
  });
});
