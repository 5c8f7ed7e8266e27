/**
 * Records the search demo data: starts the local search service (scripts/record-demo/
 * search-service.ts, over the hand-written pages in search-docs/), plays scripted research tasks
 * against it with real HTTP requests, and writes to data/demo/search/:
 *
 *   brave-web-git-reset.json     the service's Brave-layout response to the first search, as sent (one line)
 *   brave-web-http-304.json      the response to the second search, pretty-printed (4 spaces)
 *   agent-trace.jsonl            the tasks as search/extract trace lines (task, search, extract steps),
 *                                built from the responses; one extract gets a 404
 *
 * Run: npx node scripts/record-demo/search.ts   (or npm run record:demo -- search)
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { DEMO_DIR, writeDemoFile } from "./common.ts";
import { loadDocuments } from "./search-docs.ts";
import { startSearchService } from "./search-service.ts";

/** Results the agent asks for per search. */
const COUNT = 5;

type Step =
  | { search: string; thinking?: string }
  /** Extract the n-th result (0-based) of the task's latest search, or a given URL. */
  | { extract: number | string; thinking?: string };

interface ResearchTask {
  id: string;
  task: string;
  steps: Step[];
  /** Where to save the raw response of the task's first search, if anywhere. */
  saveFirstResponse?: { file: string; indent?: number };
}

const TASKS: ResearchTask[] = [
  {
    id: "git-undo-reset",
    task: "I ran `git reset --hard` on the wrong branch and my last three commits are gone. How do I get them back?",
    steps: [
      { search: "recover commits after git reset --hard", thinking: "Look for how to undo a hard reset." },
      { extract: 0, thinking: "The reflog article answers this directly; read it." },
    ],
    saveFirstResponse: { file: "brave-web-git-reset.json" },
  },
  {
    id: "http-304",
    task: "What does an HTTP 304 response mean, and what does the client have to send to get one?",
    steps: [
      { search: "304 Not Modified conditional request" },
      { extract: "https://web.example.test/guides/http/304-not-modified", thinking: "Maybe the guide has a page just for 304." },
      { extract: 0, thinking: "No such page. The ETag guide was the top result; read that." },
    ],
    saveFirstResponse: { file: "brave-web-http-304.json", indent: 4 },
  },
  {
    id: "js-emoji-length",
    task: "Why is '😀'.length equal to 2 in JavaScript, and how do I count what a user sees as one character?",
    steps: [
      { search: "JavaScript string length surrogate pair" },
      { extract: 0 },
      { search: "count grapheme clusters", thinking: "Now: how to count user-perceived characters." },
      { extract: 0 },
    ],
  },
];

interface WebResult {
  title: string;
  url: string;
  description: string;
}

const documents = loadDocuments();
const { baseUrl, server } = await startSearchService(documents);
const traceLines: unknown[] = [];
rmSync(join(DEMO_DIR, "search"), { recursive: true, force: true });
try {
  for (const task of TASKS) {
    traceLines.push({ type: "task", id: task.id, task: task.task });
    let latest: WebResult[] = [];
    let searches = 0;
    for (const step of task.steps) {
      const thinking = step.thinking === undefined ? {} : { thinking: step.thinking };
      if ("search" in step) {
        const response = await fetch(`${baseUrl}/res/v1/web/search?${new URLSearchParams({ q: step.search, count: String(COUNT) })}`);
        const body = await response.text();
        if (!response.ok) throw new Error(`search ${JSON.stringify(step.search)}: HTTP ${response.status}: ${body}`);
        if (searches++ === 0 && task.saveFirstResponse) {
          const { file, indent } = task.saveFirstResponse;
          writeDemoFile(`search/${file}`, indent === undefined ? `${body}\n` : `${JSON.stringify(JSON.parse(body), null, indent)}\n`);
        }
        latest = (JSON.parse(body) as { web: { results: WebResult[] } }).web.results;
        // The agent keeps what it reads of each result: title, link and snippet.
        const results = latest.map(({ title, url, description }) => ({ title, url, description }));
        traceLines.push({ type: "search", query: step.search, results, ...thinking });
        continue;
      }
      const url = typeof step.extract === "number" ? latest[step.extract]?.url : step.extract;
      if (url === undefined) throw new Error(`${task.id}: no result ${String(step.extract)} to extract`);
      const response = await fetch(`${baseUrl}/extract?${new URLSearchParams({ url })}`);
      const text = await response.text();
      traceLines.push(
        response.ok
          ? { type: "extract", url, text, ...thinking }
          : { type: "extract", url, error: `HTTP ${response.status} ${response.statusText}`, ...thinking },
      );
    }
  }
} finally {
  server.close();
}
writeDemoFile("search/agent-trace.jsonl", traceLines.map((line) => `${JSON.stringify(line)}\n`).join(""));
