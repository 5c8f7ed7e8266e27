import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { gunzipSync, zstdDecompressSync } from "node:zlib";
import { ROOT } from "../helpers.ts";
import { sampleCrushDbBytes } from "../support/crush-db.ts";
import { sampleCursorDbBytes } from "../support/cursor-db.ts";
import { sampleWarpDbBytes } from "../support/warp-db.ts";
import { sampleZedDbBytes } from "../support/zed-db.ts";

/** An input of one format, decompressed: the starting point of mutations. */
export interface Seed {
  name: string;
  bytes: Uint8Array;
  /**
   * DroidBot events are read with the `states/` folder beside their `events/` folder; a
   * terminal-bench trial's results.json (`terminal-bench:<trial folder>`) with that trial's other
   * files (agent.cast, commands.txt, panes) beside it. An OpenCode storage file
   * (`opencode:<storage folder>:<its folder in it>`) is read inside a copy of its storage folder.
   */
  layout?: "droidbot-event" | `terminal-bench:${string}` | `opencode:${string}`;
}

const file = (path: string): Seed => {
  const raw = readFileSync(join(ROOT, path));
  const bytes = path.endsWith(".gz") ? gunzipSync(raw) : path.endsWith(".zst") ? zstdDecompressSync(raw) : raw;
  return { name: basename(path).replace(/\.(gz|zst)$/, ""), bytes: new Uint8Array(bytes) };
};
const text = (name: string, content: string): Seed => ({ name, bytes: new TextEncoder().encode(content) });

/** A JSONL file's rows as pandas `DataFrame.to_json(orient=…)` writes them (orient "columns" or "index"). */
function pandasFrame(name: string, orient: "columns" | "index", jsonl: string): Seed {
  const rows = readFileSync(join(ROOT, jsonl), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const frame: Record<string, Record<string, unknown>> = {};
  rows.forEach((row, index) => {
    if (orient === "index") frame[String(index)] = row;
    else
      for (const [column, cell] of Object.entries(row)) {
        frame[column] ??= {};
        frame[column][String(index)] = cell;
      }
  });
  return text(name, JSON.stringify(frame));
}

const DEMO = "data/demo";
const ANDROID = `${DEMO}/android`;
/** A Brave-layout response the project's local search service gave (data/demo/PROVENANCE.md). */
const BRAVE = JSON.parse(readFileSync(join(ROOT, DEMO, "search/brave-web-http-304.json"), "utf8"));

/** Every file of a demo folder whose name matches, sorted. */
const demoFiles = (folder: string, pattern: RegExp): Seed[] =>
  readdirSync(join(ROOT, DEMO, folder))
    .filter((name) => pattern.test(name))
    .sort()
    .map((name) => file(`${DEMO}/${folder}/${name}`));

/** The terminal-bench run the project recorded (test/fixtures/terminal-bench/record-run.ts) and its trial folders. */
const TB_RUN = "test/fixtures/terminal-bench/2026-01-15__12-00-00";
const TB_TRIALS = readdirSync(join(ROOT, TB_RUN), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((task) => `${TB_RUN}/${task.name}/${readdirSync(join(ROOT, TB_RUN, task.name))[0]}`)
  .sort();

/** OpenCode's hand-made storage folders (test/fixtures/handmade/opencode/). */
const OPENCODE = "test/fixtures/handmade/opencode";
const OPENCODE_LEGACY = "project/home-dev-scripts/storage/session";
/** A file of an OpenCode storage folder (`storage` or `legacy` there), to be read inside a copy of that folder. */
const openCodeStored = (folder: string, rel: string): Seed => ({
  ...file(`${OPENCODE}/${folder}/${rel}`),
  layout: `opencode:${OPENCODE}/${folder}:${rel.slice(0, rel.lastIndexOf("/"))}`,
});

/**
 * The inputs each reader is fuzzed from: the recorded demo data and the hand-made fixtures (the
 * project's own, so the campaign runs the same on a clone without ../shared).
 */
export const READER_SEEDS: Record<string, Seed[]> = {
  "text-jsonl": [
    file("data/knowledge/handbook.jsonl"),
    // CSV rows with a `text` column: `;`-separated, damaged rows, bare CR line ends, a header alone, UTF-16 (Excel's "Unicode Text").
    file("test/fixtures/generated/csv/text-rows-semicolon.csv"),
    file("test/fixtures/generated/csv/damaged.csv"),
    text("text-rows-cr.csv", readFileSync(join(ROOT, "test/fixtures/generated/csv/text-rows.csv"), "utf8").replaceAll("\r\n", "\r")),
    text("header-only.csv", "id,text,topic,title\r\n"),
    {
      name: "sheet-utf16.txt",
      bytes: new Uint8Array(
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("id\ttext\r\na\tfirst, one\r\nb\tsecond\r\n", "utf16le")]),
      ),
    },
  ],
  adp: [
    file("test/fixtures/handmade/adp/agenttuning-os.std.jsonl"),
    file("test/fixtures/handmade/adp/swe-gym-openhands.std.json"),
    file("test/fixtures/handmade/adp/go-browse.std.json"),
    file("test/fixtures/handmade/adp/web-and-tools.std.jsonl"),
  ],
  "text-parquet": [file("data/knowledge/explainers.parquet")],
  "agentworldbench-jsonl": [file(`${DEMO}/mcp/everything-agentworldbench.jsonl`)],
  "os-a11y": [file("test/fixtures/handmade/os/os-trajectories.jsonl")],
  "canonical-jsonl": [
    file("test/fixtures/records/mixed-bad.jsonl"),
    file(`${DEMO}/mcp/everything.jsonl.gz`),
    file(`${DEMO}/swe/swe.jsonl.zst`),
  ],
  asciicast: [
    ...demoFiles("terminal", /\.cast$/),
    file("test/fixtures/handmade/terminal/markers.v2.cast"),
    file("test/fixtures/handmade/terminal/progress.v1.json"),
    file("test/fixtures/handmade/terminal/session.v3.cast"),
    file("test/fixtures/handmade/terminal/shell-session.v2.cast"),
  ],
  "tmux-log": [file("test/fixtures/handmade/terminal/session.tmux.jsonl"), ...demoFiles("terminal", /\.tmux\.jsonl$/)],
  script: [
    file("test/fixtures/recorded/script/session.typescript"),
    file("test/fixtures/recorded/script/plain.typescript"),
    file("test/fixtures/recorded/script/oneshot.typescript"),
    file("test/fixtures/recorded/script/cut.typescript"),
    file("test/fixtures/recorded/script/append-all.typescript"),
  ],
  ttyrec: [
    file("test/fixtures/recorded/ttyrec/session.ttyrec"),
    file("test/fixtures/recorded/ttyrec/termrec.ttyrec"),
    file("test/fixtures/recorded/ttyrec/oneshot.ttyrec"),
  ],
  "swe-agent-traj": [...demoFiles("swe", /\.traj$/), file("test/fixtures/handmade/swe/swe-agent-0x__greet.traj")],
  "mini-swe-agent": demoFiles("swe", /\.traj\.json$/),
  openhands: [
    ...demoFiles("swe", /^openhands__.*\.json$/),
    file("test/fixtures/handmade/swe/openhands-output-legacy.jsonl"),
    file("test/fixtures/handmade/openhands-sessions/sessions/3f9a2c7e1b5d4e8fa6c0d2b4e6f8a1c3/events/3.json"),
    file(
      "test/fixtures/handmade/openhands-sessions/conversations/9d4e2a6c8b0f4c1e9a3d5b7f1c2e4a6b/events/event-00002-0c4f8e2a-6b1d-4f3a-9e5c-000000000002.json",
    ),
  ],
  "swe-smith": demoFiles("swe", /^swe-smith__.*\.jsonl$/),
  browsergym: demoFiles("web", /experiment_analysis\.md$/),
  "uiautomator-xml": demoFiles("android", /\.xml$/),
  droidbot: [
    file(`${ANDROID}/state_2026-01-15_120000.json`),
    file("test/fixtures/handmade/android/device_state_2026-01-15_120000.json"),
    file("test/fixtures/handmade/android/droidbot_event.json"),
    ...demoFiles("android", /^event_.*\.json$/).map((seed): Seed => ({ ...seed, layout: "droidbot-event" })),
  ],
  "mcp-jsonrpc": [
    file(`${DEMO}/mcp/everything-tools.jsonl`),
    file(`${DEMO}/mcp/everything-tools.txtar`),
    file("test/fixtures/handmade/mcp/impatient-client.txtar"),
  ],
  "terminal-bench": [
    ...TB_TRIALS.map((trial): Seed => ({ ...file(`${trial}/results.json`), layout: `terminal-bench:${trial}` })),
    file(`${TB_RUN}/results.json`),
  ],
  atif: [
    file("test/fixtures/handmade/atif/harbor-job/count-errors__Vb3kQ9x/agent/trajectory.json"),
    file("test/fixtures/handmade/atif/harbor-job/swebench-calc-1__Qx7wP2d/agent/trajectory.json"),
    file("test/fixtures/handmade/atif/multimodal-subagent.v1.8.json"),
  ],
  "codex-rollout": [
    file("test/fixtures/handmade/codex-rollout/rollout-2025-10-29T09-14-03-0199a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b.jsonl"),
    file("test/fixtures/handmade/codex-rollout/rollout-2025-06-02T14-30-00-5f0c7e1a-1b2c-4d3e-9f40-a1b2c3d4e5f6.jsonl"),
    file("test/fixtures/handmade/codex-rollout/rollout-2026-03-04T08-00-00-019c0d1e-2f30-7415-a617-28394a5b6c7d.jsonl"),
  ],
  "claude-code": [
    file("test/fixtures/handmade/claude-code/session-rewind-compact.jsonl"),
    file("test/fixtures/handmade/claude-code/session-v1-task-sidechain.jsonl"),
    file("test/fixtures/handmade/claude-code/agent-7f3e9a21.jsonl"),
    file("test/fixtures/handmade/claude-code/stream-json-web.jsonl"),
  ],
  "chat-tool-rows": [
    file("test/fixtures/handmade/chat-tool-rows/openai-swe.jsonl"),
    file("test/fixtures/handmade/chat-tool-rows/amp-thread-T-5f1e2d3c-4b5a-4978-8a6b-1c2d3e4f5a6b.json"),
    file("test/fixtures/handmade/chat-tool-rows/openai-functions.jsonl"),
    file("test/fixtures/handmade/chat-tool-rows/hermes.jsonl"),
    file("test/fixtures/handmade/chat-tool-rows/sharegpt-llamafactory.jsonl"),
    file("test/fixtures/handmade/chat-tool-rows/toucan-rows.json"),
    file("test/fixtures/handmade/chat-tool-rows/single-row.json"),
    file("test/fixtures/handmade/chat-tool-rows/gemini-contents.jsonl"),
    file("test/fixtures/handmade/chat-tool-rows/openai-batch-joined.jsonl"),
    file("test/fixtures/handmade/chat-tool-rows/ai-sdk-messages.jsonl"),
    file("test/fixtures/search-agents/rollout-groups.jsonl"),
    pandasFrame("frame-columns.json", "columns", "test/fixtures/handmade/chat-tool-rows/openai-swe.jsonl"),
    pandasFrame("frame-index.json", "index", "test/fixtures/handmade/chat-tool-rows/openai-functions.jsonl"),
    // Row files of other layouts, read by the rows' reader: Arrow IPC (datasets' save_to_disk), CSV.
    file("test/fixtures/generated/hf-datasets/chat-stream.arrow"),
    file("test/fixtures/generated/csv/chat-rows.csv"),
    // CSV variants: bare CR line ends; Excel's `sep=,` first line and a ragged row after the good ones; TSV.
    text("chat-rows-cr.csv", readFileSync(join(ROOT, "test/fixtures/generated/csv/chat-rows.csv"), "utf8").replaceAll("\r\n", "\r")),
    text("chat-rows-sep.csv", `sep=,\r\n${readFileSync(join(ROOT, "test/fixtures/generated/csv/chat-rows.csv"), "utf8")}x,y\r\n`),
    file("test/fixtures/generated/csv/swe-rows.tsv"),
  ],
  "hf-dataset-metadata": [
    file("test/fixtures/generated/hf-datasets/saved-chat/state.json"),
    file("test/fixtures/generated/hf-datasets/saved-chat/dataset_info.json"),
    file("test/fixtures/generated/hf-datasets/saved-dict/dataset_dict.json"),
    file("test/fixtures/generated/hf-datasets/hub-snapshot/README.md"),
  ],
  osworld: [
    file(
      "test/fixtures/handmade/osworld/results/computer_13/screenshot_a11y_tree/claude-3-7-sonnet/chrome/7b1f0e22-3c4d-4e5f-8a9b-0c1d2e3f4a5b/traj.jsonl",
    ),
    file("test/fixtures/handmade/osworld/results/pyautogui/screenshot/gpt-4o/gimp/9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b/traj.jsonl"),
  ],
  "mcp-cassette": [
    file("test/fixtures/handmade/mcp-cassette/agent-vcr-session.vcr"),
    file("test/fixtures/handmade/mcp-cassette/mcp-recorder-session.json"),
    file("test/fixtures/handmade/mcp-cassette/bare-interactions.json"),
  ],
  "mcp-server-log": [
    file("test/fixtures/handmade/mcp-server-log/mcp-server-weather.log"),
    file("test/fixtures/handmade/mcp-server-log/mcp.log"),
  ],
  webarena: [
    file("test/fixtures/handmade/webarena/trajectory-combined.json"),
    file("test/fixtures/handmade/webarena/webarena-alternating.jsonl"),
    file("test/fixtures/handmade/webarena/agentlab-steps.json"),
    file("test/fixtures/handmade/webarena/nnetnav-rows.json"),
  ],
  mind2web: [
    file("test/fixtures/handmade/mind2web/train-tasks.json"),
    file("test/fixtures/handmade/mind2web/multimodal-rows.jsonl"),
    file("test/fixtures/handmade/mind2web/agentinstruct-conversations.json"),
  ],
  "browser-use": [
    file("test/fixtures/handmade/browser-use/agent-history-v0.1.json"),
    file("test/fixtures/handmade/browser-use/agent-history-v0.7.json"),
    file("test/fixtures/handmade/browser-use/runs.jsonl"),
  ],
  "aider-history": [
    file("test/fixtures/handmade/aider/two-runs.aider.chat.history.md"),
    file("test/fixtures/handmade/aider/udiff-echoed-output.aider.chat.history.md"),
  ],
  cline: [
    file("test/fixtures/handmade/cline/1718000000000/api_conversation_history.json"),
    file("test/fixtures/handmade/cline/roo-0197a1b2-native/api_conversation_history.json"),
    file("test/fixtures/handmade/cline/1718000000000/ui_messages.json"),
  ],
  goose: [file("test/fixtures/handmade/goose/20250612_093000.jsonl")],
  "factory-droid": [file("test/fixtures/handmade/factory-droid/-home-dev-todo-api/3f6b2a10-8c4d-4e5f-9a7b-1c2d3e4f5a6b.jsonl")],
  "chat-message-lines": [
    file("test/fixtures/handmade/kimi-cli/sessions/8f14e45fceea167a/0d3c7b52-6a91-4f5e-b1c2-9e8d7a6b5c4d/context.jsonl"),
    file("test/fixtures/handmade/mistral-vibe/logs/session/20251201_101500_8c1f2a3b/messages.jsonl"),
  ],
  pi: [
    file("test/fixtures/handmade/pi/2025-11-20T09-00-00-000Z_7c0a9e52-5b1e-4d3f-9a55-2f4c1d8e6b01.jsonl"),
    file("test/fixtures/handmade/pi/json-mode-2025-11-21T14-02-11.jsonl"),
  ],
  opencode: [
    file(`${OPENCODE}/export/ses_4a9f0e21bffeQm7Rt2Vx8Zc3Kd.json`),
    file(`${OPENCODE}/api/ses_4a9f0e21bffeQm7Rt2Vx8Zc3Kd-messages.json`),
    // Storage files, each read inside a copy of its folder: a session file, a message file, a tool part, a MessageV1, a legacy part.
    openCodeStored("storage", "session/e0b1c2d3f4a5968778695a4b3c2d1e0f9a8b7c6d/ses_4b2e7d10bffeNo3Pq6Rs9Tu2Vw.json"),
    openCodeStored("storage", "message/ses_4b2e7d10bffeNo3Pq6Rs9Tu2Vw/msg_9a8b7c600003Gh2Jk5Lm8Np1Qr.json"),
    openCodeStored("storage", "part/msg_9a8b7c600003Gh2Jk5Lm8Np1Qr/prt_9a8b7c610009St4Uv7Wx0Yz3Ab.json"),
    openCodeStored("legacy", `${OPENCODE_LEGACY}/message/ses_7f3a1b20bffeAa1Bb2Cc3Dd4Ee/msg_8c9d0e10a002Qq5Rr6Ss7Tt8Uu.json`),
    openCodeStored(
      "legacy",
      `${OPENCODE_LEGACY}/part/ses_7f39f000bffeVv9Ww8Xx7Yy6Zz/msg_8d0e1f20a002Kl5Mn4Op3Qr2St/prt_8d0e1f21a003Op9Qr0St1Uv2Wx.json`,
    ),
    // OpenCode ≥ 1.2's SQLite database (test/fixtures/generated/opencode-db/make-db.ts): mutated pages, truncation, compression.
    file("test/fixtures/generated/opencode-db/opencode.db"),
  ],
  // Crush's SQLite store, written with Crush's DDL (test/support/crush-db.ts): mutated pages, truncation, compression.
  crush: [{ name: "crush.db", bytes: sampleCrushDbBytes() }],
  // Cursor's conversation store, written in its key-value layout (test/support/cursor-db.ts): mutated pages, truncation, compression.
  cursor: [{ name: "state.vscdb", bytes: sampleCursorDbBytes() }],
  // Zed's threads database (test/support/zed-db.ts): zstd-compressed and plain JSON threads.
  zed: [{ name: "threads.db", bytes: sampleZedDbBytes() }],
  // The Warp terminal's warp.sqlite (test/support/warp-db.ts): command blocks of two panes.
  warp: [{ name: "warp.sqlite", bytes: sampleWarpDbBytes() }],
  "inspect-log": [file("test/fixtures/handmade/inspect/2025-06-12T10-00-00+00-00_ctf-find-flag_EvAl123.json")],
  // τ²-bench: a monolithic results file (retail), a dir-format run's simulation file and its metadata-only results.json (telecom).
  "tau2-bench": [
    file("test/fixtures/handmade/tau2-bench/simulations/20250701_103000_retail_llm_agent_gpt-4.1-mini_user_simulator_gpt-4.1-mini.json"),
    file("test/fixtures/handmade/tau2-bench/telecom-run/simulations/2c6a91f0-58b3-4d7e-a1c2-93f0d4e87b15.json"),
    file("test/fixtures/handmade/tau2-bench/telecom-run/results.json"),
  ],
  "otel-traces": [
    file("test/fixtures/handmade/otel/genai-semconv.jsonl"),
    file("test/fixtures/handmade/otel/openinference.jsonl"),
    file("test/fixtures/handmade/otel/legacy-events.json"),
    // OTLP log exports (GenAI events), spans and logs together, a JSON array of exports, Jaeger and Zipkin JSON.
    file("test/fixtures/handmade/otel/genai-events.logs.jsonl"),
    file("test/fixtures/handmade/otel/inference-details.logs.json"),
    file("test/fixtures/handmade/otel/spans-and-logs.jsonl"),
    file("test/fixtures/handmade/otel/otlp-array.json"),
    file("test/fixtures/handmade/otel/jaeger-api.json"),
    file("test/fixtures/handmade/otel/jaeger-ui-download.json"),
    file("test/fixtures/handmade/otel/zipkin-v2.json"),
    file("test/fixtures/handmade/otel/zipkin-traces.json"),
    // Tempo's and Jaeger api_v3's answers (OTLP in an envelope, a stream of pretty-printed values), bare OTLP spans, Python's console spans.
    file("test/fixtures/handmade/otel/tempo-batches.json"),
    file("test/fixtures/handmade/otel/tempo-v2.json"),
    file("test/fixtures/handmade/otel/jaeger-v3-stream.json"),
    file("test/fixtures/handmade/otel/otlp-spans.jsonl"),
    file("test/fixtures/handmade/otel/python-console.txt"),
  ],
  "langsmith-runs": [
    file("test/fixtures/handmade/langsmith/langgraph-react-agent.jsonl"),
    file("test/fixtures/handmade/langsmith/traceable-openai.json"),
    file("test/fixtures/handmade/langsmith/runs-query.json"),
    file("test/fixtures/handmade/langsmith/agent-executor-child-runs.json"),
    file("test/fixtures/handmade/langsmith/dataset-examples.jsonl"),
  ],
  "langfuse-traces": [file("test/fixtures/handmade/langfuse/observations-api.json"), file("test/fixtures/handmade/langfuse/traces.jsonl")],
  "gemini-cli": [
    file("test/fixtures/handmade/gemini-cli/session-2025-12-02T09-00-4b1d2c3e.jsonl"),
    file("test/fixtures/handmade/gemini-cli/checkpoint-port.json"),
    file("test/fixtures/handmade/gemini-cli/logs.json"),
    file("test/fixtures/handmade/gemini-cli/qwen-code/4c1e9a7b-2d3f-4e5a-8b6c-7d8e9f0a1b2c.jsonl"),
  ],
  "copilot-cli": [
    file("test/fixtures/handmade/copilot-cli/session-state/6f1d2c3b-4a5e-4f60-8b7c-9d0e1f2a3b4c/events.jsonl"),
    file("test/fixtures/handmade/copilot-cli/session-state/0b9e8d7c-6a5b-4c3d-9e2f-1a0b9c8d7e6f.jsonl"),
    file("test/fixtures/handmade/copilot-cli/vscode-transcripts/5e7a9c1b-3d5f-4a7c-9e1b-3d5f7a9c1b3d.jsonl"),
  ],
  continue: [
    file("test/fixtures/handmade/continue/sessions/2d7f4a1c-8e3b-4c6d-9a2f-5b1e7c3d9f40.json"),
    file("test/fixtures/handmade/continue/sessions/7b3e9c2a-4f1d-4e8b-a6c5-0d9f2e1b3a7c.json"),
  ],
  "copilot-chat": [
    file(
      "test/fixtures/handmade/copilot-chat/workspaceStorage/6c3f0a9e2b4d4e1f8a7c5b3d2e1f0a9b/chatSessions/3b9d6f2e-7a41-4c8e-9f05-2d6e8a1c4b70.json",
    ),
    file(
      "test/fixtures/handmade/copilot-chat/workspaceStorage/6c3f0a9e2b4d4e1f8a7c5b3d2e1f0a9b/chatSessions/9c2e4a6b-1d3f-4e5a-8b7c-0d2e4f6a8b1c.jsonl",
    ),
    file("test/fixtures/handmade/copilot-chat/exports/copilot-chat-export.json"),
  ],
  "android-in-the-wild": [
    file("test/fixtures/handmade/android-in-the-wild/episodes.jsonl"),
    file("test/fixtures/handmade/android-in-the-wild/episode-array.json"),
    file("test/fixtures/handmade/android-in-the-wild/interleaved.jsonl"),
  ],
  "android-control": [
    file("test/fixtures/handmade/android-control/episodes.jsonl"),
    file("test/fixtures/handmade/android-control/episodes.json"),
  ],
  "droidbot-utg": [file("test/fixtures/handmade/droidbot-utg/run-2026-02-03/utg.js")],
  "search-api": [
    ...demoFiles("search", /\.json$/),
    file(`${DEMO}/search/agent-trace.jsonl`),
    text("responses.jsonl", `${JSON.stringify(BRAVE)}\n${JSON.stringify({ ...BRAVE, type: "news" })}`),
    text("responses.json", JSON.stringify([BRAVE, { ...BRAVE, type: "videos" }])),
    file("test/fixtures/handmade/search-apis/serper.json"),
    file("test/fixtures/handmade/search-apis/tavily.json"),
    file("test/fixtures/handmade/search-apis/searxng.json"),
    file("test/fixtures/handmade/search-apis/errors.jsonl"),
  ],
};

/**
 * Writes a case's input where its reader will look: `dir/NAME`, or for a DroidBot event
 * `dir/events/NAME` beside `dir/states/` holding the demo's recorded states, which the demo's
 * events name by their state_str. Returns the input's path.
 */
export function writeInput(dir: string, seed: Pick<Seed, "name" | "layout">, bytes: Uint8Array): string {
  if (seed.layout?.startsWith("terminal-bench:")) {
    // The trial's folder under <run>/<task>/, results.json replaced by the case's bytes.
    const trial = join(dir, "run", "task", "trial");
    cpSync(join(ROOT, seed.layout.slice("terminal-bench:".length)), trial, { recursive: true });
    const path = join(trial, seed.name);
    writeFileSync(path, bytes);
    return path;
  }
  if (seed.layout?.startsWith("opencode:")) {
    // The storage folder copied, the file replaced by the case's bytes (read with its session's other files).
    const [, folder, rel] = seed.layout.split(":") as [string, string, string];
    const store = join(dir, "store");
    cpSync(join(ROOT, folder), store, { recursive: true });
    const path = join(store, rel, seed.name);
    writeFileSync(path, bytes);
    return path;
  }
  if (seed.layout !== "droidbot-event") {
    const path = join(dir, seed.name);
    writeFileSync(path, bytes);
    return path;
  }
  mkdirSync(join(dir, "events"));
  mkdirSync(join(dir, "states"));
  for (const name of readdirSync(join(ROOT, ANDROID)).filter((n) => n.startsWith("state_"))) {
    writeFileSync(join(dir, "states", name), readFileSync(join(ROOT, ANDROID, name)));
  }
  const path = join(dir, "events", seed.name);
  writeFileSync(path, bytes);
  return path;
}
