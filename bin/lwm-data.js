#!/usr/bin/env node
// Launcher: lwm-data is TypeScript run by Node's built-in type stripping (Node >= 24).
// `npx lwm-data` and `npm run` put node_modules/.bin first on PATH, so `env node` above is the
// Node 24 LTS that the `node` npm dependency ships, whatever Node the machine has. Started by an
// older Node (another directory, `npm --prefix`, an absolute path, a global or linked install),
// it finds that Node 24 from its own location and runs itself again under it (relaunch below).
import { spawn } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const MIN_MAJOR = 24;
/** A Node of the user's choice (a path), tried before the package's own. */
const NODE_ENV = "LWM_DATA_NODE";
/** Set by the relauncher for its child: its own pid (see watchLauncher). */
const LAUNCHER_ENV = "LWM_DATA_LAUNCHER_PID";

const [major] = process.versions.node.split(".").map(Number);
if (major < MIN_MAJOR) {
  // Already relaunched (by this launcher, our parent) and still too old: refuse, never loop.
  if (Number(process.env[LAUNCHER_ENV]) === process.ppid) refuse(`the Node it found (${process.execPath}) is too old`);
  relaunch(findNode());
} else {
  await start();
}

async function start() {
  watchLauncher();
  // Node's on-disk compile cache (its default folder under the OS temp dir, or NODE_COMPILE_CACHE)
  // keeps stripped and compiled modules between runs: ~0.25 CPU-s less start-up per process, and
  // per pool thread, which find the folder through the environment they inherit. Enabled before
  // the first TypeScript import: a cached module is not type-stripped again, so Node never loads
  // its TypeScript stripper (~0.1 CPU-s, once before and once after the re-execution below).
  const { enableCompileCache, flushCompileCache } = await import("node:module");
  const cache = enableCompileCache?.();
  if (cache?.directory) process.env.NODE_COMPILE_CACHE = cache.directory;
  // Memory settings (why: src/core/process-memory.ts): V8's young generation capped and its heap
  // growth fixed, glibc malloc tuned. They only take effect from process start, so re-execute in
  // place (same pid, no child left waiting) unless a semi-space size was given.
  const memory = await import("../src/core/process-memory.ts");
  if (typeof process.execve === "function" && !memory.hasSemiSpaceFlag(process.execArgv, process.env.NODE_OPTIONS)) {
    try {
      // The cache is written at exit, which a process replaced by execve never reaches.
      flushCompileCache?.();
      process.execve(
        process.execPath,
        [process.execPath, ...process.execArgv, ...memory.relaunchFlags(process.execArgv), ...process.argv.slice(1)],
        memory.relaunchEnv(process.env),
      );
    } catch {
      // Not replaced (e.g. a sandbox refuses exec): run on with the defaults, only less frugal.
    }
  }
  // The bundle (dist/, scripts/build-bundle.ts) while it matches the sources, else the sources:
  // the same program, loaded from ~170 files (a demo run) instead of ~620. LWM_DATA_FROM_SOURCE=1 asks for src/.
  // LWM_DATA_ENTRY says which one runs, to this process's pool threads and to anyone asking.
  const { freshBundleEntry } = await import("./source-bundle.js");
  const bundle = process.env.LWM_DATA_FROM_SOURCE === "1" ? null : freshBundleEntry(dirname(dirname(selfPath())));
  process.env.LWM_DATA_ENTRY = bundle ? "bundle" : "source";
  await import(bundle ? pathToFileURL(bundle).href : "../src/cli/main.ts");
}

/** This file with every symlink resolved (npm link, global installs, --preserve-symlinks-main). */
function selfPath() {
  return realpathSync(fileURLToPath(import.meta.url));
}

/** A Node >= 24: $LWM_DATA_NODE, else the `node` package next to this package or hoisted above it. */
function findNode() {
  const chosen = process.env[NODE_ENV];
  if (chosen) {
    if (existsSync(chosen)) return chosen;
    refuse(`${NODE_ENV}=${chosen} does not exist`);
  }
  // The package folder (bin/..), then each folder above it: where Node's own resolution would
  // find the `node` dependency, installed here or hoisted into a parent project's node_modules.
  let dir = dirname(dirname(selfPath()));
  for (;;) {
    const pkg = join(dir, "node_modules", "node");
    for (const bin of ["bin/node", "bin/node.exe"]) {
      const path = join(pkg, bin);
      if (existsSync(path) && packageMajor(pkg) >= MIN_MAJOR) return path;
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

function packageMajor(pkg) {
  try {
    return Number(String(JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version).split(".")[0]);
  } catch {
    return 0;
  }
}

function refuse(why) {
  const own = join(dirname(dirname(selfPath())), "node_modules/node/bin/node");
  console.error(
    `lwm-data needs Node.js >= ${MIN_MAJOR} (this is ${process.version}): ${why}.\n` +
      `Under an older Node it runs itself with the Node ${MIN_MAJOR} LTS that \`npm install\` puts into its own ` +
      `node_modules (the \`node\` package: ${own}). To get one: run \`npm install\` in the lwm-data folder ` +
      `(${dirname(dirname(selfPath()))}), or set ${NODE_ENV} to the path of a Node >= ${MIN_MAJOR} binary, or ` +
      `start it with one (e.g. \`nvm install ${MIN_MAJOR}\`, then \`lwm-data …\`).`,
  );
  process.exit(1);
}

/**
 * Runs this file again under `node` (argv, execArgv, env and stdio as given) and ends as the child
 * does: its exit code, or the signal that ended it.
 *
 * Signals: the child gets its own session (POSIX), so a signal meant for the group this process
 * is in (Ctrl-C at a terminal, `timeout`, a Slurm step) reaches it once, forwarded from here,
 * never twice — lwm-data reads a second SIGINT/SIGTERM as "exit at once", the first as "stop at a
 * record boundary". Its stdio is still the terminal's. Ctrl-Z stops both; `fg` resumes both.
 */
function relaunch(node) {
  if (!node) refuse(`no Node >= ${MIN_MAJOR} in node_modules next to ${selfPath()} or above it`);
  const posix = process.platform !== "win32";
  const child = spawn(node, [...process.execArgv, selfPath(), ...process.argv.slice(2)], {
    stdio: "inherit",
    env: { ...process.env, [LAUNCHER_ENV]: String(process.pid) },
    detached: posix,
  });
  const forward = (signal) => {
    try {
      child.kill(signal);
    } catch {}
  };
  const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR2", "SIGWINCH", "SIGCONT"];
  const listeners = new Map();
  for (const signal of forwarded) {
    try {
      const listener = () => forward(signal);
      process.on(signal, listener);
      listeners.set(signal, listener);
    } catch {
      // Not a signal this platform has.
    }
  }
  if (posix) {
    // Terminal stop: the child's group is orphaned, where the kernel drops SIGTSTP, so SIGSTOP it.
    process.on("SIGTSTP", () => {
      forward("SIGSTOP");
      process.kill(process.pid, "SIGSTOP");
    });
  }
  child.on("error", (error) => {
    console.error(`lwm-data: could not start ${node}: ${error.message}`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      // Die of the same signal, so callers see what they would have seen without this launcher.
      for (const [name, listener] of listeners) process.off(name, listener);
      process.removeAllListeners("SIGTSTP");
      try {
        process.kill(process.pid, signal);
      } catch {}
      process.exit(128 + (constants.signals[signal] ?? 0));
    }
    process.exit(code ?? 1);
  });
}

/**
 * In a relaunched child: if the launcher that waits for it is killed outright (SIGKILL, which it
 * cannot forward), stop as on SIGTERM rather than run on, detached, with nobody waiting. Only the
 * process the launcher started watches (not processes lwm-data itself starts, which inherit the
 * variable but have another parent).
 */
function watchLauncher() {
  const launcher = Number(process.env[LAUNCHER_ENV]);
  if (!launcher || launcher !== process.ppid || process.platform === "win32") return;
  const timer = setInterval(() => {
    if (launcherAlive(launcher)) return;
    clearInterval(timer);
    process.kill(process.pid, "SIGTERM");
  }, 1000);
  timer.unref();
}

/** Whether `launcher` is still this process's parent (Linux: /proc; elsewhere: whether it exists). */
function launcherAlive(launcher) {
  try {
    // /proc/self/stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses.
    const stat = readFileSync("/proc/self/stat", "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === launcher;
  } catch {
    try {
      process.kill(launcher, 0);
      return true;
    } catch {
      return false;
    }
  }
}
