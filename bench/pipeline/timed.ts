/**
 * Runs a command as a subprocess and measures it: wall time here, CPU time and peak RSS from
 * GNU time (`/usr/bin/time`, Debian package `time`). Without GNU time only wall time is known.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const GNU_TIME = "/usr/bin/time";

export interface Timed {
  wallS: number;
  /** user + system CPU seconds of the process and its children; undefined without GNU time. */
  cpuS: number | undefined;
  /** Peak resident set size in MB (10^6 bytes); undefined without GNU time. */
  maxRssMb: number | undefined;
  stdout: string;
}

export const hasGnuTime = () => existsSync(GNU_TIME);

export function timed(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Timed {
  const scratch = mkdtempSync(join(tmpdir(), "lwm-bench-time-"));
  const report = join(scratch, "time.txt");
  const measured = hasGnuTime();
  const [cmd, argv] = measured ? [GNU_TIME, ["-o", report, "-f", "%U %S %M", command, ...args]] : [command, args];
  const started = performance.now();
  const child = spawnSync(cmd, argv, { cwd: options.cwd, env: options.env ?? process.env, encoding: "utf8", maxBuffer: 64 << 20 });
  const wallS = (performance.now() - started) / 1000;
  try {
    if (child.status !== 0) {
      const tail = `${child.stdout ?? ""}${child.stderr ?? ""}`.trim().split("\n").slice(-15).join("\n");
      throw new Error(`${command} ${args.join(" ")} exited with ${child.status ?? child.signal}:\n${tail}`);
    }
    if (!measured) return { wallS, cpuS: undefined, maxRssMb: undefined, stdout: child.stdout };
    // GNU time may print "Command exited with non-zero status" first: the numbers are the last line.
    const [user, system, rssKb] = readFileSync(report, "utf8").trim().split("\n").at(-1)?.split(" ").map(Number) ?? [];
    return { wallS, cpuS: (user ?? 0) + (system ?? 0), maxRssMb: ((rssKb ?? 0) * 1024) / 1e6, stdout: child.stdout };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
