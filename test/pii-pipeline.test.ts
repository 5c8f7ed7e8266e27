import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import type { Manifest } from "../src/output/manifest.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { ROOT, tempDir } from "./helpers.ts";
import { filesUnder } from "./support/output-rows.ts";
import { PII_JOB_COUNTS, PII_JOB_KEPT, PII_JOB_REDACTED, writePiiJob } from "./support/pii-job.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const cli = async (...args: string[]) => (await exec(process.execPath, [CLI, ...args], { cwd: ROOT })).stdout;

/** Each shard row's id and its messages' text, joined. */
async function rowTexts(out: string): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const name of filesUnder(join(out, "data"))) {
    const shard = await openShard(join(out, "data", name));
    for (let r = 0; r < shard.numRows; r++) {
      const row = shardRow(shard, r);
      texts.set(row.id, (row.messages ?? []).map((m) => m.content).join("\n---\n"));
    }
  }
  return texts;
}

describe("normalize.pii end to end: run, stats, pii scan", async () => {
  const dir = tempDir("lwm-pii-");
  const config = writePiiJob(dir);
  const out = join(dir, "out");
  const runOutput = await cli("run", config, "--progress", "none");
  const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as Manifest;
  const texts = await rowTexts(out);

  it("replaces every value with its typed placeholder, the same value with the same number across turns and fields", () => {
    // An id keeps its readable parts; a hash of the original keeps two such ids apart.
    const ids = [...texts.keys()].sort();
    expect(ids.slice(0, 4)).toEqual(["contacts-2", "cust-1", "doc-1", "ssh-3"]);
    expect(ids[4]).toMatch(/^user:<EMAIL_1>:run3#[0-9a-f]{12}$/);
    const mcp = texts.get("cust-1") ?? "";
    // Three spellings of one address (two cases), in an observation, the next action and its observation: one placeholder.
    expect(mcp.match(/<EMAIL_1>/g)).toHaveLength(3);
    expect(mcp).not.toContain("<EMAIL_2>");
    expect(mcp).toContain('"phone": "<PHONE_1>"');
    expect(mcp).toContain('"card": "<CREDIT_CARD_1>"');
    const web = texts.get("contacts-2") ?? "";
    expect(web.match(/<EMAIL_1>/g)).toHaveLength(3);
    expect(web.match(/<EMAIL_2>/g)).toHaveLength(1);
    expect(web).toContain('click "<EMAIL_1>"');
    expect(web).toContain("Work: <PHONE_1>");
    // A new record numbers from 1 again.
    expect(texts.get("doc-1")).toBe(
      "Support: write to <EMAIL_1> or call <PHONE_1>. Refunds go to IBAN <IBAN_1> within 5 days (policy v3.2.1).",
    );
    const terminal = texts.get("ssh-3") ?? "";
    expect(terminal).toContain("deploy from <IP_1> port 52144");
  });

  it("leaves what the policy keeps and what only looks like personal data", () => {
    const all = [...texts.values()].join("\n");
    for (const kept of PII_JOB_KEPT) expect(all, kept).toContain(kept);
  });

  it("no value reaches any output file: shards, quarantine, card, manifest, stats tables", () => {
    const all = [...texts.values(), ...[...texts.keys()]].join("\n");
    for (const value of PII_JOB_REDACTED) expect(all, value).not.toContain(value);
    for (const name of filesUnder(out).filter((n) => !n.endsWith(".parquet"))) {
      const text = readFileSync(join(out, name), "utf8");
      for (const value of PII_JOB_REDACTED) expect(text, `${name}: ${value}`).not.toContain(value);
    }
    const quarantine = readFileSync(join(out, "quarantine/task-00000.jsonl"), "utf8");
    expect(JSON.parse(quarantine).excerpt).toContain('"turns":"contact <EMAIL_1>"');
  });

  it("counts per domain and kind in the manifest's pii block, in the card, in `run` and `stats`", async () => {
    expect(manifest.pii).toEqual({
      settings: {
        enabled: true,
        kinds: {
          email: true,
          phone: true,
          ip: true,
          credit_card: true,
          iban: true,
          national_id: true,
          postal_address: true,
          person_name: false,
        },
        phone_countries: ["US"],
        ip: { private: "keep", documentation: "keep" },
        domains: { terminal: { kinds: { phone: false } } },
      },
      ...PII_JOB_COUNTS,
    });
    expect(Object.keys(manifest.normalize).filter((k) => k.startsWith("pii"))).toEqual([]);
    expect(runOutput).toContain("personal data 15 value(s) replaced in 5 record(s): email 9, phone 3, credit_card 1, iban 1, ip 1");
    const card = readFileSync(join(out, "README.md"), "utf8");
    expect(card).toContain("## Personal data");
    expect(card).toContain("| web | 1 | 0 | 4 | 0 | 0 | 1 |");
    const stats = await cli("stats", out);
    expect(stats).toContain("personal data: 15 value(s) replaced in 5 record(s)");
    expect(stats).toMatch(/ {2}mcp +2 +1 +4 +0 +0 +1\n/);
    expect(stats).toContain("kept by the IP range policy: terminal ip_private 1");
    expect(await cli("verify", out)).toBeDefined();
  });

  it("`pii scan` finds, before a run, exactly what the run replaced, with the text around each value", async () => {
    const json = join(dir, "findings.jsonl");
    const printed = await cli("pii", "scan", config, "--json", json, "--limit", "1");
    const findings = readFileSync(json, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { domain: string; kind: string; value: string; field: string });
    const counted: Record<string, Record<string, number>> = {};
    for (const f of findings) {
      counted[f.domain] ??= {};
      (counted[f.domain] as Record<string, number>)[f.kind] = ((counted[f.domain] as Record<string, number>)[f.kind] ?? 0) + 1;
    }
    expect(counted).toEqual(PII_JOB_COUNTS.replaced);
    expect(findings).toContainEqual(expect.objectContaining({ domain: "mcp", field: "id", kind: "email", value: "eve@example.org" }));
    expect(printed).toContain("6 record(s) scanned, 1 quarantined (not scanned), 5 with personal data");
    // What is not scanned is said with its place, field and reason, as `run` would quarantine it.
    expect(printed).toContain("quarantined: trajectories.jsonl:5: turns: Invalid input: expected array, received string");
    expect(printed).toContain(
      'trajectories.jsonl:1  turns.0.observation  email  …    "id": 4821,⏎      "email": "[dana.whitfield@gmail.com]"',
    );
    expect(printed).toContain("(email: 1 of 9, phone: 1 of 3 shown; --limit raises it)");
  });

  it("SFT prompts and their ground truth are built from the redacted trajectories", async () => {
    const prompts = join(dir, "prompts.jsonl");
    await cli("sft", "prompts", config, "--out", prompts);
    const text = readFileSync(prompts, "utf8");
    for (const value of PII_JOB_REDACTED) expect(text, value).not.toContain(value);
    expect(text).toContain("<EMAIL_1>");
    expect(text).toContain("<IP_1>");
  });

  it("off, it changes nothing: the config hash is that of a config without it", async () => {
    const hash = async (pii?: string) => {
      const d = tempDir("lwm-pii-hash-");
      return (await planJob(loadConfig(writePiiJob(d, pii)))).configSha256;
    };
    const off = await hash("{ enabled: false, kinds: { ip: false }, phone_countries: [GB] }");
    expect(off).toBe(await hash("{ enabled: false }"));
    expect(await hash("{ enabled: true }")).not.toBe(off);
    expect(await hash("{ enabled: false, domains: { mcp: { enabled: true } } }")).not.toBe(off);
  });
});
