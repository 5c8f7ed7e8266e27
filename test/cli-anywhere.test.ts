import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir } from "./helpers.ts";

// bin/lwm-data.js started by an older Node, from outside the project: it finds the Node 24 the
// `node` package put into its own node_modules (relative to the launcher's real location, not the
// working directory) and runs itself again under it, or refuses saying how to get one.
const CLI = join(ROOT, "bin/lwm-data.js");
const DEMO = join(ROOT, "configs/demo.yaml");

/** The machine's own Node when it is older than 24 (the case the launcher relaunches from). */
function olderNode(): { path: string; version: string } | null {
  for (const path of ["/usr/bin/node", "/bin/node", "/usr/local/bin/node"]) {
    if (!existsSync(path)) continue;
    const version = execFileSync(path, ["-p", "process.versions.node"], { encoding: "utf8" }).trim();
    if (Number(version.split(".")[0]) < 24) return { path, version };
  }
  return null;
}
const OLD = olderNode();
if (!OLD)
  console.warn(
    "cli-anywhere: skipped — no Node older than 24 at /usr/bin/node, /bin/node or /usr/local/bin/node to start the launcher with",
  );

/** The environment of a shell outside the project: no node_modules/.bin on PATH, no test hooks. */
function plainEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: "/usr/local/bin:/usr/bin:/bin", ...extra };
  for (const key of ["NODE_OPTIONS", "LWM_DATA_NODE", "LWM_DATA_LAUNCHER_PID", "npm_config_prefix"]) if (!(key in extra)) delete env[key];
  return env;
}

function runOld(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const result = spawnSync(OLD?.path ?? "node", args, {
    cwd: options.cwd ?? tempDir("lwm-anywhere-"),
    env: options.env ?? plainEnv(),
    encoding: "utf8",
    timeout: 120_000,
  });
  return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

/** A config in a temp folder whose inputs are two demo files (absolute paths), written to `out`. */
function smallConfig(dir: string): string {
  const path = join(dir, "job.yaml");
  writeFileSync(
    path,
    [
      "inputs:",
      `  - path: ${join(ROOT, "data/demo/search/agent-trace.jsonl")}`,
      `  - path: ${join(ROOT, "data/demo/os/os-trajectories.jsonl")}`,
      "output:",
      `  dir: ${join(dir, "out")}`,
      "",
    ].join("\n"),
  );
  return path;
}

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      seen += chunk;
      if (pattern.test(seen)) resolve(seen);
    });
    child.on("exit", (code, signal) => reject(new Error(`exited (${code ?? signal}) before ${pattern}: ${seen}`)));
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
}

describe.skipIf(!OLD)(`the CLI started by Node ${OLD?.version} from outside its folder`, () => {
  it("prints its help and validates a config by absolute path, from a temp working directory", () => {
    // The negative side first: the old Node really is what starts it, and would refuse alone.
    expect(runOld(["-e", "process.exit(Number(process.versions.node.split('.')[0]) < 24 ? 0 : 1)"]).status).toBe(0);
    const help = runOld([CLI, "--help"]);
    expect(help.stderr).toBe("");
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: lwm-data /);
    const valid = runOld([CLI, "validate", DEMO]);
    expect(valid.status).toBe(0);
    expect(valid.stdout).toMatch(/^config .*configs\/demo\.yaml is valid/);
    expect(valid.stdout).toContain("22 file(s)");
  });

  it("runs under the Node 24 of its node_modules, with the launcher's memory settings", () => {
    const dir = tempDir("lwm-anywhere-");
    const probe = join(dir, "probe.mjs");
    writeFileSync(
      probe,
      "process.stdout.write(JSON.stringify({ node: process.version, execArgv: process.execArgv, execPath: process.execPath }) + '\\n');\n",
    );
    // A preload forwarded from the old Node's own flags reports the process the command runs in.
    const result = runOld(["--import", probe, CLI, "validate", DEMO], { cwd: dir });
    expect(result.status).toBe(0);
    const reports = result.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { node: string; execArgv: string[]; execPath: string });
    // The old Node's preload (1), the relaunched Node 24 (2), which re-executes in place with its memory flags (3).
    expect(reports.map((r) => r.node.split(".")[0])).toEqual([`v${OLD?.version.split(".")[0]}`, "v24", "v24"]);
    expect(reports[1]?.execPath).toBe(join(ROOT, "node_modules/node/bin/node"));
    expect(reports[2]?.execArgv).toContain("--max-semi-space-size=16");
  });

  it("forwards exit codes: a bad config fails, a missing one fails", () => {
    const dir = tempDir("lwm-anywhere-");
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "inputs: 3\nno_such_key: true\n");
    const invalid = runOld([CLI, "validate", bad], { cwd: dir });
    expect(invalid.status).not.toBe(0);
    expect(invalid.status).not.toBeNull();
    expect(invalid.stderr).not.toMatch(/needs Node\.js/);
    const missing = runOld([CLI, "validate", join(dir, "missing.yaml")], { cwd: dir });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/cannot read config/);
    // And a command that succeeds end to end: a small run, written where the config says.
    const config = smallConfig(dir);
    const run = runOld([CLI, "run", config, "--progress", "none"], { cwd: tempDir("lwm-anywhere-") });
    expect(run.stderr).not.toMatch(/needs Node\.js/);
    expect(run.status).toBe(0);
    expect(existsSync(join(dir, "out/manifest.json"))).toBe(true);
  });

  it("works through symlinks: a linked package folder, and a bin link run by its shebang", () => {
    const dir = tempDir("lwm-anywhere-");
    // npm link / a linked global install: <prefix>/lib/node_modules/lwm-data -> the package.
    mkdirSync(join(dir, "lib/node_modules"), { recursive: true });
    symlinkSync(ROOT, join(dir, "lib/node_modules/lwm-data"));
    const linked = join(dir, "lib/node_modules/lwm-data/bin/lwm-data.js");
    // --preserve-symlinks-main keeps the link in import.meta.url: the launcher must resolve it itself.
    for (const flags of [[], ["--preserve-symlinks-main"]]) {
      const result = runOld([...flags, linked, "validate", DEMO]);
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
    }
    // <prefix>/bin/lwm-data -> ../lib/node_modules/lwm-data/bin/lwm-data.js, found on PATH, whose
    // `#!/usr/bin/env node` picks the old Node first on PATH.
    mkdirSync(join(dir, "bin"));
    symlinkSync("../lib/node_modules/lwm-data/bin/lwm-data.js", join(dir, "bin/lwm-data"));
    const viaPath = spawnSync("lwm-data", ["validate", DEMO], {
      cwd: dir,
      env: plainEnv({ PATH: `${join(dir, "bin")}:/usr/local/bin:/usr/bin:/bin` }),
      encoding: "utf8",
    });
    expect(viaPath.stderr).toBe("");
    expect(viaPath.status).toBe(0);
    expect(viaPath.stdout).toMatch(/is valid/);
  });

  it("finds a `node` package hoisted into a parent project's node_modules", () => {
    // <project>/node_modules/{node, lwm-data}: lwm-data as a dependency, its `node` hoisted beside it.
    const project = tempDir("lwm-anywhere-");
    const modules = join(project, "node_modules");
    const pkg = join(modules, "lwm-data");
    mkdirSync(join(pkg, "bin"), { recursive: true });
    // The launcher and its bundle check; no dist/ (a package installed without its bundle runs src/).
    copyFileSync(CLI, join(pkg, "bin/lwm-data.js"));
    copyFileSync(join(ROOT, "bin/source-bundle.js"), join(pkg, "bin/source-bundle.js"));
    copyFileSync(join(ROOT, "package.json"), join(pkg, "package.json"));
    symlinkSync(join(ROOT, "src"), join(pkg, "src"));
    symlinkSync(join(ROOT, "node_modules/node"), join(modules, "node"));
    const result = runOld([join(pkg, "bin/lwm-data.js"), "--help"]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage: lwm-data /);
  });

  it("refuses with how to get Node 24 when none is found (negative control)", () => {
    // The same launcher, in a package folder without node_modules (nor any above it).
    const dir = tempDir("lwm-anywhere-");
    mkdirSync(join(dir, "bin"));
    copyFileSync(CLI, join(dir, "bin/lwm-data.js"));
    writeFileSync(join(dir, "package.json"), readFileSync(join(ROOT, "package.json")));
    const ancestors = dir.split("/").map((_, i, parts) => `${parts.slice(0, i + 1).join("/") || "/"}/node_modules/node`);
    if (ancestors.some((path) => existsSync(path)))
      throw new Error(`a node package above the temp folder spoils the control: ${ancestors}`);
    const refused = runOld([join(dir, "bin/lwm-data.js"), "--help"]);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain(`lwm-data needs Node.js >= 24 (this is v${OLD?.version})`);
    expect(refused.stderr).toContain("npm install");
    expect(refused.stderr).toContain("LWM_DATA_NODE");
    // LWM_DATA_NODE naming a Node that is too old: refused by the relaunched child, no loop.
    const tooOld = runOld([CLI, "--help"], { env: plainEnv({ LWM_DATA_NODE: OLD?.path }) });
    expect(tooOld.status).toBe(1);
    expect(tooOld.stderr).toMatch(/the Node it found \(.*\) is too old/);
    // LWM_DATA_NODE naming a missing file.
    const missing = runOld([CLI, "--help"], { env: plainEnv({ LWM_DATA_NODE: join(dir, "nope") }) });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/LWM_DATA_NODE=.*nope does not exist/);
  });

  it("forwards signals: Ctrl-C to the group and SIGTERM to the launcher alone each stop the command cleanly", async () => {
    // A finished output to serve a dashboard of: a command that waits for SIGINT/SIGTERM and stops
    // on the first (a second one, with no listener left, would kill it by the signal).
    const dir = tempDir("lwm-anywhere-");
    expect(runOld([CLI, "run", smallConfig(dir), "--progress", "none"], { cwd: dir }).status).toBe(0);
    for (const [signal, target] of [
      ["SIGINT", "group"],
      ["SIGTERM", "launcher"],
    ] as const) {
      const child = spawn(OLD?.path ?? "node", [CLI, "dashboard", join(dir, "out"), "--port", "0"], {
        cwd: dir,
        env: plainEnv(),
        detached: true, // its own process group, as a shell's foreground job is
        stdio: ["ignore", "pipe", "inherit"],
      });
      const done = exited(child);
      const url = (await waitForLine(child, /serving (http\S+)/)).match(/serving (http\S+)/)?.[1] as string;
      // Served a page: past the line, so listening for the signals too (it prints before it listens).
      expect((await fetch(url)).status).toBe(200);
      // A terminal's Ctrl-C goes to the whole foreground group; `kill PID` to the launcher only.
      process.kill(target === "group" ? -(child.pid as number) : (child.pid as number), signal);
      expect(await done, `${signal} to the ${target}`).toEqual({ code: 0, signal: null });
    }
  });
});
