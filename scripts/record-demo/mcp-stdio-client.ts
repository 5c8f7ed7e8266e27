/**
 * A minimal MCP client over stdio for the recorder: starts a server as a child process, speaks
 * newline-delimited JSON-RPC 2.0 with it, and logs every message in wire order with its sender.
 * Written by hand (not the SDK's Client) so that the recording holds exactly the requests we
 * chose to send, including deliberately bad ones the SDK client would refuse to build.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export type Rpc = Record<string, unknown>;

/** One message as it crossed the pipe; `direction` names the sender (the MCP reader's layout). */
export interface WireMessage {
  direction: "client" | "server";
  message: Rpc;
}

/** A request the client sent and the reply the server gave to it (matched by id). */
export interface Exchange {
  request: Rpc;
  reply: Rpc;
}

/** How the client answers a request the server sends it (`roots/list`, …). */
export type ServerRequestHandler = (request: Rpc) => { result: unknown } | { error: { code: number; message: string } };

export interface StdioServer {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** Replies can take a while only for the long-running tool; anything slower means a hang. */
const REPLY_TIMEOUT_MS = 10_000;

export class McpStdioClient {
  readonly wire: WireMessage[] = [];
  readonly exchanges: Exchange[] = [];
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<string, (reply: Rpc) => void>();
  private readonly waiters: { match: (message: Rpc) => boolean; resolve: (message: Rpc) => void }[] = [];
  private readonly onServerRequest: ServerRequestHandler;
  private nextId = 1;
  private stderr = "";

  constructor(server: StdioServer, onServerRequest: ServerRequestHandler) {
    this.onServerRequest = onServerRequest;
    this.child = spawn(server.command, server.args, { cwd: server.cwd, env: server.env, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr += chunk;
    });
    createInterface({ input: this.child.stdout }).on("line", (line) => this.receive(line));
  }

  /** Sends a request with the next integer id and resolves with the server's reply to it. */
  request(method: string, params?: Rpc): Promise<Rpc> {
    const id = this.nextId++;
    const request: Rpc = { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no reply to ${method} (id ${id}) in ${REPLY_TIMEOUT_MS} ms; server stderr:\n${this.stderr}`)),
        REPLY_TIMEOUT_MS,
      );
      this.pending.set(JSON.stringify(id), (reply) => {
        clearTimeout(timer);
        this.exchanges.push({ request, reply });
        resolve(reply);
      });
      this.send(request);
    });
  }

  notify(method: string, params?: Rpc): void {
    this.send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
  }

  /**
   * Resolves with the first server message (from now on) that `match` accepts: used to wait for
   * messages the server sends on its own timer, so that their place in the recording is fixed.
   */
  waitForServer(what: string, match: (message: Rpc) => boolean): Promise<Rpc> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server never sent ${what}; stderr:\n${this.stderr}`)), REPLY_TIMEOUT_MS);
      this.waiters.push({
        match,
        resolve: (message) => {
          clearTimeout(timer);
          resolve(message);
        },
      });
    });
  }

  /** Closes the server's stdin (the stdio transport's end of session) and waits for it to exit. */
  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGTERM"), 2000);
    await exited;
    clearTimeout(timer);
  }

  private send(message: Rpc): void {
    this.wire.push({ direction: "client", message });
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  private receive(line: string): void {
    if (line.trim() === "") return;
    const message = JSON.parse(line) as Rpc;
    this.wire.push({ direction: "server", message });
    const waiter = this.waiters.findIndex((w) => w.match(message));
    if (waiter !== -1) this.waiters.splice(waiter, 1)[0]?.resolve(message);
    if (typeof message.method === "string") {
      // A server request wants an answer; a notification does not.
      if ("id" in message) this.send({ jsonrpc: "2.0", id: message.id, ...this.onServerRequest(message) });
      return;
    }
    const key = JSON.stringify(message.id);
    const settle = this.pending.get(key);
    if (!settle) throw new Error(`reply to no pending request: ${line}`);
    this.pending.delete(key);
    settle(message);
  }
}
