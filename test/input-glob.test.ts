import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { glob } from "tinyglobby";
import { describe, expect, it } from "vitest";
import { globBase, globFiles } from "../src/io/input-glob.ts";
import { tempDir } from "./helpers.ts";

/**
 * Input patterns are globbed from their own folder (src/io/input-glob.ts), not from the folder
 * they share with the working directory: the same files as tinyglobby given the absolute
 * pattern, for every kind of pattern an input can be.
 */
describe("input globs", () => {
  const root = tempDir("lwm-glob-");
  const files = [
    "runs/a/part-0.jsonl",
    "runs/a/part-1.jsonl",
    "runs/b/part-0.jsonl",
    "runs/b/notes.txt",
    "runs/c/deep/x/part-9.jsonl",
    "runs/.hidden/part-0.jsonl",
    "other/part-0.jsonl",
    "weird/[1]/part-0.jsonl",
    "weird/a b/part-0.jsonl",
  ];
  for (const file of files) {
    mkdirSync(join(root, file, ".."), { recursive: true });
    writeFileSync(join(root, file), "{}\n");
  }
  const patterns = [
    "runs/*/part-*.jsonl",
    "runs/**/*.jsonl",
    "runs/a/*.jsonl",
    "runs/{a,b}/*.jsonl",
    "{runs/a,other}/part-0.jsonl",
    "runs/[ab]/part-?.jsonl",
    "runs/!(a)/*.jsonl",
    "weird/\\[1\\]/*.jsonl",
    "weird/a b/*.jsonl",
    "missing/*.jsonl",
    "**/part-0.jsonl",
  ];

  it.each(patterns)("%s: the same files as tinyglobby from the shared folder", async (pattern) => {
    const absolute = `${root}/${pattern}`;
    const reference = await glob(absolute, { absolute: true, onlyFiles: true, expandDirectories: false });
    expect((await globFiles(absolute)).sort()).toEqual(reference.sort());
  });

  it("crawls from the folder before the first pattern segment, and never splits a pattern", () => {
    expect(globBase("/data/runs/*.jsonl")).toEqual({ base: "/data/runs", rest: "*.jsonl" });
    expect(globBase("/data/**/x.jsonl")).toEqual({ base: "/data", rest: "**/x.jsonl" });
    // A brace across a "/" ends the folder at its first piece.
    expect(globBase("/data/{a/x,b/y}.jsonl")).toEqual({ base: "/data", rest: "{a/x,b/y}.jsonl" });
    expect(globBase("/*.jsonl")).toEqual({ base: "/", rest: "*.jsonl" });
    expect(globBase("/data/a\\*b/*.jsonl")).toEqual({ base: "/data", rest: "a\\*b/*.jsonl" });
  });
});
