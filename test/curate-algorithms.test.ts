import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalForHashing, hashWords, trajectoryHashText } from "../src/curate/canonical-text.ts";
import { candidateProbability, lshThreshold, MinHasher } from "../src/curate/minhash.ts";
import { ngramHashes } from "../src/curate/ngram-hash.ts";
import { UnionFind } from "../src/curate/union-find.ts";

/** mulberry32: a small seeded generator, so the statistical tests see the same data every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// --- canonical text -----------------------------------------------------------------------------

const HEX = "0123456789abcdef";
const ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const pad2 = (n: number) => String(n).padStart(2, "0");
const chars = (alphabet: string, length: number) => fc.string({ unit: fc.constantFrom(...alphabet), minLength: length, maxLength: length });

/** `length` hex digits with at least one digit and one letter (what a sha or container id is). */
const hexId = (length: number) =>
  fc
    .tuple(chars(HEX, length - 2), fc.constantFrom(..."0123456789"), fc.constantFrom(..."abcdef"), fc.nat(length - 2))
    .map(([rest, digit, letter, at]) => `${rest.slice(0, at)}${digit}${letter}${rest.slice(at)}`);

const clock = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }));
const isoTimestamp = fc
  .tuple(fc.integer({ min: 2000, max: 2099 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }), clock, fc.nat(999))
  .map(([y, mo, d, [h, mi, s], ms]) => `${y}-${pad2(mo)}-${pad2(d)}T${pad2(h)}:${pad2(mi)}:${pad2(s)}.${String(ms).padStart(3, "0")}Z`);
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const syslogTime = fc
  .tuple(fc.constantFrom(...MONTHS), fc.integer({ min: 1, max: 31 }), clock)
  .map(([mo, d, [h, mi, s]]) => `${mo} ${String(d).padStart(2, " ")} ${pad2(h)}:${pad2(mi)}:${pad2(s)}`);
const pid = fc.integer({ min: 1, max: 4_194_304 });
const port = fc.integer({ min: 1, max: 65_535 });
const seconds = fc.integer({ min: 0, max: 99_999 }).map((n) => (n / 1000).toFixed(3));

/** Everything that differs between two runs of the same task. */
const volatileValues = fc.record({
  iso: isoTimestamp,
  syslog: syslogTime,
  pid,
  pid2: pid,
  pid3: pid,
  port,
  port2: port,
  sha: hexId(40),
  shortSha: hexId(7),
  container: hexId(12),
  addr: hexId(9).map((h) => `0x7ff${h}`),
  pyTmp: chars("abcdefghijklmnopqrstuvwxyz0123456789_", 8),
  mktempDir: chars(ALNUM, 10),
  // mktemp's XXXXXX: the rule wants an upper and a lower case letter and a digit in it.
  mktempSuffix: fc
    .tuple(
      chars(ALNUM, 3),
      fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
      fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz"),
      chars("0123456789", 1),
    )
    .map(([a, u, l, d]) => `${a}${u}${l}${d}`),
  clock: clock.map(([h, mi, s]) => `${pad2(h)}:${pad2(mi)}:${pad2(s)}`),
  uuid: fc.uuid(),
  duration: seconds,
  ms: fc.integer({ min: 0, max: 9999 }),
  real: seconds,
  epochMs: fc.integer({ min: 1_000_000_000_000, max: 1_999_999_999_999 }),
  rate: fc.integer({ min: 1, max: 9999 }).map((n) => (n / 10).toFixed(1)),
});
type Volatile = typeof volatileValues extends fc.Arbitrary<infer T> ? T : never;

/** What a run is about: must survive canonicalization. */
const substanceValues = fc.record({
  passed: fc.integer({ min: 0, max: 999 }),
  failed: fc.integer({ min: 1, max: 99 }),
  line: fc.integer({ min: 1, max: 9999 }),
  version: fc.tuple(fc.nat(30), fc.nat(30), fc.nat(30)).map((v) => v.join(".")),
  file: fc.constantFrom("app.py", "models/user.py", "server.ts", "lib/parse.rs", "main.go"),
  message: fc.constantFrom("name 'foo' is not defined", "expected 3 arguments, got 2", "connection refused", "index out of range"),
});
type Substance = typeof substanceValues extends fc.Arbitrary<infer T> ? T : never;

function observation(s: Substance, v: Volatile): string {
  return [
    `$ pytest tests/ -q`,
    `[${v.iso}] INFO worker pid ${v.pid} listening on http://localhost:${v.port}/api (PID: ${v.pid2})`,
    `${v.syslog} web-1 sshd[${v.pid3}]: Accepted publickey for root from 10.0.0.7 port ${v.port2} ssh2`,
    `commit ${v.sha}`,
    `HEAD is now at ${v.shortSha} Fix ${s.file}`,
    `container ${v.container} started at ${v.clock}`,
    `  <Connection object at ${v.addr}>`,
    `writing /tmp/tmp${v.pyTmp}/out/${s.file}`,
    `workdir=/tmp/tmp.${v.mktempDir} log=/home/dev/logs/run.${v.mktempSuffix}`,
    `request ${v.uuid} took ${v.ms}ms at ${v.epochMs}`,
    `Downloading wheel ${v.rate} MB/s`,
    `src/${s.file}:${s.line}: error: ${s.message} (version ${s.version})`,
    `===== ${s.failed} failed, ${s.passed} passed in ${v.duration}s =====`,
    `real\t0m${v.real}s`,
  ].join("\n");
}

describe("canonicalForHashing", () => {
  it("gives two runs that differ only in volatile values the same text", () => {
    fc.assert(
      fc.property(substanceValues, volatileValues, volatileValues, (s, a, b) => {
        expect(canonicalForHashing(observation(s, a))).toBe(canonicalForHashing(observation(s, b)));
      }),
      { numRuns: 300 },
    );
  });

  it("keeps the substance, so different substance stays different", () => {
    fc.assert(
      fc.property(substanceValues, substanceValues, volatileValues, (s, t, v) => {
        const text = canonicalForHashing(observation(s, v));
        expect(text).toContain(`src/${s.file}:${s.line}: error: ${s.message} (version ${s.version})`);
        expect(text).toContain(`${s.failed} failed, ${s.passed} passed in <duration>`);
        expect(text).toContain(`/out/${s.file}`);
        expect(text).toContain("from 10.0.0.7 port <port>");
        const same = JSON.stringify(s) === JSON.stringify(t);
        expect(text === canonicalForHashing(observation(t, v))).toBe(same);
      }),
      { numRuns: 300 },
    );
  });

  it("replaces each kind with its placeholder", () => {
    const cases: [string, string][] = [
      ["2025-06-03T10:42:01.123Z started", "<timestamp> started"],
      ["Tue, 03 Jun 2025 10:00:00 GMT", "<timestamp>"],
      ["Jun  3 10:42:01 host cron[812]: job done", "<timestamp> host cron[<pid>]: job done"],
      ["-rw-r--r-- 1 root root  1234 Jul 12 09:45 setup.py", "-rw-r--r-- 1 root root  1234 <timestamp> setup.py"],
      ["Tue Jun  3 10:42:01 UTC 2025", "<timestamp>"],
      ["2025/06/03 10:42:01 server started", "<timestamp> server started"],
      ['127.0.0.1 - - [03/Jun/2025:10:42:01 +0000] "GET / HTTP/1.1" 200', '127.0.0.1 - - [<timestamp>] "GET / HTTP/1.1" 200'],
      ["started at 10:42:01.123456", "started at <time>"],
      ["root  Ss  10:42   0:01 /sbin/init", "root  Ss  <time>   <time> /sbin/init"],
      ["top - 10:42:01 up 2:17,  1 user", "top - <time> up <duration>,  1 user"],
      ["pid 1234, PID: 99, pid=7, child_pid=4242", "pid <pid>, PID: <pid>, pid=<pid>, child_pid=<pid>"],
      ["localhost:8080 127.0.0.1:5432 0.0.0.0:3000 [::1]:80", "localhost:<port> 127.0.0.1:<port> 0.0.0.0:<port> [::1]:<port>"],
      ["see https://example.com:8443/path", "see https://example.com:<port>/path"],
      ['port 8080 --port=9000 "port": 5432 PORT=3000', 'port <port> --port=<port> "port": <port> PORT=<port>'],
      ["in 0.23s, 12ms, 1.5 seconds, 3 minutes", "in <duration>, <duration>, <duration>, <duration>"],
      ["real\t0m0.012s\nuser\t1m2.5s", "real\t<duration>\nuser\t<duration>"],
      ["12.5 MB/s 3.1it/s", "<rate> <rate>"],
      ["commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39", "commit <hex>"],
      ["build_3f2a9c1 and 9F3A2B1C0D", "build_<hex> and <hex>"],
      ["<Foo object at 0x7ff3a2b1c4d0>", "<Foo object at <addr>>"],
      ["cd /tmp/tmpab12_x9q/repo && ls", "cd <tmp>/repo && ls"],
      ["/var/folders/xy/abcd1234/T/pytest-of-me/x.py", "<tmp>/x.py"],
      ["/dev/shm/sem.k3J9aB", "<tmp>"],
      ["tempfile tmpk2_9xq1z and tmp.Ab3dE9fGhK", "tempfile <tmp> and <tmp>"],
      ["saved to out/report.k3J9aB", "saved to out/report.<tmp>"],
      ["id 550e8400-e29b-41d4-a716-446655440000", "id <uuid>"],
      ['"request_id": "abc123def456"', '"request_id": "<request_id>"'],
    ];
    for (const [input, want] of cases) expect(canonicalForHashing(input), input).toBe(want);
  });

  it("leaves substance alone", () => {
    const kept = [
      "src/app.py:42: error: name 'foo' is not defined",
      '  File "/testbed/src/app.py", line 42, in main',
      "  12:34  error  Unexpected console statement  no-console",
      "Successfully installed numpy-1.26.4 requests-2.31.0 (version 1.2.3)",
      "===== 3 passed, 1 failed =====",
      "image python:3.11 on ubuntu:22.04",
      "protocolVersion 2025-06-18",
      "exit code 0x1f, mode 0755, 1234567 bytes",
      "deface the decade, facade",
      "/home/user/project/main.py /opt/tmp/data.csv ./tmp/cache",
      "John 3:16 and a ratio of 16:9",
      "tmp_result = compute(tmp_value)",
      "arr[1234] = 5",
      "report 2024, support 100, rapid 300",
      "Item 3 of 10",
    ];
    for (const text of kept) expect(canonicalForHashing(text), text).toBe(text);
  });

  it("is the identity on text with no volatile values and leaves placeholders alone", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z ,!?']*$/), (text) => {
        expect(canonicalForHashing(text)).toBe(text);
        const once = canonicalForHashing(`${text} pid 12 at 10:42:01`);
        expect(canonicalForHashing(once)).toBe(once);
      }),
    );
  });
});

describe("trajectoryHashText", () => {
  it("joins the canonical action and observation of each turn with unit and record separators", () => {
    const turns = [
      { action: "ps -p 1234", observation: "pid 1234 up 0.5s" },
      { action: "ls", observation: "" },
    ];
    expect(trajectoryHashText(turns)).toBe("ps -p 1234\u001fpid <pid> up <duration>\u001els\u001f\u001e");
    expect(trajectoryHashText([])).toBe("");
    // Where the turn boundary falls matters.
    expect(trajectoryHashText([{ action: "a b", observation: "c" }])).not.toBe(trajectoryHashText([{ action: "a", observation: "b c" }]));
  });
});

describe("hashWords", () => {
  it("lower-cases word runs, keeps placeholders whole and splits on the rest", () => {
    expect(hashWords("<timestamp> Started pid <pid>: naïve café_2, résumé—done! <hex>/x.py")).toEqual([
      "<timestamp>",
      "started",
      "pid",
      "<pid>",
      "naïve",
      "café_2",
      "résumé",
      "done",
      "<hex>",
      "x",
      "py",
    ]);
    expect(hashWords("  \n\t ")).toEqual([]);
    expect(hashWords("<div>Hello</div>")).toEqual(["div", "hello", "div"]);
    expect(hashWords("Привет, мир 42")).toEqual(["привет", "мир", "42"]);
  });
});

// --- MinHash ------------------------------------------------------------------------------------

const VOCAB = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);

function randomWords(next: () => number, length: number): string[] {
  return Array.from({ length }, () => VOCAB[Math.floor(next() * VOCAB.length)] as string);
}

function shingleSet(words: readonly string[], n: number): Set<string> {
  const size = Math.min(n, words.length);
  const set = new Set<string>();
  for (let i = 0; i + size <= words.length; i++) set.add(words.slice(i, i + size).join(" "));
  return set;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let both = 0;
  for (const x of a) if (b.has(x)) both += 1;
  return both / (a.size + b.size - both);
}

function estimate(a: Uint32Array, b: Uint32Array): number {
  let same = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) same += 1;
  return same / a.length;
}

function shareABand(a: BigUint64Array, b: BigUint64Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) return true;
  return false;
}

/** `count` distinct words never used elsewhere in the test (a fresh prefix per call). */
let freshId = 0;
function freshWords(count: number): string[] {
  freshId += 1;
  return Array.from({ length: count }, (_, i) => `f${freshId}x${i}`);
}

describe("MinHasher", () => {
  const settings = { ngram: 5, bands: 14, rows: 8, seed: 0 };

  it("estimates the Jaccard similarity of 5-gram shingle sets without bias", () => {
    const hasher = new MinHasher(settings);
    const next = seeded(20);
    const errors: number[] = [];
    for (let pair = 0; pair < 300; pair++) {
      const a = randomWords(next, 60 + Math.floor(next() * 400));
      // Plant a similarity: edit a random share of the words (each edit breaks up to 5 shingles).
      const editRate = next() * 0.12;
      const b = a.map((word) => (next() < editRate ? (VOCAB[Math.floor(next() * VOCAB.length)] as string) : word));
      const exact = jaccard(shingleSet(a, 5), shingleSet(b, 5));
      const est = estimate(hasher.signature(a) as Uint32Array, hasher.signature(b) as Uint32Array);
      errors.push(est - exact);
    }
    const meanAbs = errors.reduce((sum, e) => sum + Math.abs(e), 0) / errors.length;
    const bias = errors.reduce((sum, e) => sum + e, 0) / errors.length;
    // 112 functions: the estimate's standard deviation is at most 0.047 (at J = 0.5).
    expect(meanAbs).toBeLessThan(0.05);
    expect(Math.abs(bias)).toBeLessThan(0.015);
    expect(errors.filter((e) => Math.abs(e) > 0.15).length).toBeLessThanOrEqual(3);
  });

  it("puts pairs in a common band as often as candidateProbability says", () => {
    // Unigram shingles over distinct words: the Jaccard similarity is exactly |shared| / |union|.
    const hasher = new MinHasher({ ngram: 1, bands: 14, rows: 8, seed: 3 });
    for (const [shared, own, pairs] of [
      [100, 50, 1500], // J = 0.5: P = 0.053
      [160, 40, 600], // J = 2/3: P = 0.44
      [180, 10, 300], // J = 0.9: P = 0.9996
    ] as const) {
      const j = shared / (shared + 2 * own);
      let candidates = 0;
      for (let p = 0; p < pairs; p++) {
        const common = freshWords(shared);
        const a = hasher.bandKeys([...common, ...freshWords(own)]) as BigUint64Array;
        const b = hasher.bandKeys([...freshWords(own), ...common]) as BigUint64Array;
        if (shareABand(a, b)) candidates += 1;
      }
      const want = candidateProbability(j, 14, 8);
      const sd = Math.sqrt((want * (1 - want)) / pairs);
      expect(Math.abs(candidates / pairs - want), `J=${j}: ${candidates}/${pairs} vs ${want}`).toBeLessThan(4 * sd + 0.002);
    }
  });

  it("gives each band its own keys: equal rows in different bands do not give equal keys", () => {
    const hasher = new MinHasher({ ngram: 1, bands: 4, rows: 2, seed: 0 });
    const keys = hasher.keysOf(new Uint32Array([7, 9, 7, 9, 7, 9, 7, 9]));
    expect(new Set(keys).size).toBe(4);
  });

  it("is deterministic for a seed and changes with it", () => {
    const words = hashWords(canonicalForHashing("The quick brown fox jumps over the lazy dog at 10:42:01, pid 12, then sleeps."));
    const a = new MinHasher(settings).bandKeys(words) as BigUint64Array;
    const b = new MinHasher(settings).bandKeys(words) as BigUint64Array;
    expect([...a]).toEqual([...b]);
    expect(a.length).toBe(14);
    const other = new MinHasher({ ...settings, seed: 1 }).bandKeys(words) as BigUint64Array;
    for (let i = 0; i < 14; i++) expect(other[i]).not.toBe(a[i]);
    // Pinned values: signatures are compared across runs and machines, so the hashing must never
    // change by accident. Change these only together with a deliberate change of the scheme.
    expect((new MinHasher(settings).signature(["hello", "world"]) as Uint32Array).slice(0, 4)).toEqual(
      new Uint32Array(PINNED_SIGNATURE_HEAD),
    );
    expect(a[0]).toBe(PINNED_FIRST_KEY);
  });

  it("handles short and empty texts", () => {
    const hasher = new MinHasher(settings);
    expect(hasher.signature([])).toBeUndefined();
    expect(hasher.bandKeys([])).toBeUndefined();
    // Fewer words than the n-gram: one shingle of all of them, so word order still counts.
    const ab = hasher.signature(["a", "b"]) as Uint32Array;
    expect(ab.length).toBe(112);
    expect([...ab]).toEqual([...(hasher.signature(["a", "b"]) as Uint32Array)]);
    expect([...ab]).not.toEqual([...(hasher.signature(["b", "a"]) as Uint32Array)]);
    // The signature is of the shingle SET: repeating the text adds no shingle, so changes nothing.
    const twice = "a b c d e a b c d e".split(" ");
    const thrice = "a b c d e a b c d e a b c d e".split(" ");
    expect([...(hasher.signature(twice) as Uint32Array)]).toEqual([...(hasher.signature(thrice) as Uint32Array)]);
  });

  it("rejects nonsensical settings", () => {
    expect(() => new MinHasher({ ...settings, rows: 0 })).toThrow(/rows/);
    expect(() => new MinHasher({ ...settings, ngram: 1.5 })).toThrow(/ngram/);
  });
});

const PINNED_SIGNATURE_HEAD = [2287028482, 2290187402, 1225692938, 4044279091];
const PINNED_FIRST_KEY = 11861357631453682490n;

describe("LSH curve", () => {
  it("matches the S-curve of the defaults", () => {
    expect(candidateProbability(0.5, 14, 8)).toBeCloseTo(0.053, 3);
    expect(candidateProbability(0.8, 14, 8)).toBeCloseTo(0.92, 2);
    expect(candidateProbability(0.9, 14, 8)).toBeCloseTo(0.9996, 4);
    expect(candidateProbability(0, 14, 8)).toBe(0);
    expect(candidateProbability(1, 14, 8)).toBe(1);
    expect(lshThreshold(14, 8)).toBeCloseTo(0.6847, 4);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 32 }), (bands, rows) => {
        expect(candidateProbability(lshThreshold(bands, rows), bands, rows)).toBeCloseTo(0.5, 9);
      }),
    );
  });
});

// --- n-gram hashes ------------------------------------------------------------------------------

describe("ngramHashes", () => {
  it("gives one exact integer below 2^52 per window", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("a", "b", "c", "<pid>", "ü", ""), { maxLength: 40 }),
        fc.integer({ min: 1, max: 15 }),
        (words, n) => {
          const hashes = ngramHashes(words, n);
          expect(hashes.length).toBe(Math.max(0, words.length - n + 1));
          for (const h of hashes) {
            expect(Number.isInteger(h)).toBe(true);
            expect(h).toBeGreaterThanOrEqual(0);
            expect(h).toBeLessThan(2 ** 52);
          }
        },
      ),
    );
  });

  it("gives equal n-grams equal hashes wherever they occur, and different ones different hashes", () => {
    const next = seeded(5);
    const shared = randomWords(next, 30);
    const a = [...randomWords(next, 17), ...shared, ...randomWords(next, 4)];
    const b = [...randomWords(next, 3), ...shared];
    const ha = ngramHashes(a, 13);
    const hb = ngramHashes(b, 13);
    for (let i = 0; i + 13 <= shared.length; i++) expect(ha[17 + i]).toBe(hb[3 + i]);
    // 20k random 13-grams: no two different ones share a hash.
    const seen = new Map<number, string>();
    const words = randomWords(next, 20_012);
    const hashes = ngramHashes(words, 13);
    for (let i = 0; i < hashes.length; i++) {
      const gram = words.slice(i, i + 13).join(" ");
      const before = seen.get(hashes[i] as number);
      if (before !== undefined) expect(before).toBe(gram);
      seen.set(hashes[i] as number, gram);
    }
    expect(seen.size).toBeGreaterThan(19_900);
    // Word order and word boundaries count.
    expect(ngramHashes(["ab", "c"], 2)[0]).not.toBe(ngramHashes(["a", "bc"], 2)[0]);
    expect(ngramHashes(["a", "b"], 2)[0]).not.toBe(ngramHashes(["b", "a"], 2)[0]);
    expect(ngramHashes(["x", "y", "z"], 1)[0]).toBe(ngramHashes(["x"], 1)[0]);
    expect([...ngramHashes(["only", "two"], 3)]).toEqual([]);
  });

  it("is pinned: n-gram hashes never change by accident", () => {
    expect([...ngramHashes(["the", "quick", "brown", "fox"], 3)]).toEqual(PINNED_NGRAMS);
  });
});

const PINNED_NGRAMS = [4450607950979018, 2307219515660140];

// --- union-find ---------------------------------------------------------------------------------

describe("UnionFind", () => {
  it("keeps the same sets as a naive reference, each rooted at its minimum", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 60 })
          .chain((size) => fc.tuple(fc.constant(size), fc.array(fc.tuple(fc.nat(size - 1), fc.nat(size - 1)), { maxLength: 80 }))),
        ([size, unions]) => {
          const sets = new UnionFind(size);
          const label = Array.from({ length: size }, (_, i) => i); // naive: relabel on every union
          for (const [a, b] of unions) {
            sets.union(a, b);
            const [from, to] = [label[a] as number, label[b] as number];
            for (let i = 0; i < size; i++) if (label[i] === from) label[i] = to;
            for (let i = 0; i < size; i++) {
              let min = i;
              for (let j = 0; j < size; j++) if (label[j] === label[i] && j < min) min = j;
              expect(sets.find(i)).toBe(min);
            }
          }
        },
      ),
    );
  });

  it("compresses long chains without recursion", () => {
    const size = 200_000;
    const sets = new UnionFind(size);
    for (let i = size - 1; i > 0; i--) sets.union(i, i - 1);
    expect(sets.find(size - 1)).toBe(0);
    expect(sets.find(12_345)).toBe(0);
    expect(() => sets.find(size)).toThrow(RangeError);
    expect(() => new UnionFind(0).find(0)).toThrow(RangeError);
  });
});
