import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { gunzipSync, zstdDecompressSync } from "node:zlib";
import { ROOT } from "../helpers.ts";

/** A real input of one format, decompressed: the starting point of mutations. */
export interface Seed {
  name: string;
  bytes: Uint8Array;
  /** DroidBot events are read with the `states/` folder beside their `events/` folder. */
  layout?: "droidbot-event";
}

const file = (path: string): Seed => {
  const raw = readFileSync(join(ROOT, path));
  const bytes = path.endsWith(".gz") ? gunzipSync(raw) : path.endsWith(".zst") ? zstdDecompressSync(raw) : raw;
  return { name: basename(path).replace(/\.(gz|zst)$/, ""), bytes: new Uint8Array(bytes) };
};
const text = (name: string, content: string): Seed => ({ name, bytes: new TextEncoder().encode(content) });

const REAL = "test/fixtures/real";
const DROIDBOT = `${REAL}/android/droidbot`;
const BRAVE = JSON.parse(readFileSync(join(ROOT, REAL, "search/brave/brave_web.json"), "utf8"));

// A search/extract trace, as in test/read-mcp-search.test.ts, built from the real Brave results.
const TRACE = [
  { type: "task", id: "q1", task: "What is a Hello World program?" },
  { type: "search", query: "hello world program", results: BRAVE.web.results.slice(0, 2), thinking: "Start broad." },
  { type: "extract", url: BRAVE.web.results[0].url, text: '# "Hello, World!" program\n\nA program…' },
  { type: "task", id: 2 },
  { type: "extract", url: "https://example.invalid/", error: "HTTP 404 Not Found" },
]
  .map((line) => JSON.stringify(line))
  .join("\n");

/** The fixtures each reader is fuzzed from (found through the tests that read them). */
export const READER_SEEDS: Record<string, Seed[]> = {
  "agentworldbench-jsonl": [file("data/demo/mcp-agentworldbench.jsonl")],
  "os-a11y": [file("test/fixtures/handmade/os/os-trajectories.jsonl")],
  "canonical-jsonl": [file("test/fixtures/records/mixed-bad.jsonl"), file("data/demo/mcp.jsonl.gz"), file("data/demo/swe.jsonl.zst")],
  asciicast: [
    file(`${REAL}/terminal/asciinema-player__input.cast`),
    file(`${REAL}/terminal/asciinema-player__markers-input.cast`),
    file(`${REAL}/terminal/asciinema-player__resizing.cast`),
    file("test/fixtures/handmade/terminal/progress.v1.json"),
    file("test/fixtures/handmade/terminal/session.v3.cast"),
    file("test/fixtures/handmade/terminal/shell-session.v2.cast"),
  ],
  "tmux-log": [file("test/fixtures/handmade/terminal/session.tmux.jsonl")],
  "swe-agent-traj": [file(`${REAL}/swe/swe-agent/function_calling_simple.traj`), file(`${REAL}/swe/swe-agent/ctf_pwn_warmup.traj`)],
  "mini-swe-agent": [file(`${REAL}/swe/mini-swe-agent/local.traj.json`), file(`${REAL}/swe/mini-swe-agent/github_issue.traj.json`)],
  openhands: [
    file(`${REAL}/swe/openhands/trajs_basic_interactions.json`),
    file(`${REAL}/swe/openhands/trajs_basic.json`),
    file(`${REAL}/swe/openhands/resolver_mock_output_legacy.jsonl`),
  ],
  "swe-smith": [file(`${REAL}/swe/swe-smith/ft_xml_example_first_line.jsonl`)],
  browsergym: [file(`${REAL}/web/browsergym/workarena.all-menu_4__experiment_analysis.md`)],
  "uiautomator-xml": [file(`${REAL}/android/mobile-env/window_dump.example.xml`)],
  droidbot: [
    file(`${DROIDBOT}/2016_paypal__device_state_2016-07-15_212930.json`),
    file(`${DROIDBOT}/2016_paypal__droidbot_event.json`),
    { ...file(`${DROIDBOT}/2017_album__event_2017-08-11_155427.json`), layout: "droidbot-event" },
    { ...file(`${DROIDBOT}/2017_album__event_2017-08-11_155422.json`), layout: "droidbot-event" },
  ],
  "mcp-jsonrpc": [
    file(`${REAL}/mcp/go-sdk-conformance/v1.0.0__lifecycle.txtar`),
    file(`${REAL}/mcp/go-sdk-conformance/v1.0.0__bad_requests.txtar`),
    file(`${REAL}/mcp/mcp-spec-examples/CallToolRequest__call-tool-request.json`),
    text(
      "stream.jsonl",
      [
        readFileSync(join(ROOT, REAL, "mcp/mcp-spec-examples/ListToolsRequest__list-tools-request.json"), "utf8"),
        readFileSync(join(ROOT, REAL, "mcp/mcp-spec-examples/ListToolsResultResponse__list-tools-result-response.json"), "utf8"),
      ]
        .map((json) => JSON.stringify(JSON.parse(json)))
        .join("\n"),
    ),
  ],
  "search-api": [
    file(`${REAL}/search/brave/brave_web.json`),
    text("trace.jsonl", TRACE),
    text("responses.jsonl", `${JSON.stringify(BRAVE)}\n${JSON.stringify({ ...BRAVE, type: "news" })}`),
    text("responses.json", JSON.stringify([BRAVE, { ...BRAVE, type: "videos" }])),
  ],
};

/**
 * Writes a case's input where its reader will look: `dir/NAME`, or for a DroidBot event
 * `dir/events/NAME` beside `dir/states/` holding the real 2016 screens under the state_str hashes
 * the 2017 events name (as test/read-trees.test.ts lays them out). Returns the input's path.
 */
export function writeInput(dir: string, seed: Pick<Seed, "name" | "layout">, bytes: Uint8Array): string {
  if (seed.layout !== "droidbot-event") {
    const path = join(dir, seed.name);
    writeFileSync(path, bytes);
    return path;
  }
  mkdirSync(join(dir, "events"));
  mkdirSync(join(dir, "states"));
  const launcher = JSON.parse(readFileSync(join(ROOT, DROIDBOT, "2016_paypal__device_state_2016-07-15_221456.json"), "utf8"));
  const dialog = JSON.parse(readFileSync(join(ROOT, DROIDBOT, "2016_paypal__device_state_2016-07-15_212930.json"), "utf8"));
  const state = (name: string, body: object, stateStr: string) =>
    writeFileSync(join(dir, "states", name), JSON.stringify({ ...body, state_str: stateStr }, null, 2));
  state("state_2017-08-11_155421.json", launcher, "c871d40def92fccd628177c86619eb53");
  state("state_2017-08-11_155423.json", dialog, "08bd71908a03b06087f7bdabc43a7894");
  state("state_2017-08-11_155426.json", launcher, "72eaed0ade1c06067be81d18aa5604af");
  const path = join(dir, "events", seed.name);
  writeFileSync(path, bytes);
  return path;
}
