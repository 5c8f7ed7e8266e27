/**
 * Plays a scripted SWE episode (swe-episodes.ts) for real: writes the project into a fresh git
 * repository with a fixed author and date, then runs each step with `bash -c` in the repository
 * under a fixed environment, keeping stdout and stderr interleaved as the terminal would show them,
 * and the exit code.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { FIXED_EPOCH_SECONDS } from "./common.ts";
import type { Episode } from "./swe-episodes.ts";

export interface RecordedStep {
  thought: string;
  command: string;
  /** stdout and stderr as written, in one stream. */
  output: string;
  exitCode: number;
}

export interface RecordedEpisode {
  episode: Episode;
  /** The repository the steps ran in (a fixed path). */
  repo: string;
  baseCommit: string;
  steps: RecordedStep[];
  /** `git add -A && git diff --cached` after the last step: the patch the agent submits. */
  submission: RecordedStep;
  /** mini-swe-agent's way to submit: the marker line, then the same patch. */
  miniSubmission: RecordedStep;
}

export const SUBMIT_COMMAND = "git add -A && git diff --cached";
export const MINI_SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

const GIT_DATE = `@${FIXED_EPOCH_SECONDS} +0000`;

/**
 * The fixed environment every command runs in: no inherited variables, Debian's python3 and git
 * from /usr/bin, an empty HOME (no user git config), UTC, one locale, one hash seed, no bytecode
 * caches, and a fixed author and date for git. `clockDir` holds a sitecustomize that fixes Python's perf_counter.
 */
function fixedEnv(home: string, clockDir: string): NodeJS.ProcessEnv {
  return {
    PATH: "/usr/bin:/bin",
    HOME: home,
    TZ: "UTC",
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
    TERM: "dumb",
    PYTHONHASHSEED: "0",
    // No .pyc caches: an edit that keeps a module's size within the same second would leave
    // Python running the stale cache (it compares size and whole-second mtime).
    PYTHONDONTWRITEBYTECODE: "1",
    PYTHONPATH: clockDir,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "lwm-data demo",
    GIT_AUTHOR_EMAIL: "demo@lwm-data.invalid",
    GIT_AUTHOR_DATE: GIT_DATE,
    GIT_COMMITTER_NAME: "lwm-data demo",
    GIT_COMMITTER_EMAIL: "demo@lwm-data.invalid",
    GIT_COMMITTER_DATE: GIT_DATE,
  };
}

/**
 * unittest prints "Ran N tests in 0.001s", measured with time.perf_counter; a clock that stands
 * still makes that line the same on every recording (what faketime would do for a C program).
 */
const FIXED_PYTHON_CLOCK = [
  "# Written by scripts/record-demo/swe-session.ts: a clock that stands still, so that unittest's",
  '# "Ran N tests in 0.000s" is the same on every recording of the demo sessions.',
  "import time",
  "",
  "time.perf_counter = lambda: 0.0",
  "",
].join("\n");

/** Runs the scripted episodes, each in its own repository under `workdir`. */
export class SweSession {
  private readonly workdir: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly capture: string;

  constructor(workdir: string) {
    this.workdir = workdir;
    const home = join(workdir, "home");
    const clockDir = join(workdir, "python-clock");
    mkdirSync(home, { recursive: true });
    mkdirSync(clockDir, { recursive: true });
    writeFileSync(join(clockDir, "sitecustomize.py"), FIXED_PYTHON_CLOCK);
    this.env = fixedEnv(home, clockDir);
    this.capture = join(workdir, "capture.log");
  }

  record(episode: Episode): RecordedEpisode {
    const repo = join(this.workdir, episode.name);
    for (const [path, content] of Object.entries(episode.files)) {
      mkdirSync(dirname(join(repo, path)), { recursive: true });
      writeFileSync(join(repo, path), content);
    }
    this.setup(repo, `git init -q -b main && git add -A && git commit -q -m '${episode.commitMessage}'`);
    const baseCommit = this.setup(repo, "git rev-parse HEAD").trim();
    const steps = episode.steps.map((step) => {
      const recorded = this.run(repo, step.thought, step.command);
      if (recorded.exitCode !== step.exitCode)
        throw new Error(
          `${episode.name}: \`${step.command}\` exited ${recorded.exitCode}, the script expects ${step.exitCode}:\n${recorded.output}`,
        );
      return recorded;
    });
    const submission = this.run(repo, episode.submitThought, SUBMIT_COMMAND);
    const miniSubmission = this.run(repo, episode.submitThought, `echo ${MINI_SUBMIT_MARKER} && ${SUBMIT_COMMAND}`);
    if (submission.exitCode !== 0 || miniSubmission.output !== `${MINI_SUBMIT_MARKER}\n${submission.output}`)
      throw new Error(`${episode.name}: the submission commands disagree`);
    return { episode, repo, baseCommit, steps, submission, miniSubmission };
  }

  /** Runs one command of the agent: combined output and exit code. */
  private run(repo: string, thought: string, command: string): RecordedStep {
    const fd = openSync(this.capture, "w");
    let status: number | null;
    try {
      // One file for stdout and stderr: the writes keep the order the programs made them in.
      const result = spawnSync("/bin/bash", ["-c", command], { cwd: repo, env: this.env, stdio: ["ignore", fd, fd], timeout: 60_000 });
      if (result.error) throw result.error;
      status = result.status;
    } finally {
      closeSync(fd);
    }
    if (status === null) throw new Error(`killed by a signal: ${command}`);
    return { thought, command, output: readFileSync(this.capture, "utf8"), exitCode: status };
  }

  /** A setup command (not part of the session); it must succeed. */
  private setup(repo: string, command: string): string {
    const step = this.run(repo, "", command);
    if (step.exitCode !== 0) throw new Error(`setup failed (exit ${step.exitCode}): ${command}\n${step.output}`);
    return step.output;
  }
}
