/**
 * Runs a group of commands together under one bash and measures the group: wall time, CPU time
 * of every process (bash's `times` over its waited-for children, threads included, so no GNU
 * time is needed) and, when asked, the peak resident memory of the whole process tree (every
 * descendant's VmRSS summed, sampled from /proc), which is what a machine running N worker
 * processes (datatrove) or one process of N threads (lwm-data) must hold.
 *
 * `times` sees only children that were waited for: worker processes forked by a fork server that
 * exits without reaping them (Python's multiprocessing) escape it. So the sampler also keeps each
 * descendant's last-seen CPU from /proc/PID/stat, and the CPU reported is the larger of the two
 * (the sampled sum misses at most one sampling interval of each process's last moments).
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

export interface Measured {
  wallS: number;
  /** The larger of waitedCpuS and sampledCpuS. */
  cpuS: number;
  /** bash's `times`: children it waited for, and their waited-for descendants. */
  waitedCpuS: number;
  /** Each descendant's CPU when last sampled, summed (0 when not sampled). */
  sampledCpuS: number;
  /** Peak of the summed RSS of the group's process tree, bytes (0 when not sampled or no /proc). */
  peakRssBytes: number;
  /** Epoch milliseconds at the start and end, the clock lwm-data's timing log uses. */
  t0: number;
  t1: number;
  stdout: string;
}

const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;
const now = () => performance.timeOrigin + performance.now();

/** Clock ticks per second of /proc/PID/stat's CPU times (USER_HZ: 100 on every Linux port in use). */
const TICKS_PER_S = 100;

interface ProcessRow {
  ppid: number;
  rss: number;
  /** user + system CPU seconds of the process, all its threads. */
  cpu: number;
}

/** Every process's parent, RSS and CPU, from /proc (an empty map where there is no /proc). */
function processTable(): Map<number, ProcessRow> {
  const table = new Map<number, ProcessRow>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return table;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      const rssKb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      // Fields after the command name (which may hold spaces): state is the 3rd, utime the 14th.
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cpu = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
      table.set(Number(name), { ppid, rss: rssKb * 1024, cpu });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return table;
}

/** `root` and all its descendants, with their rows. */
export function processTree(root: number): Map<number, ProcessRow> {
  const table = processTable();
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of table) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const tree = new Map<number, ProcessRow>();
  const todo = [root];
  while (todo.length > 0) {
    const pid = todo.pop() as number;
    const row = table.get(pid);
    if (row) tree.set(pid, row);
    todo.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/**
 * Starts `commands` (argv lists) together, waits for all, and fails with the output's tail when
 * one fails. `sampleMs` > 0 samples the tree's RSS that often.
 */
export async function runMeasured(
  commands: string[][],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; sampleMs?: number } = {},
): Promise<Measured> {
  const script = [
    "pids=",
    ...commands.map((argv) => `${argv.map(quote).join(" ")} & pids="$pids $!"`),
    'rc=0; for pid in $pids; do wait "$pid" || rc=$?; done',
    'echo "@@times"; times',
    "exit $rc",
  ].join("\n");
  const t0 = now();
  const child = spawn("bash", ["-c", script], { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000);
  });
  let peakRssBytes = 0;
  const lastCpu = new Map<number, number>(); // pid → CPU seconds when last seen (bash itself excluded)
  const sampler =
    options.sampleMs && child.pid !== undefined
      ? setInterval(() => {
          const tree = processTree(child.pid as number);
          let rss = 0;
          for (const [pid, row] of tree) {
            rss += row.rss;
            if (pid !== child.pid) lastCpu.set(pid, row.cpu);
          }
          peakRssBytes = Math.max(peakRssBytes, rss);
        }, options.sampleMs)
      : undefined;
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const t1 = now();
  if (sampler) clearInterval(sampler);
  if (code !== 0) {
    const tail = `${stdout}${stderr}`.trim().split("\n").slice(-15).join("\n");
    throw new Error(`${commands[0]?.slice(0, 3).join(" ")} … exited with ${code}:\n${tail}`);
  }
  const [output = "", timesText = ""] = stdout.split("@@times");
  // `times` prints the shell's user/system times, then its children's: "0m12.345s 0m0.678s".
  const childLine = timesText.trim().split("\n").at(-1) ?? "";
  const seconds = [...childLine.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  if (seconds.length !== 2) throw new Error(`cannot read bash's times: "${timesText.trim()}"`);
  const waitedCpuS = (seconds[0] as number) + (seconds[1] as number);
  const sampledCpuS = [...lastCpu.values()].reduce((sum, s) => sum + s, 0);
  return {
    wallS: (t1 - t0) / 1000,
    cpuS: Math.max(waitedCpuS, sampledCpuS),
    waitedCpuS,
    sampledCpuS,
    peakRssBytes,
    t0,
    t1,
    stdout: output,
  };
}
