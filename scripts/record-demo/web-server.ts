/**
 * Serves the recorder's local web app (scripts/record-demo/web-app/) on 127.0.0.1 at a port the
 * system picks. Only the app's own files, no external assets.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

const APP_DIR = fileURLToPath(new URL("web-app/", import.meta.url));
const FILES: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
};

export interface AppServer {
  port: number;
  close(): Promise<void>;
}

export async function serveWebApp(): Promise<AppServer> {
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    const entry = FILES[path];
    if (!entry) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    response.writeHead(200, { "content-type": entry.type, "cache-control": "no-store" }).end(readFileSync(APP_DIR + entry.file));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
