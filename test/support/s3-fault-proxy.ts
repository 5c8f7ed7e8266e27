import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * An HTTP proxy on loopback in front of an S3-compatible server (moto, test/support/moto-server.ts)
 * that forwards every request as it is and can be told to break some of them, deterministically
 * (counters, never chance): answer with 503 SlowDown or 500 InternalError (S3's XML error bodies),
 * reset the TCP connection once a response body reaches a given byte of the object, or hold a
 * request back for a while. A client points AWS_ENDPOINT_URL at `endpoint` (path-style requests:
 * `/bucket/key`, `/bucket?list-type=2`).
 */

/** What a request does, as the proxy sees it. */
export type S3Operation = "list" | "get" | "head" | "put" | "other";

export interface S3Request {
  method: string;
  operation: S3Operation;
  bucket: string;
  key: string;
  /** The request's Range and If-Match headers, when it has them. */
  range?: string;
  ifMatch?: string;
}

export type Fault =
  /** Answer with an S3 error instead of forwarding: 503 SlowDown (throttling) or 500 InternalError. */
  | { kind: "slowdown" | "internal" }
  /**
   * Forward, then reset the connection (TCP RST) when the response body reaches byte `atByte` of
   * the object (an offset in the object, whatever Range the request asked for): the bytes before
   * it are sent (a client that was not reading may lose some, as a reset drops what is in
   * flight), that byte and the rest are not. A response that never reaches it (shorter,
   * or its reader stopped first) is left alone and not counted.
   */
  | { kind: "reset"; atByte: number }
  /** Forward after `ms` milliseconds. */
  | { kind: "delay"; ms: number };

export interface FaultRule {
  /** Which requests: an operation, optionally only for one key (a GET's or HEAD's). Default: every request. */
  operation?: S3Operation;
  key?: string;
  fault: Fault;
  /** How many matching requests it breaks (default 1); `Infinity` for a failure that never ends. */
  times?: number;
}

/** A programmed fault and how many requests it has broken so far. */
export interface InjectedFault {
  readonly rule: FaultRule;
  hits: number;
}

export interface ProxyLogEntry extends S3Request {
  /** The fault applied to it, if any. */
  fault?: Fault["kind"];
}

const ERRORS = {
  slowdown: { status: 503, code: "SlowDown", message: "Please reduce your request rate." },
  internal: { status: 500, code: "InternalError", message: "We encountered an internal error. Please try again." },
} as const;

function classify(req: IncomingMessage): S3Request {
  const url = new URL(req.url ?? "/", "http://proxy");
  const [bucket = "", ...rest] = url.pathname.slice(1).split("/");
  const key = decodeURIComponent(rest.join("/"));
  const method = req.method ?? "GET";
  const operation: S3Operation =
    method === "GET" && key === "" && (url.searchParams.has("list-type") || url.search === "")
      ? "list"
      : method === "GET" && key !== ""
        ? "get"
        : method === "HEAD"
          ? "head"
          : method === "PUT"
            ? "put"
            : "other";
  const range = req.headers.range;
  const ifMatch = req.headers["if-match"];
  return {
    method,
    operation,
    bucket: decodeURIComponent(bucket),
    key,
    ...(range ? { range } : {}),
    ...(typeof ifMatch === "string" ? { ifMatch } : {}),
  };
}

/** The first byte a request asks for (its Range's start; 0 without one). */
function firstByte(range: string | undefined): number {
  const match = range ? /^bytes=(\d+)-/.exec(range) : null;
  return match ? Number(match[1]) : 0;
}

export class S3FaultProxy extends EventEmitter {
  endpoint = "";
  readonly log: ProxyLogEntry[] = [];
  private readonly target: URL;
  private readonly faults: InjectedFault[] = [];
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  /** `target`: the S3 server's endpoint, e.g. `http://127.0.0.1:5000`. */
  constructor(target: string) {
    super();
    this.target = new URL(target);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    if (!address || typeof address === "string") throw new Error("the fault proxy has no port");
    this.endpoint = `http://127.0.0.1:${address.port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Adds a fault; rules are tried in the order added, the first that matches (and has hits left) applies. */
  inject(rule: FaultRule): InjectedFault {
    const injected: InjectedFault = { rule, hits: 0 };
    this.faults.push(injected);
    return injected;
  }

  /** Forgets every fault and the request log. */
  reset(): void {
    this.faults.length = 0;
    this.log.length = 0;
  }

  /** Requests seen so far of one operation (and key). */
  requests(operation: S3Operation, key?: string): ProxyLogEntry[] {
    return this.log.filter((entry) => entry.operation === operation && (key === undefined || entry.key === key));
  }

  private matching(s3: S3Request, kinds: readonly Fault["kind"][]): InjectedFault | undefined {
    return this.faults.find(
      ({ rule, hits }) =>
        hits < (rule.times ?? 1) &&
        kinds.includes(rule.fault.kind) &&
        (rule.operation === undefined || rule.operation === s3.operation) &&
        (rule.key === undefined || rule.key === s3.key),
    );
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const s3 = classify(req);
    const entry: ProxyLogEntry = { ...s3 };
    this.log.push(entry);
    const error = this.matching(s3, ["slowdown", "internal"]);
    if (error) {
      error.hits++;
      entry.fault = error.rule.fault.kind;
      this.emit("fault", entry);
      req.resume();
      req.on("end", () => this.answerError(res, error.rule.fault.kind as keyof typeof ERRORS, s3));
      return;
    }
    const delay = this.matching(s3, ["delay"]);
    if (delay) {
      delay.hits++;
      entry.fault = "delay";
      this.emit("fault", entry);
      setTimeout(() => this.forward(req, res, s3, entry), (delay.rule.fault as { ms: number }).ms);
      return;
    }
    this.forward(req, res, s3, entry);
  }

  private answerError(res: ServerResponse, kind: keyof typeof ERRORS, s3: S3Request): void {
    const { status, code, message } = ERRORS[kind];
    const resource = `/${s3.bucket}${s3.key ? `/${s3.key}` : ""}`;
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><Resource>${resource}</Resource><RequestId>LWMFAULTPROXY</RequestId><HostId>lwm-fault-proxy</HostId></Error>`;
    if (s3.method === "HEAD") res.writeHead(status, { "content-length": "0" }).end();
    else res.writeHead(status, { "content-type": "application/xml", "content-length": Buffer.byteLength(body) }).end(body);
  }

  private forward(req: IncomingMessage, res: ServerResponse, s3: S3Request, entry: ProxyLogEntry): void {
    const upstream = request(
      {
        host: this.target.hostname,
        port: this.target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        // A client that hangs up (a reader that stopped early) ends the upstream request too.
        res.on("close", () => answer.destroy());
        const ok = answer.statusCode !== undefined && answer.statusCode < 300;
        if (!ok || s3.operation !== "get" || !this.faults.some(({ rule }) => rule.fault.kind === "reset")) {
          answer.pipe(res);
          return;
        }
        // Object offset of the next body byte; a reset rule cuts the body when it reaches its byte.
        let position = firstByte(s3.range);
        let cut = false;
        answer.on("data", (chunk: Buffer) => {
          if (cut) return;
          const reset = this.faults.find(
            ({ rule, hits }) =>
              hits < (rule.times ?? 1) &&
              rule.fault.kind === "reset" &&
              (rule.operation === undefined || rule.operation === "get") &&
              (rule.key === undefined || rule.key === s3.key) &&
              rule.fault.atByte >= position &&
              rule.fault.atByte < position + chunk.length,
          );
          if (!reset) {
            position += chunk.length;
            if (!res.write(chunk)) {
              answer.pause();
              res.once("drain", () => answer.resume());
            }
            return;
          }
          cut = true;
          reset.hits++;
          entry.fault = "reset";
          this.emit("fault", entry);
          answer.destroy();
          const socket = res.socket;
          // The bytes before the cut are sent; a moment later the connection is reset (RST), not
          // closed. As on any network, a reset drops what is still in flight: a client that was
          // not reading (backpressure) gets fewer bytes than were written.
          res.write(chunk.subarray(0, (reset.rule.fault as { atByte: number }).atByte - position), () =>
            setTimeout(() => socket?.resetAndDestroy(), 50),
          );
        });
        answer.on("end", () => {
          if (!cut) res.end();
        });
      },
    );
    upstream.on("error", (err) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`fault proxy: ${err.message}`);
    });
    req.pipe(upstream);
  }
}
