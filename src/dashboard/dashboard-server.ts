import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { UserError } from "../core/errors.ts";
import type { Dashboard } from "./build-dashboard.ts";
import type { ExampleFilter } from "./example-turns.ts";

/** Most example rows one request may ask for. */
const MAX_PAGE = 200;

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "content-type": `${type}; charset=utf-8`, "cache-control": "no-store", "x-content-type-options": "nosniff" });
  res.end(body);
}

function intParam(params: URLSearchParams, name: string, fallback: number, max: number): number {
  const value = Number(params.get(name) ?? fallback);
  if (!Number.isInteger(value) || value < 0 || value > max) throw new RangeError(`${name} must be an integer in 0…${max}`);
  return value;
}

/** `/api/examples?run&domain&class&decision&changed&offset&limit`: a page of any turns, tokens included. */
async function examples(dashboard: Dashboard, params: URLSearchParams): Promise<string> {
  const run = intParam(params, "run", 0, dashboard.runs.length - 1);
  const decision = params.get("decision") ?? "";
  if (decision !== "" && decision !== "kept" && decision !== "masked") throw new RangeError("decision must be kept, masked or empty");
  const filter: ExampleFilter = {
    domain: params.get("domain") ?? "",
    class: params.get("class") ?? "",
    decision,
    changed: params.get("changed") === "1",
  };
  const page = await dashboard.examples(
    run,
    filter,
    intParam(params, "limit", 50, MAX_PAGE),
    intParam(params, "offset", 0, Number.MAX_SAFE_INTEGER),
  );
  return JSON.stringify(page);
}

/**
 * Serves the page (built once, with its data inline) and the example API, which queries the
 * stats table and shards on demand so every turn can be browsed, not only the embedded sample.
 */
export function startDashboardServer(
  dashboard: Dashboard,
  page: string,
  dataJson: string,
  options: { host: string; port: number },
): Promise<{ server: Server; url: string }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "text/plain", "only GET\n");
    if (url.pathname === "/" || url.pathname === "/index.html") return send(res, 200, "text/html", page);
    if (url.pathname === "/api/data") return send(res, 200, "application/json", dataJson);
    if (url.pathname === "/api/examples") {
      examples(dashboard, url.searchParams).then(
        (body) => send(res, 200, "application/json", body),
        (err: Error) => send(res, err instanceof RangeError ? 400 : 500, "text/plain", `${err.message}\n`),
      );
      return;
    }
    send(res, 404, "text/plain", `not found: ${url.pathname}\n`);
  });
  return new Promise((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        err.code === "EADDRINUSE"
          ? new UserError(`port ${options.port} on ${options.host} is in use; choose another with --port (0 picks a free one)`)
          : err,
      ),
    );
    server.listen(options.port, options.host, () => {
      const address = server.address() as AddressInfo;
      const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
      resolve({ server, url: `http://${host}:${address.port}/` });
    });
  });
}
