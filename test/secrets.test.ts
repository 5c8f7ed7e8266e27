import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { redactSecrets, SECRET_TYPES, secretPlaceholder } from "../src/normalize/secrets.ts";
import { prng, secretShapes } from "./fixtures/secrets/secret-shapes.ts";
import { ROOT } from "./helpers.ts";

const shapes = secretShapes();

function redact(text: string) {
  const counters = new Map<string, number>();
  return { text: redactSecrets(text, counters), counters: Object.fromEntries(counters) };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("secret redaction: a corpus of realistic secret shapes", () => {
  it("has at least 30 shapes of at least 30 types, all of them documented types", () => {
    expect(shapes.length).toBeGreaterThanOrEqual(30);
    const types = new Set(shapes.map((s) => s.type));
    expect(types.size).toBeGreaterThanOrEqual(30);
    for (const type of types) expect(SECRET_TYPES).toContain(type);
  });

  it.each(shapes.map((s) => [s.name, s] as const))("%s: fully redacted with its type, context kept", (_name, shape) => {
    const { text, counters } = redact(shape.text);
    expect(text).not.toContain(shape.secret);
    expect(text).toContain(secretPlaceholder(shape.type));
    expect(counters).toEqual({ [`secrets.${shape.type}`]: 1 });
    for (const kept of shape.keep ?? []) expect(text).toContain(kept);
    // No long piece of the secret survives either (e.g. a half-matched token).
    for (let i = 0; i + 12 <= shape.secret.length; i += 6) expect(text).not.toContain(shape.secret.slice(i, i + 12));
  });

  it("keeps user and host of a URL and the scheme of an Authorization header", () => {
    const url = shapes.find((s) => s.type === "url_password") as (typeof shapes)[number];
    expect(redact(url.text).text).toBe("DATABASE_URL=postgres://app_user:<SECRET:url_password>@db.internal:5432/app");
    const bearer = shapes.find((s) => s.type === "bearer_token") as (typeof shapes)[number];
    expect(redact(bearer.text).text).toBe('curl -s -H "Authorization: Bearer <SECRET:bearer_token>" https://api.internal/v1/me');
  });

  it("redacts every secret of a text holding all of them, counting each type", () => {
    const { text, counters } = redact(shapes.map((s) => s.text).join("\n---\n"));
    for (const shape of shapes) expect(text).not.toContain(shape.secret);
    const expected: Record<string, number> = {};
    for (const shape of shapes) expected[`secrets.${shape.type}`] = (expected[`secrets.${shape.type}`] ?? 0) + 1;
    expect(counters).toEqual(expected);
  });

  it("is idempotent: placeholders are never matched again", () => {
    const once = redact(shapes.map((s) => s.text).join("\n"));
    const twice = redact(once.text);
    expect(twice.text).toBe(once.text);
    expect(twice.counters).toEqual({});
  });

  it("redacts a whole GCP service-account key file: the PEM block and the key id", () => {
    const random = prng(7);
    const body = Array.from({ length: 3 }, () =>
      Array.from({ length: 64 }, () => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789+/"[Math.floor(random() * 44)]).join(""),
    );
    const keyId = Array.from({ length: 40 }, () => "0123456789abcdef"[Math.floor(random() * 16)]).join("");
    const pem = ["-----BEGIN ", "PRIVATE KEY-----\\n", body.join("\\n"), "\\n-----END ", "PRIVATE KEY-----\\n"].join("");
    const file = JSON.stringify(
      {
        type: "service_account",
        project_id: "demo",
        private_key_id: keyId,
        private_key: "PEM",
        client_email: "svc@demo.iam.gserviceaccount.com",
      },
      null,
      2,
    ).replace('"PEM"', `"${pem}"`);
    const { text, counters } = redact(file);
    expect(counters).toEqual({ "secrets.gcp_service_account_private_key": 1, "secrets.gcp_private_key_id": 1 });
    expect(text).toContain('"private_key": "<SECRET:gcp_service_account_private_key>\\n"');
    expect(text).toContain('"private_key_id": "<SECRET:gcp_private_key_id>"');
    expect(text).toContain("svc@demo.iam.gserviceaccount.com");
  });

  it("redacts a PEM private key cut off before its END line", () => {
    const cut = [
      "-----BEGIN ",
      "EC PRIVATE KEY-----\n",
      "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oE4ZPbWMQ6HaoAoGCCqGSM49\n",
      "AwEHoUQDQgAE",
    ].join("");
    const { text, counters } = redact(`${cut}\n(output truncated)`);
    expect(text).toBe("<SECRET:private_key>(output truncated)");
    expect(counters).toEqual({ "secrets.private_key": 1 });
  });
});

describe("secret redaction: no false positives on ordinary text", () => {
  const random = prng(99);
  const pick = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
  const HEX = "0123456789abcdef";

  it("leaves terminal output, code, JSON, hashes, UUIDs, public keys and placeholders alone", () => {
    const text = readFileSync(join(ROOT, "test/fixtures/secrets/ordinary-text.txt"), "utf8");
    expect(redact(text)).toEqual({ text, counters: {} });
  });

  it("leaves base64 images, long hex, git SHAs, sha256 sums and UUIDs alone (generated, 1 MB)", () => {
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.from(Array.from({ length: 600_000 }, () => Math.floor(random() * 256))),
    ]);
    const base64 = png.toString("base64");
    const parts = [
      `<img alt="plot" src="data:image/png;base64,${base64}">`,
      JSON.stringify({ content: [{ type: "image", mimeType: "image/png", data: base64.slice(0, 100_000) }] }),
      Buffer.from(Array.from({ length: 60_000 }, () => Math.floor(random() * 256))).toString("base64url"),
      pick(HEX, 50_000),
      Array.from({ length: 500 }, () => `${pick(HEX, 40)} commit message`).join("\n"),
      Array.from({ length: 500 }, () => `${pick(HEX, 64)}  file.bin`).join("\n"),
      Array.from({ length: 500 }, () => `${pick(HEX, 8)}-${pick(HEX, 4)}-4${pick(HEX, 3)}-a${pick(HEX, 3)}-${pick(HEX, 12)}`).join(", "),
      Array.from(
        { length: 200 },
        () => `"integrity": "sha512-${Buffer.from(Array.from({ length: 64 }, () => Math.floor(random() * 256))).toString("base64")}"`,
      ).join("\n"),
    ];
    const text = parts.join("\n");
    expect(text.length).toBeGreaterThan(1_000_000);
    const result = redact(text);
    expect(result.counters).toEqual({});
    expect(result.text === text).toBe(true);
  });

  it("stays linear on long runs of key-like characters (no catastrophic backtracking)", () => {
    for (const unit of ["a-", "a.", "a=", "a:", "ab", "a://", "eyJ", "aQ~", "x@"]) {
      const text = unit.repeat(Math.ceil(200_000 / unit.length));
      const started = performance.now();
      expect(redact(text).counters).toEqual({});
      expect([unit, performance.now() - started < 2000]).toEqual([unit, true]);
    }
  });

  it("finds nothing in the project's real fixtures and demo sources", () => {
    const files = [...filesUnder(join(ROOT, "test/fixtures/real")), ...filesUnder(join(ROOT, "data/demo/sources"))];
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      const result = redact(text);
      expect({ file, counters: result.counters }).toEqual({ file, counters: {} });
    }
  });
});
