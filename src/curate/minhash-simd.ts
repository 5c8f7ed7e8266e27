import { readFileSync } from "node:fs";
import { sourceAsset } from "../core/package-files.ts";

/*
 * The MinHash minima loop in WebAssembly SIMD (minhash-simd.wat, compiled to the .wasm beside
 * it): four hash functions per vector instruction, where the JavaScript loop does one per
 * instruction. It is most of what a signature costs (~10% of the signatures stage before).
 */

// The part of the WebAssembly JS API used here (the project's TypeScript libs do not declare it).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: unknown };
}
const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

let compiled: object | null | undefined;

/** The compiled kernel, once per process; null where this engine lacks WebAssembly SIMD. */
function kernelModule(): object | null {
  if (compiled === undefined) {
    const bytes = readFileSync(sourceAsset("curate/minhash-simd.wasm"));
    compiled = wasm?.validate(bytes) ? new wasm.Module(bytes) : null;
  }
  return compiled;
}

interface KernelExports {
  memory: WasmMemory;
  minima(shingles: number, n: number, salts: number, groups: number, out: number): void;
}

const align16 = (bytes: number) => (bytes + 15) & ~15;

/**
 * One hasher's salts in a kernel instance of its own. `minima` fills the first `4 * groups`
 * values of a signature (the whole groups of four salts); the caller does the rest.
 */
export class SimdMinima {
  readonly groups: number;
  private readonly kernel: KernelExports;
  private readonly outAt: number;
  private readonly shinglesAt: number;

  private constructor(kernel: KernelExports, salts: Int32Array) {
    this.kernel = kernel;
    this.groups = salts.length >> 2;
    const saltBytes = align16(this.groups * 16);
    this.outAt = saltBytes;
    this.shinglesAt = 2 * saltBytes;
    this.reserve(0);
    new Int32Array(kernel.memory.buffer, 0, this.groups * 4).set(salts.subarray(0, this.groups * 4));
  }

  /**
   * A kernel for these salts; undefined where WebAssembly SIMD is missing or there is no whole
   * group. `binary` replaces the committed .wasm (the tests' planted faults).
   */
  static of(salts: Int32Array, binary?: Uint8Array): SimdMinima | undefined {
    if (salts.length < 4) return undefined;
    const module = binary ? new (wasm as WasmApi).Module(binary) : kernelModule();
    return module && wasm ? new SimdMinima(new wasm.Instance(module).exports as KernelExports, salts) : undefined;
  }

  /** signature[f] = min over the shingles of fmix32(shingle ^ salt_f) (unsigned), f < 4 * groups. */
  minima(shingles: Int32Array, signature: Uint32Array): void {
    const n = shingles.length;
    this.reserve(n);
    const { memory } = this.kernel;
    new Int32Array(memory.buffer, this.shinglesAt, n).set(shingles);
    this.kernel.minima(this.shinglesAt, n, 0, this.groups, this.outAt);
    signature.set(new Uint32Array(memory.buffer, this.outAt, this.groups * 4));
  }

  /** Grows the memory (64 KiB pages) to hold `n` shingles. */
  private reserve(n: number): void {
    const { memory } = this.kernel;
    const needed = this.shinglesAt + n * 4;
    if (needed > memory.buffer.byteLength) memory.grow(Math.ceil((needed - memory.buffer.byteLength) / 65536));
  }
}
