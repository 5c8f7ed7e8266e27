import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { redactSecrets } from "../../src/normalize/secrets.ts";
import { type SecretShape, secretShapes } from "../fixtures/secrets/secret-shapes.ts";

/**
 * A seeded corpus of raw agent trajectories in the real source formats of all seven domains, with
 * fake secrets planted wherever one can hide (actions, observations, tasks, system prompts, meta
 * fields, ids, environment dumps, URLs, JSON keys, XML attributes, HTML, ANSI-coloured terminal
 * output, trees whose diff splits a key, quarantined records), for test/secrets-e2e.test.ts.
 *
 * Every planted VALUE is unique (fresh bodies from `secretShapes(seed * 1000 + k)`), so a value
 * found in an output names exactly one planted location. Same seed → same corpus, byte for byte.
 * The catalogue alone holds every shape twice (106 values); ~140 more stand in format-specific
 * places, each labelled with the `Reach` the pipeline gives it when nothing redacts it.
 */

/** Where the pipeline takes a planted value when nothing redacts it. */
export type Reach =
  /** rendered into the sample text (shards, decoded tokens, messages, SFT prompts, dashboard examples) */
  | "text"
  /** part of a record id or an input file name (id / source columns, quarantine ids, manifest) */
  | "identifier"
  /** only in a record the pipeline quarantines (its entry: id, reason, excerpt) */
  | "quarantine"
  /** a part no reader renders (meta fields, thinking, notifications, headers): should never show up */
  | "dropped";

export interface PlantedSecret {
  /** 1-based, for reports. */
  n: number;
  /** The secret itself: must not survive in any output byte. */
  value: string;
  /** Its type in secret-shapes.ts (the placeholder the redactor should give it in its own context). */
  type: string;
  shape: string;
  domain: string;
  /** Input file, relative to the corpus folder. */
  file: string;
  /** What the record is and where in it the secret stands. */
  location: string;
  /** Planted inside its shape's realistic context (`shape.text`) rather than bare. */
  inContext: boolean;
  reach: Reach;
  /** A run with `redact_secrets: false` must show it somewhere (the scanner's control). */
  visibleWithoutRedaction: boolean;
}

export interface CorpusFile {
  /** Relative to the corpus folder. */
  path: string;
  /** The reader `format: auto` must pick for it. */
  format: string;
  /** Records the reader yields for it, and how many of them it quarantines. */
  records: number;
  quarantined: number;
}

export interface PlantedCorpus {
  /** The corpus folder (inputs under `in/`). */
  dir: string;
  files: CorpusFile[];
  secrets: PlantedSecret[];
  /** `inputs:` lines of a job config (relative to `dir`). */
  inputGlobs: string[];
  /** Shape types planted in their own context in plain text (the catalogue): each must be counted. */
  catalogueTypes: string[];
  /** input.max_line_bytes the corpus expects (one line is planted past it). */
  maxLineBytes: number;
}

const MAX_LINE_BYTES = 200_000;

/** Hands out fresh shapes (never the same value twice), cycling through `secretShapes(seed * 1000 + k)`. */
class SecretPool {
  private readonly seed: number;
  private batch = 0;
  private queue: SecretShape[] = [];
  private readonly used = new Set<string>();

  constructor(seed: number) {
    this.seed = seed;
  }

  take(filter: (shape: SecretShape) => boolean = () => true): SecretShape {
    for (;;) {
      const i = this.queue.findIndex((s) => filter(s) && !this.used.has(s.secret));
      if (i >= 0) {
        const [shape] = this.queue.splice(i, 1) as [SecretShape];
        this.used.add(shape.secret);
        return shape;
      }
      if (this.batch > 40) throw new Error("secret pool: no shape matches the filter");
      this.queue.push(...secretShapes(this.seed * 1000 + this.batch++));
    }
  }
}

type Filter = (shape: SecretShape) => boolean;

/** Redacted even without its context (vendor prefix or structure). */
export const standalone: Filter = (s) => !redactSecrets(s.secret, new Map()).includes(s.secret);
const oneLine: Filter = (s) => !s.secret.includes("\n") && !s.secret.includes("\\n");
const oneLineText: Filter = (s) => !s.text.includes("\n") && !s.text.includes("\\n");
/** Starts with a vendor prefix of letters (what a colour code or a path segment glues onto). */
const lettered: Filter = (s) => standalone(s) && oneLine(s) && /^[A-Za-z]/.test(s.secret) && !s.secret.startsWith("-----");
const ofType =
  (...types: string[]): Filter =>
  (s) =>
    types.includes(s.type);
const named =
  (pattern: RegExp): Filter =>
  (s) =>
    pattern.test(s.name);
const both =
  (...filters: Filter[]): Filter =>
  (s) =>
    filters.every((f) => f(s));

interface Where {
  domain: string;
  file: string;
  location: string;
  reach?: Reach;
  visible?: boolean;
}

class Planter {
  readonly secrets: PlantedSecret[] = [];
  private readonly pool: SecretPool;

  constructor(seed: number) {
    this.pool = new SecretPool(seed);
  }

  private record(shape: SecretShape, where: Where, inContext: boolean): void {
    const reach = where.reach ?? "text";
    this.secrets.push({
      n: this.secrets.length + 1,
      value: shape.secret,
      type: shape.type,
      shape: shape.name,
      domain: where.domain,
      file: where.file,
      location: where.location,
      inContext,
      reach,
      visibleWithoutRedaction: where.visible ?? (reach === "text" || reach === "identifier"),
    });
  }

  /** A bare value that is a secret on its own (vendor prefix); one line unless `filter` says otherwise. */
  bare(where: Where, filter: Filter = both(standalone, oneLine)): string {
    const shape = this.pool.take(filter);
    this.record(shape, where, false);
    return shape.secret;
  }

  /** The value of any shape (for contexts built here: an attribute, a form field, a docker config). */
  value(where: Where, filter: Filter): string {
    const shape = this.pool.take(filter);
    this.record(shape, where, false);
    return shape.secret;
  }

  /** A secret in its shape's own realistic context (`shape.text`). */
  context(where: Where, filter: Filter = () => true): string {
    const shape = this.pool.take(filter);
    this.record(shape, where, true);
    return shape.text;
  }

  /** Every shape of one batch, each in its own context (guarantees one of every type). */
  allShapes(): SecretShape[] {
    const count = secretShapes(1).length;
    const shapes: SecretShape[] = [];
    const names = new Set<string>();
    while (names.size < count) {
      const next = this.pool.take((s) => !names.has(s.name));
      shapes.push(next);
      names.add(next.name);
    }
    return shapes;
  }

  recordContext(shape: SecretShape, where: Where): void {
    this.record(shape, where, true);
  }
}

const json = (value: unknown) => JSON.stringify(value);
const crlf = (text: string) => text.replace(/\r?\n/g, "\r\n");
/** A Python `repr()` string literal (BrowserGym AXTree values). */
const pyRepr = (text: string) => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'").replaceAll("\n", "\\n")}'`;
/** XML attribute value. */
const xmlAttr = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("\n", "&#10;");
const xmlText = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const ESC = "\u001b";

/** Writes the corpus under `dir/in/` and returns what was planted where. */
export function writePlantedCorpus(dir: string, seed = 4242): PlantedCorpus {
  const p = new Planter(seed);
  const files: CorpusFile[] = [];
  const write = (path: string, content: string, records = 1, quarantined = 0) => {
    const full = join(dir, "in", path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
    // records 0: a file the inputs do not list (DroidBot states, read through their event).
    if (records > 0) files.push({ path: `in/${path}`, format: formatOf(path), records, quarantined });
  };

  const catalogueTypes = catalogue(p, write);
  terminal(p, write);
  search(p, write);
  mcp(p, write);
  swe(p, write);
  web(p, write);
  android(p, write);
  os(p, write);
  canonicalEdges(p, write);

  return {
    dir,
    files,
    secrets: p.secrets,
    inputGlobs: [
      "in/catalogue/*",
      "in/terminal/*",
      "in/search/*",
      "in/mcp/*",
      "in/swe/*",
      "in/web/*",
      "in/android/*.*",
      "in/android/droidbot/events/*",
      "in/os/*",
      "in/canonical/*",
    ],
    catalogueTypes,
    maxLineBytes: MAX_LINE_BYTES,
  };
}

/** The reader each corpus file is written for (detection must agree). */
const FORMATS: [RegExp, string][] = [
  [/^(catalogue|canonical)\//, "canonical-jsonl"],
  [/\.cast$/, "asciicast"],
  [/tmux/, "tmux-log"],
  [/^search\//, "search-api"],
  [/^mcp\/awb/, "agentworldbench-jsonl"],
  [/^mcp\//, "mcp-jsonrpc"],
  [/\.traj$/, "swe-agent-traj"],
  [/\.traj\.json$/, "mini-swe-agent"],
  [/openhands/, "openhands"],
  [/swe-smith/, "swe-smith"],
  [/browsergym/, "browsergym"],
  [/window_dump/, "uiautomator-xml"],
  [/droidbot|device_state/, "droidbot"],
  [/^os\//, "os-a11y"],
];

function formatOf(path: string): string {
  const found = FORMATS.find(([pattern]) => pattern.test(path));
  if (!found) throw new Error(`no format for corpus file ${path}`);
  return found[1];
}

type Write = (path: string, content: string, records?: number, quarantined?: number) => void;

const DOMAINS = ["terminal", "search", "mcp", "swe", "web", "android", "os"] as const;

/**
 * Two rounds of every shape, each in its own context, as plain-text observations of canonical
 * records (one per domain per round): every type must be redacted and counted. Two of each shape
 * also make the shapes' constant parts (PEM armour, JWT header) shared, so the scanner's sliding
 * window ignores them.
 */
function catalogue(p: Planter, write: Write): string[] {
  const lines: string[] = [];
  const types = new Set<string>();
  for (const round of [0, 1]) {
    const shapes = p.allShapes();
    DOMAINS.forEach((domain, d) => {
      const mine = shapes.filter((_, i) => i % DOMAINS.length === d);
      const file = "in/catalogue/catalogue.jsonl";
      for (const shape of mine) {
        p.recordContext(shape, { domain, file, location: `catalogue (canonical-jsonl): observation "${shape.name}"` });
        types.add(shape.type);
      }
      lines.push(
        json({
          id: `catalogue-${domain}-${round}`,
          domain,
          task: "Print every configuration file of the service.",
          turns: mine.map((shape, i) => ({ action: `cat config-${i}.txt`, observation: shape.text })),
        }),
      );
    });
  }
  write("catalogue/catalogue.jsonl", `${lines.join("\n")}\n`, lines.length);
  return [...types].sort();
}

function terminal(p: Planter, write: Write): void {
  // asciicast v2, keystrokes: an environment dump with colour codes around a token, a secret typed
  // in chunks, a private key printed, a line longer than the terminal.
  {
    const file = "in/terminal/env-dump.cast";
    const at = (location: string, reach?: Reach) => ({
      domain: "terminal",
      file,
      location: `asciicast v2: ${location}`,
      ...(reach ? { reach } : {}),
    });
    const header = {
      version: 2,
      width: 80,
      height: 24,
      timestamp: 1700000000,
      command: "/bin/bash",
      title: `deploy ${p.bare(at("header title", "dropped"))}`,
      env: { SHELL: "/bin/bash", TERM: "xterm-256color", GITHUB_TOKEN: p.bare(at("header env", "dropped")) },
    };
    const events: [number, string, string][] = [];
    let t = 0;
    const ev = (code: string, data: string) => {
      t += 0.05;
      events.push([Number(t.toFixed(2)), code, data]);
    };
    const type = (text: string, chunk = 7) => {
      for (let i = 0; i < text.length; i += chunk) {
        ev("i", text.slice(i, i + chunk));
        ev("o", text.slice(i, i + chunk));
      }
      ev("i", "\r");
      ev("o", "\r\n");
    };
    const prompt = "dev@box:~$ ";
    ev("o", prompt);
    type("env | grep -iE 'token|key|pass'");
    ev("o", `GITHUB_TOKEN=${ESC}[01;31m${ESC}[K${p.bare(at("output, red ANSI colour around the token"), lettered)}${ESC}[m${ESC}[K\r\n`);
    ev("o", crlf(`${p.context(at("output, environment dump"), both(oneLineText, named(/\(env\)|\.env/)))}\n`));
    ev(
      "o",
      crlf(
        `${p.context(at("output, environment dump"), both(oneLineText, ofType("groq_api_key", "replicate_api_token", "databricks_token")))}\n`,
      ),
    );
    ev("o", prompt);
    type(p.context(at("action typed in 7-character keystroke chunks"), both(oneLineText, ofType("openai_api_key", "hf_token"))));
    ev("o", prompt);
    type("cat ~/.ssh/id_rsa");
    ev("o", crlf(`${p.bare(at("output, private key printed"), ofType("private_key"))}\n`));
    ev("o", prompt);
    type("gcloud auth print-access-token");
    ev("o", `${p.bare(at("output, 124-character token wrapped over two terminal rows"), ofType("google_oauth_access_token"))}\r\n`);
    ev("o", prompt);
    write("terminal/env-dump.cast", `${[json(header), ...events.map(json)].join("\n")}\n`);
  }
  // asciicast v3, markers: the marker label is the action; output before the first marker is the
  // initial observation.
  {
    const file = "in/terminal/deploy-markers.cast";
    const at = (location: string) => ({ domain: "terminal", file, location: `asciicast v3 markers: ${location}` });
    const lines = [
      json({ version: 3, term: { cols: 100, rows: 30 }, timestamp: 1700000100, command: "bash deploy.sh" }),
      json([0.1, "o", crlf(`loading ${p.bare(at("output before the first marker (initial observation)"), lettered)}\n`)]),
      json([0.2, "m", `deploy --registry-token ${p.bare(at("marker label (the action)"), lettered)}`]),
      json([0.1, "o", `Using registry token ${ESC}[1m${p.bare(at("output, bold ANSI around the token"), lettered)}${ESC}[22m\r\n`]),
      json([0.1, "o", crlf(`${p.context(at("output, webhook call"), ofType("slack_webhook"))}\n`)]),
      json([0.2, "m", "verify"]),
      json([0.1, "o", crlf(`${p.context(at("output, connection string"), ofType("url_password"))}\nok\n`)]),
    ];
    write("terminal/deploy-markers.cast", `${lines.join("\n")}\n`);
  }
  // tmux keystroke log with pane captures (`capture-pane -e` keeps colour codes).
  {
    const file = "in/terminal/pane.tmux.jsonl";
    const at = (location: string, reach?: Reach) => ({
      domain: "terminal",
      file,
      location: `tmux-log: ${location}`,
      ...(reach ? { reach } : {}),
    });
    const command = p.context(at("keys (the action)"), ofType("generic_password")).split("\n")[0] as string;
    const shown = p.bare(at("capture with ANSI colour codes (capture-pane -e) around the token"), lettered);
    const lines = [
      json({
        type: "header",
        format: "tmux-log",
        version: 1,
        cols: 120,
        rows: 30,
        session: `ci-${p.bare(at("header session name", "dropped"), lettered)}`,
        pane: "%1",
      }),
      json({ type: "capture", t: 0.1, text: "ci@runner:~$ " }),
      json({ type: "keys", t: 1, data: `${command}\r` }),
      json({
        type: "capture",
        t: 1.5,
        text: `ci@runner:~$ ${command}\nmysql: [Warning] Using a password on the command line interface can be insecure.\nci@runner:~$ `,
      }),
      json({ type: "keys", t: 2, data: "tail -n 2 deploy.log\r" }),
      json({ type: "capture", t: 2.5, text: `ci@runner:~$ tail -n 2 deploy.log\n${ESC}[32m${shown}${ESC}[0m deployed\nci@runner:~$ ` }),
    ];
    write("terminal/pane.tmux.jsonl", `${lines.join("\n")}\n`);
  }
  // A recording with one malformed event line: quarantined whole, at that line.
  {
    const file = "in/terminal/broken.cast";
    const secret = p.bare(
      { domain: "terminal", file, location: "asciicast v2 (quarantined): the malformed event line", reach: "quarantine", visible: true },
      lettered,
    );
    const lines = [
      json({ version: 2, width: 80, height: 24 }),
      json([0.1, "o", "$ "]),
      `[0.2, "o", "export TOKEN=${secret}\\r\\n"`,
      json([0.3, "o", "$ "]),
    ];
    write("terminal/broken.cast", `${lines.join("\n")}\n`, 1, 1);
  }
}

function search(p: Planter, write: Write): void {
  // A Brave API response, pretty-printed, whose file name carries a secret.
  {
    const name = p.bare(
      {
        domain: "search",
        file: "in/search/brave-<secret>.json",
        location: "Brave response: the input file NAME (becomes the id)",
        reach: "identifier",
      },
      lettered,
    );
    const file = `in/search/brave-${name}.json`;
    const at = (location: string) => ({ domain: "search", file, location: `Brave response: ${location}` });
    const response = {
      type: "search",
      query: { original: `who leaked ${p.bare(at("query.original (the action)"), lettered)}`, more_results_available: false },
      web: {
        type: "search",
        results: [
          {
            title: "Leaked credentials in a public <strong>gist</strong>",
            url: `https://deploy:${p.value(at("result url with a password"), ofType("url_password"))}@git.internal.example.com/org/repo.git`,
            description: `Found <strong>${p.bare(at("description, inside <strong> HTML"), lettered)}</strong> in a gist &amp; rotated it`,
          },
          {
            title: "Environment file",
            url: "https://example.com/docs/env",
            description: `DB_PASSWORD&#x3D;${p.value(at("description, HTML-entity-encoded '=' before a password"), ofType("generic_password"))} was committed`,
          },
          {
            title: "Weather API",
            url: `https://api.example.com/v1/data?api_key=${p.value(at("result url query string api_key="), ofType("generic_api_key"))}&units=metric`,
            description: "Current conditions",
            extra_snippets: [p.context(at("extra_snippets[]"), oneLineText)],
          },
        ],
      },
    };
    write(`search/brave-${name}.json`, `${JSON.stringify(response, null, 2)}\n`);
  }
  // An agent search/extract trace: two trajectories, the second with a bad line (quarantined).
  {
    const file = "in/search/agent-trace.jsonl";
    const at = (location: string, reach?: Reach, visible?: boolean) => ({
      domain: "search",
      file,
      location: `search trace: ${location}`,
      ...(reach ? { reach } : {}),
      ...(visible !== undefined ? { visible } : {}),
    });
    const lines = [
      json({ type: "task", id: "trace-leak-1", task: `Find where ${p.bare(at("task line"), lettered)} was leaked` }),
      json({
        type: "search",
        query: `"${p.bare(at("search query (the action)"), lettered)}" site:github.com`,
        results: [{ title: "config", url: "https://github.com/org/repo/blob/main/.env", snippet: p.context(at("result snippet")) }],
        thinking: `search for ${p.bare(at("step thinking", "dropped"), lettered)}`,
      }),
      json({
        type: "extract",
        url: `https://admin:${p.value(at("extract url with a password"), ofType("url_password"))}@intranet.example.com/settings`,
        text: settingsPage(p, at),
      }),
      json({ type: "task", id: "trace-bad-2", task: "Second trace" }),
      json({ type: "search", query: "status", results: [] }),
      json({ type: "bogus", data: `ROTATE ${p.bare(at("(quarantined trajectory) the bad line", "quarantine", true), lettered)}` }),
    ];
    write("search/agent-trace.jsonl", `${lines.join("\n")}\n`, 2, 1);
  }
}

/** The HTML of a settings page (raw, as an extractor or a browser returns it). */
function settingsPage(p: Planter, at: (location: string) => Where): string {
  return [
    "<!doctype html><html><head><title>Settings</title>",
    `<script>window.__CONFIG__ = {"stripeKey": "${p.bare(at("page HTML: <script> config object"), ofType("stripe_secret_key"))}", "env": "prod"};</script>`,
    "</head><body><h1>API settings</h1>",
    `<form><label for="k">API key</label><input id="k" type="text" name="api_key" value="${p.value(at('page HTML: <input name="api_key" value="…">'), ofType("generic_api_key"))}"></form>`,
    `<a href="https://devstore01.blob.core.windows.net/data/report.csv?sv=2022-11-02&amp;sp=r&amp;sig=${p.value(at("page HTML: href with &amp;sig= (SAS signature)"), ofType("azure_sas_signature"))}">report</a>`,
    `<pre>AWS_ACCESS_KEY_ID=${p.bare(at("page HTML: <pre> block"), ofType("aws_access_key_id"))}</pre>`,
    `<!-- TODO remove before launch: ${p.context(at("page HTML: comment"), oneLineText)} -->`,
    `<div data-token="${p.bare(at("page HTML: data-token attribute"), lettered)}">Connected</div>`,
    "</body></html>",
  ].join("\n");
}

function mcp(p: Planter, write: Write): void {
  // go-sdk conformance txtar: comment = task, client and server sections, an extra section.
  {
    const file = "in/mcp/db-tools.txtar";
    const at = (location: string, reach?: Reach) => ({
      domain: "mcp",
      file,
      location: `MCP txtar: ${location}`,
      ...(reach ? { reach } : {}),
    });
    const connection = p.value(at("tools/call arguments: connection URL password"), ofType("url_password"));
    const keyAsJsonKey = p.bare(at("result structuredContent: the secret as a JSON KEY"), lettered);
    const rows = `id | key\n1 | ${p.bare(at("result content text (table)"), lettered)}`;
    const client = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "agent", version: "1.0" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "query",
          arguments: { sql: "select * from api_keys", connection: `postgres://app:${connection}@db.internal:5432/app` },
        },
      },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "read_config", arguments: { path: "/srv/app/config.json" } } },
      {
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: {
          name: "http_get",
          arguments: {
            url: "https://api.internal/v1/me",
            headers: { Authorization: `Bearer ${p.value(at("tools/call arguments: headers.Authorization"), ofType("bearer_token"))}` },
          },
        },
      },
    ];
    const config = p.context(at("result content text: a JSON document as a string (double-encoded JSON)"), ofType("generic_api_key"));
    const server = [
      {
        jsonrpc: "2.0",
        id: 1,
        result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "db", version: "0.1" } },
      },
      {
        jsonrpc: "2.0",
        id: 2,
        result: { content: [{ type: "text", text: rows }], structuredContent: { keys: { [keyAsJsonKey]: "active" } } },
      },
      { jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: config }] } },
      { jsonrpc: "2.0", id: 4, result: { content: [{ type: "text", text: '{"login": "octocat"}' }] } },
    ];
    const task = `Connect with ${p.context(at("comment (the task)"), both(oneLineText, ofType("url_password")))} and list the tables.`;
    const tools = json([
      { name: "query", description: `runs SQL as ${p.bare(at("-- tools -- section (meta only)", "dropped"), lettered)}` },
    ]);
    write(
      "mcp/db-tools.txtar",
      `${task}\n-- client --\n${client.map(json).join("\n")}\n-- server --\n${server.map(json).join("\n")}\n-- tools --\n${tools}\n`,
    );
  }
  // A JSONL message stream, {direction, message} wrapped, with a server notification.
  {
    const file = "in/mcp/session.jsonl";
    const at = (location: string, reach?: Reach) => ({
      domain: "mcp",
      file,
      location: `MCP JSONL stream: ${location}`,
      ...(reach ? { reach } : {}),
    });
    const messages = [
      {
        direction: "client",
        message: {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "agent", version: "1" } },
        },
      },
      {
        direction: "server",
        message: {
          jsonrpc: "2.0",
          id: 1,
          result: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            serverInfo: { name: "vault", version: "1" },
            instructions: `Use ${p.bare(at("initialize result instructions"), lettered)} for admin calls`,
          },
        },
      },
      {
        direction: "server",
        message: {
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "debug", data: `loaded ${p.bare(at("server notification (not a turn)", "dropped"), lettered)}` },
        },
      },
      {
        direction: "client",
        message: {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "set_secret", arguments: { key: "STRIPE_KEY", value: p.bare(at("tools/call arguments.value"), lettered) } },
        },
      },
      {
        direction: "server",
        message: {
          jsonrpc: "2.0",
          id: 2,
          result: {
            content: [
              {
                type: "text",
                text: `stored; environment now:\n${p.context(at("result text (multi-line .env)"), named(/\.env|credentials/))}`,
              },
            ],
            isError: false,
          },
        },
      },
      {
        direction: "client",
        message: { jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: "file:///home/dev/.aws/credentials" } },
      },
      {
        direction: "server",
        message: {
          jsonrpc: "2.0",
          id: 3,
          result: {
            contents: [
              {
                uri: "file:///home/dev/.aws/credentials",
                mimeType: "text/plain",
                text: p.context(at("resources/read text: AWS credentials file"), ofType("aws_secret_access_key")),
              },
            ],
          },
        },
      },
    ];
    write("mcp/session.jsonl", `${messages.map(json).join("\n")}\n`);
  }
  // A stream with a value that is not JSON-RPC: the transcript is quarantined whole.
  {
    const file = "in/mcp/bad-stream.jsonl";
    const secret = p.bare(
      { domain: "mcp", file, location: "MCP stream (quarantined): the non-JSON-RPC message", reach: "quarantine", visible: true },
      lettered,
    );
    const messages = [
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } },
      { id: 1, result: { token: secret } },
    ];
    write("mcp/bad-stream.jsonl", `${messages.map(json).join("\n")}\n`, 1, 1);
  }
  // AgentWorldBench rows: system_str is the system prompt; one row is invalid (quarantined).
  {
    const file = "in/mcp/awb-rows.jsonl";
    const at = (location: string, reach?: Reach, visible?: boolean) => ({
      domain: "mcp",
      file,
      location: `AgentWorldBench rows: ${location}`,
      ...(reach ? { reach } : {}),
      ...(visible !== undefined ? { visible } : {}),
    });
    const system = `You simulate an MCP vault server. Admin token: ${p.bare(at("system_str (system prompt)"), lettered)}`;
    const a1 = `### Turn 1\n**Action:**\n${json({ name: "get_secret", arguments: { name: "deploy" } })}`;
    const o1 = `**Environment Observation:**\n${json({ value: p.bare(at("response[] (observation)"), lettered) })}`;
    const a2 = `### Turn 2\n**Action:**\n${p.context(at("prompt[] (action)"), oneLineText)}`;
    const o2 = "**Environment Observation:**\nok";
    const rows = [
      { task: "mcp", id: "awb-vault-1", prompt: [a1], response: [o1], system_str: system, turn_idx: 1, total_turns: 2 },
      { task: "mcp", id: "awb-vault-1", prompt: [a1, a2], response: [o1, o2], system_str: system, turn_idx: 2, total_turns: 2 },
      {
        task: "mcp",
        id: "awb-bad",
        prompt: [`${p.context(at("(quarantined row, turn_idx 0) prompt[]", "quarantine", true), oneLineText)}`],
        response: ["x"],
        system_str: "s",
        turn_idx: 0,
        total_turns: 1,
      },
    ];
    write("mcp/awb-rows.jsonl", `${rows.map(json).join("\n")}\n`, 2, 1);
  }
}

function swe(p: Planter, write: Write): void {
  // SWE-agent .traj (1.x): steps with actions/observations, thoughts, environment, history task.
  {
    const file = "in/swe/octo-org__api-1234.traj";
    const at = (location: string, reach?: Reach) => ({
      domain: "swe",
      file,
      location: `SWE-agent .traj: ${location}`,
      ...(reach ? { reach } : {}),
    });
    const traj = {
      environment: `docker://swe-env?token=${p.bare(at("environment (meta)", "dropped"), lettered)}`,
      trajectory: [
        {
          action: p.context(at("step action (git remote with an installation token)"), named(/installation token/)),
          observation: "",
          thought: `Use the token ${p.bare(at("step thought (meta)", "dropped"), lettered)}`,
          response: "git remote set-url",
          state: '{"open_file": "n/a", "working_dir": "/repo"}',
          execution_time: 0.1,
        },
        {
          action: "env | grep --color=always TOKEN",
          observation: `${ESC}[01;31m${ESC}[KGITHUB_TOKEN${ESC}[m${ESC}[K=${ESC}[1;32m${p.bare(at("step observation, grep --color ANSI glued to the token"), lettered)}${ESC}[0m\nNPM_TOKEN=${ESC}[33m${p.bare(at("step observation, ANSI glued to the token (2)"), lettered)}${ESC}[0m`,
          thought: "",
          response: "",
          state: { open_file: "n/a", working_dir: "/repo" },
        },
        {
          action: "cat .env",
          observation: `${p.context(at("step observation: .env"), named(/\.env/))}\n${p.context(at("step observation: .env (2)"), oneLineText)}`,
          thought: "",
          response: "",
          state: {},
        },
      ],
      history: [
        { role: "system", content: "SETUP", message_type: "system" },
        {
          role: "user",
          content: `<uploaded_files>/repo</uploaded_files>\nFix CI. The deploy key is ${p.bare(at("history: first user message (the task)"), lettered)}.`,
          message_type: "observation",
        },
      ],
      info: { exit_status: "submitted" },
      replay_config: { problem_statement: { id: "octo-org__api-1234", text: "Fix CI" } },
    };
    write("swe/octo-org__api-1234.traj", `${JSON.stringify(traj, null, 2)}\n`);
  }
  // mini-swe-agent .traj.json (saved form): bash blocks, outputs with file names and config files.
  {
    const file = "in/swe/fix-ci.traj.json";
    const at = (location: string) => ({ domain: "swe", file, location: `mini-swe-agent: ${location}` });
    const block = (command: string) => `THOUGHT: next step.\n\n\`\`\`bash\n${command}\n\`\`\``;
    const out = (text: string) => `<returncode>0</returncode>\n<output>\n${text}\n</output>`;
    const doc = {
      trajectory_format: "mini-swe-agent-1",
      info: { exit_status: "Submitted", mini_version: "1.0.0" },
      messages: [
        { role: "system", content: "You are a helpful assistant that can interact with a computer." },
        {
          role: "user",
          content: `Please fix the failing deploy. The registry config:\n${p.context(at("first user message (the task): .npmrc"), ofType("npm_token"))}`,
        },
        { role: "assistant", content: block(p.context(at("bash block (the action): curl with a bearer header"), ofType("bearer_token"))) },
        { role: "user", content: out('{"login": "ci-bot"}') },
        { role: "assistant", content: block("ls -la /var/secrets/") },
        {
          role: "user",
          content: out(
            `total 8\n-rw------- 1 ci ci 41 Jan 1 00:00 ${p.bare(at("ls output: a FILE NAME that is a token (token.json)"), lettered)}.json\n-rw------- 1 ci ci 41 Jan 1 00:00 /var/secrets/${p.bare(at("ls output: a token as a PATH SEGMENT (/var/secrets/<token>/key.pem)"), lettered)}/key.pem`,
          ),
        },
        { role: "assistant", content: block("cat ~/.config/gh/hosts.yml") },
        {
          role: "user",
          content: out(
            `github.com:\n    user: ci-bot\n    oauth_token: ${p.bare(at("gh hosts.yml oauth_token"), ofType("github_token"))}\n    git_protocol: https`,
          ),
        },
      ],
    };
    write("swe/fix-ci.traj.json", `${JSON.stringify(doc, null, 2)}\n`);
  }
  // OpenHands event array: user message (task), run, browse (page HTML), IPython with ANSI output.
  {
    const file = "in/swe/openhands-session.json";
    const at = (location: string, reach?: Reach) => ({
      domain: "swe",
      file,
      location: `OpenHands events: ${location}`,
      ...(reach ? { reach } : {}),
    });
    const page = [
      "<html><body><h2>Grafana admin</h2>",
      `<form><input type="password" name="password" value="${p.value(at('browse observation HTML: <input name="password" value="…">'), ofType("generic_password"))}"></form>`,
      `<script>const SLACK = "${p.bare(at("browse observation HTML: <script> constant"), ofType("slack_token"))}";</script>`,
      "</body></html>",
    ].join("\n");
    const events = [
      {
        id: 0,
        timestamp: "2025-01-27T22:44:56",
        source: "user",
        message: "Deploy",
        action: "message",
        args: {
          content: `Deploy the app; push with ${p.bare(at("user message (the task)"), lettered)}.`,
          image_urls: null,
          wait_for_response: false,
        },
      },
      {
        id: 1,
        timestamp: "2025-01-27T22:45:00",
        source: "agent",
        message: "Running",
        action: "run",
        args: {
          command: p.context(at("run command: docker login"), ofType("docker_pat")),
          thought: `log in with ${p.bare(at("action thought (meta)", "dropped"), lettered)}`,
          blocking: false,
        },
      },
      {
        id: 2,
        timestamp: "2025-01-27T22:45:02",
        source: "agent",
        message: "done",
        cause: 1,
        observation: "run",
        content: "Login Succeeded",
        extras: { command: "docker login", metadata: { exit_code: 0 } },
      },
      {
        id: 3,
        timestamp: "2025-01-27T22:45:05",
        source: "agent",
        message: "Browsing",
        action: "browse",
        args: {
          url: `https://admin:${p.value(at("browse url with a password"), ofType("url_password"))}@grafana.internal.example.com/d/abc`,
          thought: "",
        },
      },
      {
        id: 4,
        timestamp: "2025-01-27T22:45:06",
        source: "agent",
        message: "page",
        cause: 3,
        observation: "browse",
        content: page,
        extras: { url: "https://grafana.internal.example.com/d/abc" },
      },
      {
        id: 5,
        timestamp: "2025-01-27T22:45:08",
        source: "agent",
        message: "code",
        action: "run_ipython",
        args: { code: `import openai\n${p.context(at("run_ipython code"), named(/OpenAI legacy/))}`, thought: "" },
      },
      {
        id: 6,
        timestamp: "2025-01-27T22:45:09",
        source: "agent",
        message: "out",
        cause: 5,
        observation: "run_ipython",
        content: `${ESC}[0;31mAuthenticationError${ESC}[0m: Incorrect API key provided: ${ESC}[1m${p.bare(at("IPython output, ANSI glued to the key"), lettered)}${ESC}[0m`,
        extras: {},
      },
    ];
    write("swe/openhands-session.json", `${JSON.stringify(events, null, 2)}\n`);
  }
  // OpenHands evaluation output JSONL: an instance_id holding a secret; a record with a bad history.
  {
    const file = "in/swe/openhands-output.jsonl";
    const at = (location: string, reach?: Reach, visible?: boolean) => ({
      domain: "swe",
      file,
      location: `OpenHands output JSONL: ${location}`,
      ...(reach ? { reach } : {}),
      ...(visible !== undefined ? { visible } : {}),
    });
    const dockerConfig = JSON.stringify(
      {
        auths: {
          "https://index.docker.io/v1/": {
            auth: p.value(at('observation: ~/.docker/config.json "auth" (base64 user:password)'), ofType("basic_auth")),
          },
        },
      },
      null,
      2,
    );
    const lines = [
      {
        instance_id: `deploy-${p.bare(at("instance_id (the record id)", "identifier"), lettered)}`,
        instruction: `Rotate the key ${p.bare(at("instruction (the task)"), lettered)}`,
        history: [
          { action: "run", args: { command: "cat ~/.docker/config.json" } },
          { observation: "run", content: dockerConfig, extras: {} },
        ],
      },
      {
        instance_id: "broken-1",
        instruction: `Use ${p.bare(at("(quarantined record, history not an array) instruction", "quarantine", true), lettered)}`,
        history: "not an array",
      },
    ];
    write("swe/openhands-output.jsonl", `${lines.map(json).join("\n")}\n`, 2, 1);
  }
  // SWE-smith JSONL: XML function calls; the system message is the agent's prompt (not rendered).
  {
    const file = "in/swe/swe-smith.jsonl";
    const at = (location: string, reach?: Reach) => ({
      domain: "swe",
      file,
      location: `SWE-smith: ${location}`,
      ...(reach ? { reach } : {}),
    });
    const record = {
      instance_id: "octo__repo.abc123",
      messages: [
        {
          role: "system",
          content: `You are a helpful assistant. Internal key ${p.bare(at("system message (the agent's prompt, not rendered)", "dropped"), lettered)}`,
        },
        {
          role: "user",
          content: `<uploaded_files>/testbed</uploaded_files>\nCI fails: ${p.context(at("first user message (the task)"), ofType("hf_token"))}`,
        },
        { role: "assistant", content: "Let me look.\n\n<function=bash>\n<parameter=command>cat /testbed/.env</parameter>\n</function>" },
        {
          role: "user",
          content: `OBSERVATION:\n${p.context(at("observation: .env"), oneLineText)}\n${p.context(at("observation: .env (2)"), oneLineText)}`,
        },
        {
          role: "assistant",
          content: `<function=str_replace_editor>\n<parameter=command>create</parameter>\n<parameter=path>/testbed/settings.py</parameter>\n<parameter=file_text>${p.context(at("function call (the action): file_text"), ofType("stripe_restricted_key", "stripe_secret_key"))}\n</parameter>\n</function>`,
        },
        { role: "user", content: "OBSERVATION:\nFile created successfully at: /testbed/settings.py" },
        { role: "assistant", content: "<function=submit>\n</function>" },
      ],
    };
    write("swe/swe-smith.jsonl", `${json(record)}\n`);
  }
}

function web(p: Planter, write: Write): void {
  const file = "in/web/browsergym-analysis.md";
  const at = (location: string, reach?: Reach) => ({
    domain: "web",
    file,
    location: `BrowserGym md: ${location}`,
    ...(reach ? { reach } : {}),
  });
  const pemLines = (pem: string) => pem.split("\n");
  // The same page before and after "regenerate": the key's armour lines stay, its body lines change,
  // so a tree diff carries only body lines (no BEGIN/END around them).
  const keyA = p.bare(at("AXTree: private key shown one StaticText per line (step 0)"), ofType("private_key"));
  const keyB = p.bare(
    at("AXTree: private key regenerated (step 1): the tree DIFF holds only its changed body lines"),
    ofType("private_key"),
  );
  const keyC = p.bare(at("AXTree: private key regenerated again (step 2)"), ofType("private_key"));
  const apiKey = [
    p.bare(at("AXTree: textbox value (step 0)"), lettered),
    p.bare(at("AXTree: textbox value after rotation (step 1)"), lettered),
    p.bare(at("AXTree: textbox value after rotation (step 2)"), lettered),
  ];
  const dbPassword = p.value(
    at("AXTree: textbox named DB_PASSWORD, its value (label and value in separate fields)"),
    ofType("generic_password"),
  );
  const sas = p.value(at("AXTree: link url with &sig="), ofType("azure_sas_signature"));
  const banner = p.context(at("AXTree: StaticText holding a header line"), both(oneLineText, ofType("api_key_header", "azure_api_key")));
  const tree = (step: number, key: string) =>
    [
      `RootWebArea 'Admin console', focused, url='https://console.example.com/keys'`,
      `\t[12] textbox 'API key', value=${pyRepr(apiKey[step] as string)}`,
      `\t[13] StaticText 'DB_PASSWORD'`,
      `\t[14] textbox 'DB_PASSWORD', value=${pyRepr(dbPassword)}`,
      `\t[15] link 'Download report', url=${pyRepr(`https://devstore01.blob.core.windows.net/data/report.csv?sv=2022-11-02&sig=${sas}`)}`,
      `\t[16] StaticText ${pyRepr(banner)}`,
      `\t[40] group 'SSH key'`,
      ...pemLines(key).map((line) => `\t\tStaticText ${pyRepr(line)}`),
      `\t[50] button 'Regenerate'`,
    ].join("\n");
  const tabs = `- Tab 0 (active)\n  - Title: Admin\n  - URL: https://admin:${p.value(at("open tabs URL with a password (meta)", "dropped"), ofType("url_password"))}@console.example.com/keys`;
  const step = (n: number, key: string, history: string, next: string) =>
    [
      `## InstanceStep${String(n).padStart(3, "0")}`,
      "",
      "",
      "### State of the World",
      "",
      "#### Currently Open Tabs",
      "",
      tabs,
      "",
      "",
      "#### Current Page Accessibility Tree",
      "",
      "```",
      tree(n, key),
      "```",
      "",
      "### History of Past Actions",
      "",
      history,
      "",
      "### Next Action",
      "",
      "```",
      next,
      "```",
      "",
    ].join("\n");
  const pastAction = (n: number, action: string, outcome: string) =>
    [
      `#### PastAction${String(n).padStart(3, "0")}`,
      "",
      "##### Selected Action in the BrowserGym format",
      "",
      "```",
      action,
      "```",
      "",
      "##### Outcome including errors",
      "",
      outcome,
      "",
    ].join("\n");
  const fillAction = `fill('12', ${pyRepr(p.bare(at("Next Action: the fill() call (the action)"), lettered))})`;
  const doc = [
    "# 1 - Global Parameters",
    "",
    "",
    "## Task",
    "",
    "* **Derived Goal**:",
    `  Rotate the API key ${p.bare(at("Derived Goal (the task)"), lettered)} in the admin console.`,
    "## Run Parameters",
    "",
    "* **Date of Instance Run**: 2024-12-18 12:49:54",
    "* **Trace ID**: 5e7c8f52-1111-4bff-b7c4-63c3dff587cf",
    "",
    "### Model Configuration",
    "* **model_name**: gpt-4o",
    "",
    "# 2 - Instance Type",
    "",
    "",
    step(
      0,
      keyA,
      "No previous actions",
      `I will paste the new key ${p.bare(at("Next Action reasoning (thinking)", "dropped"), lettered)}.\n\n\`\`\`${fillAction}\`\`\``,
    ),
    step(
      1,
      keyB,
      pastAction(0, fillAction, `Error: key ${p.bare(at("past action outcome error (meta)", "dropped"), lettered)} rejected`),
      "Regenerate the SSH key.\n\n```click('50')```",
    ),
    step(
      2,
      keyC,
      `${pastAction(0, fillAction, "No errors reported")}\n${pastAction(1, "click('50')", "No errors reported")}`,
      "Done.\n\n```click('50')```",
    ),
  ].join("\n");
  write("web/browsergym-analysis.md", doc);
}

function android(p: Planter, write: Write): void {
  // uiautomator dumps with action comments; XML attributes carry the secrets.
  {
    const file = "in/android/window_dump.xml";
    const at = (location: string) => ({ domain: "android", file, location: `uiautomator XML: ${location}` });
    const node = (attrs: Record<string, string>, children = "") => {
      const all = {
        index: "0",
        text: "",
        "resource-id": "",
        class: "android.widget.TextView",
        package: "com.example.wallet",
        "content-desc": "",
        checkable: "false",
        checked: "false",
        clickable: "false",
        enabled: "true",
        focusable: "false",
        focused: "false",
        scrollable: "false",
        "long-clickable": "false",
        password: "false",
        selected: "false",
        bounds: "[0,0][1080,200]",
        ...attrs,
      };
      const text = Object.entries(all)
        .map(([k, v]) => `${k}="${xmlAttr(v)}"`)
        .join(" ");
      return children === "" ? `<node ${text} />` : `<node ${text}>${children}</node>`;
    };
    const dump = (children: string) =>
      `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">${node({ class: "android.widget.FrameLayout", bounds: "[0,0][1080,1920]" }, children)}</hierarchy>`;
    const typed = p.bare(at("action comment (input text …)"), lettered);
    const first = dump(
      [
        node({
          class: "android.widget.EditText",
          "resource-id": "com.example.wallet:id/api_key",
          text: typed,
          clickable: "true",
          focusable: "true",
          bounds: "[0,200][1080,300]",
        }),
        node({
          text: `api_key=${p.value(at('XML attribute text="api_key&#61;…" (entity-encoded =)'), ofType("generic_api_key"))}`,
          bounds: "[0,300][1080,400]",
        }),
        node({
          "content-desc": `{"api_key": "${p.value(at("XML attribute content-desc holding JSON (&quot; entities)"), ofType("generic_api_key"))}"}`,
          bounds: "[0,400][1080,500]",
        }),
      ].join(""),
    );
    const second = dump(
      [
        node({
          text: `Authorization: Bearer ${p.value(at("XML attribute text (toast with an Authorization header)"), ofType("bearer_token"))}`,
          bounds: "[0,500][1080,600]",
        }),
        node({
          "resource-id": "com.example.wallet:id/token",
          text: p.bare(at("XML attribute text (second dump)"), lettered),
          bounds: "[0,600][1080,700]",
        }),
      ].join(""),
    );
    // `api_key=` is written with an entity in the file, as some dumpers do.
    const text = `<!-- action: input text ${typed} -->\n${first.replace("api_key=", "api_key&#61;")}\nUI hierchary dumped to: /dev/tty\n<!-- action: click(540, 1200) -->\n${second}\n`;
    write("android/window_dump.xml", text);
  }
  // DroidBot: a set_text event with its start and stop states (states/ are not inputs themselves).
  {
    const file = "in/android/droidbot/events/event_login.json";
    const at = (location: string, reach?: Reach) => ({
      domain: "android",
      file,
      location: `DroidBot event: ${location}`,
      ...(reach ? { reach } : {}),
    });
    const token = p.bare(at("set_text event text (the action) and the stop state's EditText"), lettered);
    const view = (id: number, parent: number, children: number[], extra: Record<string, unknown>) => ({
      temp_id: id,
      parent,
      children,
      class: "android.widget.TextView",
      package: "com.example.app",
      resource_id: null,
      text: null,
      content_description: null,
      enabled: true,
      visible: true,
      bounds: [
        [0, id * 100],
        [1080, id * 100 + 100],
      ],
      ...extra,
    });
    const state = (stateStr: string, views: unknown[]) => ({
      tag: "2024-01-01_000000",
      state_str: stateStr,
      foreground_activity: "com.example.app/.LoginActivity",
      views,
    });
    const start = state("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", [
      view(0, -1, [1, 2], { class: "android.widget.FrameLayout" }),
      view(1, 0, [], { class: "android.widget.EditText", resource_id: "com.example.app:id/token", text: "" }),
      view(2, 0, [], { text: `Paste your token. Last used: ${p.bare(at("start state view text (initial observation)"), lettered)}` }),
    ]);
    const stop = state("b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2", [
      view(0, -1, [1, 2], { class: "android.widget.FrameLayout" }),
      view(1, 0, [], { class: "android.widget.EditText", resource_id: "com.example.app:id/token", text: token }),
      view(2, 0, [], {
        text: `Signed in. Session ${p.bare(at("stop state view text (observation)"), ofType("jwt"))}`,
        content_description: p.context(at("stop state content_description"), oneLineText),
      }),
    ]);
    const event = {
      event_str: `SetTextEvent(text=${p.bare(at("event_str (not read)", "dropped"), lettered)})`,
      event: {
        event_type: "set_text",
        text: token,
        view: {
          class: "android.widget.EditText",
          resource_id: "com.example.app:id/token",
          text: "",
          bounds: [
            [0, 100],
            [1080, 200],
          ],
        },
      },
      start_state: start.state_str,
      stop_state: stop.state_str,
      tag: "2024-01-01_000001",
    };
    write("android/droidbot/events/event_login.json", JSON.stringify(event, null, 2));
    write("android/droidbot/states/state_1.json", JSON.stringify(start, null, 2), 0);
    write("android/droidbot/states/state_2.json", JSON.stringify(stop, null, 2), 0);
  }
  // A DroidBot device state read on its own (one-turn trajectory).
  {
    const file = "in/android/device_state_2024-01-01_120000.json";
    const at = (location: string) => ({ domain: "android", file, location: `DroidBot device state: ${location}` });
    const state = {
      tag: "2024-01-01_120000",
      state_str: "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3",
      foreground_activity: "com.example.ops/.SettingsActivity",
      views: [
        {
          temp_id: 0,
          parent: -1,
          children: [1, 2],
          class: "android.widget.FrameLayout",
          package: "com.example.ops",
          text: null,
          bounds: [
            [0, 0],
            [1080, 1920],
          ],
        },
        {
          temp_id: 1,
          parent: 0,
          children: [],
          class: "android.widget.TextView",
          package: "com.example.ops",
          text: p.context(at("view text"), oneLineText),
          bounds: [
            [0, 0],
            [1080, 100],
          ],
        },
        {
          temp_id: 2,
          parent: 0,
          children: [],
          class: "android.widget.TextView",
          package: "com.example.ops",
          text: "Webhook",
          content_description: p.bare(at("view content_description"), lettered),
          bounds: [
            [0, 100],
            [1080, 200],
          ],
        },
      ],
    };
    write("android/device_state_2024-01-01_120000.json", JSON.stringify(state, null, 2));
  }
}

function os(p: Planter, write: Write): void {
  const file = "in/os/desktop.jsonl";
  const at = (location: string, reach?: Reach, visible?: boolean) => ({
    domain: "os",
    file,
    location: `os-a11y JSONL: ${location}`,
    ...(reach ? { reach } : {}),
    ...(visible !== undefined ? { visible } : {}),
  });
  const ns = `xmlns:st="https://a11y.example.org/ns/state" xmlns:attr="https://a11y.example.org/ns/attributes" xmlns:cp="https://a11y.example.org/ns/component"`;
  const typed = p.bare(at("pyautogui.typewrite() argument (the action) and the editor text after it"), lettered);
  const initial = `<desktop-frame ${ns} name="main" cp:screencoord="(0, 0)" cp:size="(1920, 1080)"><application name="gedit"><frame name="notes.env - gedit"><text attr:id="view" st:editable="true">${xmlText(`GITHUB_TOKEN=${p.bare(at("initialObservation: AT-SPI element text"), lettered)}`)}</text></frame></application></desktop-frame>`;
  const after = `<desktop-frame ${ns} name="main" cp:screencoord="(0, 0)" cp:size="(1920, 1080)"><application name="gedit"><frame name="notes.env - gedit"><text attr:id="view" st:editable="true">${xmlText(typed)}</text><push-button name="${xmlAttr(`Copy ${p.bare(at("AT-SPI XML attribute name="), lettered)}`)}" attr:tooltip="${xmlAttr(p.context(at("AT-SPI XML attribute attr:tooltip"), both(oneLineText, ofType("bearer_token", "api_key_header", "basic_auth"))))}"/></frame></application></desktop-frame>`;
  const table = [
    "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)",
    `label\tKey\t${p.bare(at("OSWorld table: text column"), lettered)}\t\t\t(10, 10)\t(300, 20)`,
    `label\tConfig\t"{""api_key"": ""${p.value(at('OSWorld table: quoted text column holding JSON ("" escapes)'), ofType("generic_api_key"))}""}"\t\t\t(10, 40)\t(300, 20)`,
    `entry\t${p.bare(at("OSWorld table: name column"), lettered)}\t\t\tSecret entry\t(10, 70)\t(300, 20)`,
  ].join("\n");
  const good = {
    id: "gedit-token",
    system: `You simulate an Ubuntu desktop. ${p.context(at("system (the system prompt)"), oneLineText)}`,
    task: `Paste the token ${p.bare(at("task"), lettered)} into gedit and save.`,
    initialObservation: initial,
    turns: [
      {
        action: `pyautogui.typewrite('${typed}')`,
        observation: after,
        thinking: `type ${p.bare(at("turn thinking (not rendered)", "dropped"), lettered)}`,
      },
      { action: "pyautogui.hotkey('ctrl', 's')", observation: table },
    ],
    meta: {
      vm_password: p.bare(at("trajectory meta field (not rendered)", "dropped"), lettered),
      notes: p.context(at("trajectory meta field, in context (not rendered)", "dropped")),
    },
  };
  const bad = {
    id: "gedit-broken",
    turns: [
      {
        action: `pyautogui.typewrite('${p.bare(at("(quarantined: observation is not XML) action", "quarantine", true), lettered)}')`,
        observation: "<frame name='x'><text>unclosed</frame>",
      },
    ],
  };
  write("os/desktop.jsonl", `${json(good)}\n${json(bad)}\n`, 2, 1);
}

/** Canonical JSONL edge cases: id, HTML page, system/meta, and every kind of quarantined line. */
function canonicalEdges(p: Planter, write: Write): void {
  const file = "in/canonical/edges.jsonl";
  const at = (location: string, reach?: Reach, visible?: boolean, domain = "web") => ({
    domain,
    file,
    location: `canonical JSONL: ${location}`,
    ...(reach ? { reach } : {}),
    ...(visible !== undefined ? { visible } : {}),
  });
  const lines: string[] = [];
  lines.push(
    json({
      id: "web-html-1",
      domain: "web",
      system: `You simulate a web browser. ${p.context(at("system (the system prompt)"), oneLineText)}`,
      task: `Open the settings page and copy the key ${p.bare(at("task"), lettered)}`,
      turns: [
        {
          action: "goto('https://app.example.com/settings')",
          observation: settingsPage(p, (l) => at(`web observation, raw ${l}`)),
          thinking: `copy ${p.bare(at("thinking (not rendered)", "dropped"), lettered)}`,
        },
      ],
      meta: { cookie: `session=${p.bare(at("meta field (not rendered)", "dropped"), lettered)}` },
    }),
  );
  lines.push(
    json({
      id: `ci-run-${p.bare(at("record id", "identifier", undefined, "terminal"), lettered)}`,
      domain: "terminal",
      turns: [{ action: "echo ok", observation: "ok" }],
    }),
  );
  // Quarantined at read: not JSON (the parser's message quotes the text near the error).
  lines.push(
    `{"id": "bad-token", "domain": "swe", "turns": [], "token": ${p.bare(at("(quarantined: invalid JSON) an unquoted token", "quarantine", true, "swe"), lettered)}}`,
  );
  // Quarantined at read: an unknown domain; the excerpt holds the secret.
  lines.push(
    json({
      id: "bad-domain",
      domain: "desktop",
      turns: [
        {
          action: p.context(at("(quarantined: unknown domain) action", "quarantine", true, "desktop (invalid)"), oneLineText),
          observation: "x",
        },
      ],
    }),
  );
  // Quarantined at read: not JSON, a secret straddling the 200-character excerpt cut.
  {
    const secret = p.bare(
      at("(quarantined: invalid JSON) a token cut by the 200-character excerpt", "quarantine", true, "swe"),
      (s) => lettered(s) && s.secret.length >= 40 && s.secret.length <= 60,
    );
    const head = `{"id": "bad-cut", "domain": "swe", "turns": [{"action": "cat notes.txt", "observation": "`;
    const pad = "x".repeat(180 - head.length);
    lines.push(`${head}${pad}${secret} and more"}]`);
  }
  // Quarantined at read: a line over input.max_line_bytes (its text is never held).
  lines.push(
    json({
      id: "huge",
      domain: "terminal",
      turns: [
        {
          action: "cat big.log",
          observation: `${p.context(at("(quarantined: line over max_line_bytes) observation", "quarantine", false, "terminal"), oneLineText)}\n${"log line\n".repeat(Math.ceil(MAX_LINE_BYTES / 9))}`,
        },
      ],
    }),
  );
  // Quarantined at read: no turns; the id holds a secret.
  lines.push(
    json({ id: `job-${p.bare(at("(quarantined: no turns) record id", "quarantine", true, "mcp"), lettered)}`, domain: "mcp", turns: [] }),
  );
  write("canonical/edges.jsonl", `${lines.join("\n")}\n`, lines.length, 5);
}

// ---------------------------------------------------------------------------------------------
// The scanner: finds planted values in output text, whatever escaping the output applied.
// ---------------------------------------------------------------------------------------------

/** One planted secret found in one output. */
export interface Leak {
  secret: PlantedSecret;
  /** Output file (relative to the corpus folder) and the part of it, e.g. `out/data/x.parquet#id`. */
  output: string;
  /** `whole value` or `12-char piece`, and the view it was found in (raw, JSON-unescaped, HTML-decoded). */
  how: string;
  /** The text around it. */
  excerpt: string;
}

/** Length of the sliding window: no piece this long of a planted value may survive. */
export const WINDOW = 12;

const JSON_ESCAPE = /\\(u[0-9a-fA-F]{4}|["\\/bfnrt])/g;
const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/** Undoes one level of JSON string escaping (`\n`, `\"`, `\/`, `\u003c`) wherever it occurs. */
export function jsonUnescape(text: string): string {
  return text.replace(JSON_ESCAPE, (_, e: string) =>
    e.startsWith("u") ? String.fromCharCode(Number.parseInt(e.slice(1), 16)) : (SIMPLE_ESCAPES[e] ?? e),
  );
}

/** `&amp;` `&quot;` `&#x3D;` `&#61;` … decoded (a sufficient subset for what outputs escape). */
export function htmlUnescape(text: string): string {
  const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", "#39": "'" };
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);/g, (whole, e: string) => {
    if (e.startsWith("#x")) return String.fromCodePoint(Number.parseInt(e.slice(2), 16));
    if (e.startsWith("#")) return String.fromCodePoint(Number.parseInt(e.slice(1), 10));
    return named[e] ?? whole;
  });
}

/** The text as written, and as a reader of it would see it after undoing JSON and HTML escaping. */
function views(text: string): [string, string][] {
  const found: [string, string][] = [["raw", text]];
  const add = (name: string, view: string) => {
    if (!found.some(([, v]) => v === view)) found.push([name, view]);
  };
  if (text.includes("\\")) {
    const once = jsonUnescape(text);
    add("JSON-unescaped", once);
    if (once.includes("\\")) add("JSON-unescaped twice", jsonUnescape(once));
  }
  if (text.includes("&")) add("HTML-decoded", htmlUnescape(text));
  if (text.includes("\\") && text.includes("&")) add("JSON-unescaped + HTML-decoded", htmlUnescape(jsonUnescape(text)));
  return found;
}

/**
 * The value as it reads inside any base64 text, at each of the three byte alignments (the
 * quartets that also hold neighbouring bytes are left out).
 */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value);
  return [0, 1, 2].map((k) => {
    const encoded = Buffer.concat([Buffer.alloc(k), bytes]).toString("base64");
    return encoded.slice(k === 0 ? 0 : 4, Math.floor((k + bytes.length) / 3) * 4);
  });
}

export class LeakScanner {
  readonly leaks: Leak[] = [];
  private readonly secrets: readonly PlantedSecret[];
  /** Window → the one secret it belongs to; windows shared by two planted values (armour, headers) are not secret material. */
  private readonly windows = new Map<string, PlantedSecret>();
  private readonly found = new Set<string>();

  constructor(secrets: readonly PlantedSecret[]) {
    this.secrets = secrets;
    const owners = new Map<string, Set<PlantedSecret>>();
    for (const secret of secrets) {
      for (let i = 0; i + WINDOW <= secret.value.length; i++) {
        const window = secret.value.slice(i, i + WINDOW);
        const set = owners.get(window) ?? new Set();
        set.add(secret);
        owners.set(window, set);
      }
    }
    for (const [window, set] of owners) if (set.size === 1) this.windows.set(window, [...set][0] as PlantedSecret);
  }

  /** Scans one output text (a file, a Parquet column, a decoded token sequence, a log). */
  scan(text: string, output: string): void {
    if (text === "") return;
    for (const secret of this.secrets) {
      for (const needle of base64Forms(secret.value)) {
        const at = text.indexOf(needle);
        if (at >= 0) this.add(secret, output, "base64-encoded", text, at, needle.length);
      }
    }
    for (const [name, view] of views(text)) {
      for (const secret of this.secrets) {
        const at = view.indexOf(secret.value);
        if (at >= 0) this.add(secret, output, `whole value (${name})`, view, at, secret.value.length);
      }
      for (let i = 0; i + WINDOW <= view.length; i++) {
        const secret = this.windows.get(view.slice(i, i + WINDOW));
        if (secret) this.add(secret, output, `${WINDOW}-char piece (${name})`, view, i, WINDOW);
      }
    }
  }

  private add(secret: PlantedSecret, output: string, how: string, view: string, at: number, length: number): void {
    const key = `${secret.n}\u0000${output}`;
    if (this.found.has(key)) return;
    this.found.add(key);
    const excerpt = JSON.stringify(view.slice(Math.max(0, at - 40), at + length + 40));
    this.leaks.push({ secret, output, how, excerpt });
  }
}

/** One line per leak, grouped by planted secret, for a test failure message. */
export function leakReport(leaks: readonly Leak[]): string {
  const bySecret = new Map<number, Leak[]>();
  for (const leak of leaks) bySecret.set(leak.secret.n, [...(bySecret.get(leak.secret.n) ?? []), leak]);
  const lines: string[] = [];
  for (const group of [...bySecret.values()].sort((a, b) => (a[0] as Leak).secret.n - (b[0] as Leak).secret.n)) {
    const { secret } = group[0] as Leak;
    lines.push(`#${secret.n} ${secret.type} [${secret.domain}] ${secret.location} (${secret.file}; reach: ${secret.reach})`);
    for (const leak of group) lines.push(`    → ${leak.output}: ${leak.how}: ${leak.excerpt}`);
  }
  return lines.join("\n");
}

/** Where a leak is, without row numbers and shard names: `out/data/*.parquet#input_ids (detokenized)`. */
function outputFamily(output: string): string {
  return output
    .replace(/(train|validation)-\d{5}-\d{5}-\d{4}\.parquet/, "*.parquet")
    .replace(/turns-\d{5}-\d{4}\.parquet/, "turns-*.parquet")
    .replace(/task-\d{5}\.jsonl/, "task-*.jsonl")
    .replace(/ row \d+/, "")
    .replace(/^log: (lwm-data \S+(?: \S+)?).*$/, "log of `$1`");
}

/** One block per leaked secret: where it was planted, one example, and every kind of output it reached. */
export function leakSummary(leaks: readonly Leak[]): string {
  const bySecret = new Map<number, Leak[]>();
  for (const leak of leaks) bySecret.set(leak.secret.n, [...(bySecret.get(leak.secret.n) ?? []), leak]);
  return [...bySecret.values()]
    .sort((a, b) => (a[0] as Leak).secret.n - (b[0] as Leak).secret.n)
    .map((group) => {
      const first = group[0] as Leak;
      const { secret } = first;
      const families = [...new Set(group.map((leak) => outputFamily(leak.output)))].sort();
      return [
        `#${secret.n} ${secret.type} [${secret.domain}] ${secret.location} (${secret.file})`,
        `    e.g. ${first.output}: ${first.how}: ${first.excerpt}`,
        `    in: ${families.join(" | ")}`,
      ].join("\n");
    })
    .join("\n");
}
