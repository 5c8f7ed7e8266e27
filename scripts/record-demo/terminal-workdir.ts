/**
 * The scratch home the terminal sessions run in: a few small files and a git repository with
 * fixed dates and author, so `ls -la`, `cat` and `git log` print the same on every recording.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FIXED_EPOCH_ISO, FIXED_EPOCH_SECONDS, freshWorkdir } from "./common.ts";

/** The shell prompt: `\w` shows `~/work`, since HOME is the scratch folder and the shell starts in `work`. */
export const PS1 = "demo@lwm:\\w$ ";
/** The prompt as the terminal shows it in the working folder. */
export const PROMPT = "demo@lwm:~/work$ ";

export interface Workdir {
  home: string;
  work: string;
}

const NOTES = ["Release checklist", "- run the test suite", "- tag the release", "- write the changelog (naïve café ✓)", ""].join("\n");

const APP_LOG = [
  "2026-01-15 11:58:01 INFO  server listening on :8080",
  "2026-01-15 11:58:07 WARN  slow request /search took 1.9s",
  "2026-01-15 11:59:12 ERROR database connection refused",
  "2026-01-15 11:59:13 INFO  retrying in 5s",
  "2026-01-15 11:59:18 ERROR database connection refused",
  "2026-01-15 11:59:30 INFO  connected",
  "",
].join("\n");

/** git with no user or system configuration and a fixed author, committer and date. */
const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "Demo",
  GIT_AUTHOR_EMAIL: "demo@lwm.invalid",
  GIT_COMMITTER_NAME: "Demo",
  GIT_COMMITTER_EMAIL: "demo@lwm.invalid",
  GIT_AUTHOR_DATE: FIXED_EPOCH_ISO,
  GIT_COMMITTER_DATE: FIXED_EPOCH_ISO,
};

/**
 * The environment of the recorded shell: nothing of the recording machine's own environment,
 * git as above, and `cat` as git's pager (a pager would turn `git log` into a full-screen program).
 */
export function shellEnv(workdir: Workdir, term: string): Record<string, string> {
  return {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: workdir.home,
    SHELL: "/bin/bash",
    TERM: term,
    LANG: "C.UTF-8",
    TZ: "UTC",
    PS1,
    HISTFILE: "/dev/null",
    GIT_PAGER: "cat",
    ...GIT_ENV,
  };
}

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", args, { cwd, env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: cwd, ...GIT_ENV }, stdio: "ignore" });
}

function write(dir: string, name: string, content: string): void {
  mkdirSync(join(dir, name, ".."), { recursive: true });
  writeFileSync(join(dir, name), content);
}

/** A small repository with two commits (about a dozen objects: enough for git's progress lines). */
function makeUpstream(dir: string): void {
  mkdirSync(dir);
  git(dir, "init", "--quiet", "--initial-branch=main");
  write(dir, "README.md", "# upstream\n\nA tiny repository for the terminal demo.\n");
  write(dir, "src/greet.sh", '#!/bin/sh\necho "hello, $1"\n');
  write(dir, "src/count.sh", '#!/bin/sh\nseq 1 "$1"\n');
  write(dir, "docs/usage.txt", "greet.sh NAME\ncount.sh N\n");
  git(dir, "add", ".");
  git(dir, "commit", "--quiet", "--message=Add greet and count scripts");
  write(dir, "CHANGELOG.md", "## 0.1.0\n\n- first release\n");
  write(dir, "docs/usage.txt", "greet.sh NAME   say hello\ncount.sh N      count to N\n");
  git(dir, "add", ".");
  git(dir, "commit", "--quiet", "--message=Document the scripts");
}

/** Sets every path's times to the fixed clock (deepest first, so parents keep theirs). */
function pinTimes(...paths: string[]): void {
  for (const path of paths) utimesSync(path, FIXED_EPOCH_SECONDS, FIXED_EPOCH_SECONDS);
}

/** A fresh `/tmp/lwm-demo-record/terminal` with `work/{notes.txt,app.log,upstream/}`. */
export function prepareWorkdir(): Workdir {
  const home = freshWorkdir("terminal");
  const work = join(home, "work");
  mkdirSync(work);
  write(work, "notes.txt", NOTES);
  write(work, "app.log", APP_LOG);
  makeUpstream(join(work, "upstream"));
  // `ls -la` in work shows work's own entries and `..` (home): their times are pinned.
  pinTimes(join(work, "notes.txt"), join(work, "app.log"), join(work, "upstream"), work, home);
  return { home, work };
}
