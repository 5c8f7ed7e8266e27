import { emptyFileReader, unrecognizedFileReader } from "../read/file-stubs.ts";
import type { Reader } from "../read/reader.ts";
import { type ProbedLine, readerByName } from "../read/registry.ts";

/*
 * What planning decided about each input file (its size, reader, layout, whether it can be cut),
 * as plain data. The main thread plans a job once; each worker thread plans it again from the
 * config, and with these decisions it does so without reading every file's head a second time
 * (format detection is most of planning: ~1 ms a file, so 256 files cost each of 16 threads
 * ~0.3 CPU-s at start-up). A thread then reads the files the way the main thread planned them,
 * even if one changed meanwhile; the task plan's hash still catches a file list that changed.
 */

/** One file's decision; the reader by name (every reader a decision names is in the registry). */
export interface InputDecision {
  bytes: number;
  format: string;
  detected: boolean;
  splittable: boolean;
  skippedLines?: ProbedLine[];
  /** `format: auto` found no reader: why, and the excerpt its quarantine entry shows. */
  unrecognized?: { reason: string; excerpt: string };
  empty?: boolean;
  /** With `empty`: why (a CSV header and no data row). */
  emptyNote?: string;
  layout?: "json-array" | "wrapped-rows" | "parquet-rows" | "arrow-rows" | "csv-rows";
}

/** Decisions by `decisionKey`. */
export type InputDecisions = Map<string, InputDecision>;

/** A file is decided per input spec: two specs matching one file may read it differently. */
export function decisionKey(list: string, spec: number, path: string): string {
  return `${list}\u0000${spec}\u0000${path}`;
}

/** The reader a decision names. */
export function decidedReader(decision: InputDecision): Reader {
  if (decision.empty) return emptyFileReader;
  if (decision.unrecognized) return unrecognizedFileReader(decision.unrecognized.reason, decision.unrecognized.excerpt);
  return readerByName(decision.format);
}

/** Whether `reader` is the registry's reader of its name, so a decision naming it gives it back. */
export function nameable(reader: Reader): boolean {
  try {
    return readerByName(reader.name) === reader;
  } catch {
    return false;
  }
}

const decoder = new TextDecoder();

/**
 * The decisions in a SharedArrayBuffer, made once per plan: every task request carries it, and
 * sharing it never copies it (a plain object would be cloned into each request).
 */
export function shareDecisions(decisions: InputDecisions): SharedArrayBuffer {
  const bytes = new TextEncoder().encode(JSON.stringify([...decisions]));
  const shared = new SharedArrayBuffer(bytes.byteLength);
  new Uint8Array(shared).set(bytes);
  return shared;
}

export function readSharedDecisions(shared: SharedArrayBuffer): InputDecisions {
  // TextDecoder does not take a view of shared memory: copy it out once.
  const text = decoder.decode(new Uint8Array(shared).slice());
  return new Map(JSON.parse(text) as [string, InputDecision][]);
}
