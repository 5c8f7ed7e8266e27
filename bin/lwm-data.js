#!/usr/bin/env node
// Launcher: lwm-data is TypeScript run by Node's built-in type stripping (Node >= 24).
// `npx lwm-data` and `npm run` put node_modules/.bin first on PATH, so `env node` above is the
// Node 24 LTS that the `node` npm dependency ships, whatever Node the machine has.
const [major] = process.versions.node.split(".").map(Number);
if (major < 24) {
  console.error(
    `lwm-data needs Node.js >= 24 (this is ${process.version}). Run it as \`npx lwm-data\` from the project ` +
      "after `npm install`: that uses the Node 24 LTS installed into node_modules by the `node` package.",
  );
  process.exit(1);
}
// Memory settings (why: src/core/process-memory.ts): V8's young generation capped and its heap
// growth fixed, glibc malloc tuned. They only take effect from process start, so re-execute in
// place (same pid, no child left waiting) unless a semi-space size was given.
const memory = await import("../src/core/process-memory.ts");
if (typeof process.execve === "function" && !memory.hasSemiSpaceFlag(process.execArgv, process.env.NODE_OPTIONS)) {
  try {
    process.execve(
      process.execPath,
      [process.execPath, ...process.execArgv, ...memory.relaunchFlags(process.execArgv), ...process.argv.slice(1)],
      memory.relaunchEnv(process.env),
    );
  } catch {
    // Not replaced (e.g. a sandbox refuses exec): run on with the defaults, only less frugal.
  }
}
// Node's on-disk compile cache (its default folder under the OS temp dir, or NODE_COMPILE_CACHE)
// keeps stripped and compiled modules between runs: ~0.25 CPU-s less start-up per process, and
// per pool thread, which find the folder through the environment they inherit.
const { enableCompileCache } = await import("node:module");
const cache = enableCompileCache?.();
if (cache?.directory) process.env.NODE_COMPILE_CACHE = cache.directory;
await import("../src/cli/main.ts");
