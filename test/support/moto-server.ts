import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { ensurePythonEnv } from "./python-env.ts";

// Credentials the server accepts; tests check they reach no output or log.
export const S3_KEY_ID = "AKIALWMTESTKEY000001";
export const S3_SECRET = "lwm-test-secret-0123456789abcdefghijklmnop";

/** The variables `env()` sets for the S3 client. */
const AWS_KEYS = ["AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"] as const;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

async function waitForServer(url: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`the S3 server at ${url} did not start`);
}

/**
 * moto's server: a real process speaking the S3 REST protocol on loopback
 * (test/python/requirements.txt), for the suites that read and write object storage.
 */
export class MotoServer {
  endpoint = "";
  private process: ChildProcess | undefined;

  async start(): Promise<this> {
    const python = ensurePythonEnv();
    const port = await freePort();
    this.endpoint = `http://127.0.0.1:${port}`;
    this.process = spawn(join(python, "../moto_server"), ["-H", "127.0.0.1", "-p", String(port)], { stdio: "ignore" });
    await waitForServer(this.endpoint);
    return this;
  }

  stop(): void {
    this.process?.kill();
  }

  /** A client for setting up and checking buckets from the test itself. */
  client(endpoint = this.endpoint): S3Client {
    return new S3Client({
      endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: { accessKeyId: S3_KEY_ID, secretAccessKey: S3_SECRET },
    });
  }

  async createBucket(bucket: string): Promise<void> {
    await this.client().send(new CreateBucketCommand({ Bucket: bucket }));
  }

  /**
   * Points this process's S3 client at the server (for code the test runs in process, not in a CLI
   * child); returns the function that puts the environment back as it was.
   */
  useInProcess(): () => void {
    const saved = Object.fromEntries(AWS_KEYS.map((key) => [key, process.env[key]]));
    const env = this.env();
    for (const key of AWS_KEYS) process.env[key] = env[key];
    return () => {
      for (const key of AWS_KEYS) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    };
  }

  /** The environment a CLI child needs to reach the server (`endpoint` may be a fault proxy in front of it). */
  env(endpoint = this.endpoint): NodeJS.ProcessEnv {
    return {
      ...process.env,
      AWS_ENDPOINT_URL: endpoint,
      AWS_ACCESS_KEY_ID: S3_KEY_ID,
      AWS_SECRET_ACCESS_KEY: S3_SECRET,
      AWS_REGION: "us-east-1",
    };
  }
}
