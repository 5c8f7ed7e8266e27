/**
 * Compiles the project's WebAssembly text files to the binaries committed beside them, with
 * WABT's `wat2wasm` (the `wabt` package). Run after editing a .wat file:
 *
 *   node scripts/build-wasm.ts
 *
 * test/minhash-simd.test.ts fails when a committed .wasm is not its .wat compiled.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import wabt from "wabt";

const ROOT = join(import.meta.dirname, "..");

/** Each .wat source and the .wasm it compiles to (paths from the project root). */
export const WASM_SOURCES = [{ wat: "src/curate/minhash-simd.wat", wasm: "src/curate/minhash-simd.wasm" }] as const;

/** The binary of a .wat file: validated, no debug names, so the bytes depend only on the text. */
export async function compileWat(path: string): Promise<Uint8Array> {
  const tools = await wabt();
  const module = tools.parseWat(path, readFileSync(path, "utf8"), { simd: true });
  try {
    module.validate();
    return module.toBinary({ log: false, write_debug_names: false }).buffer;
  } finally {
    module.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const { wat, wasm } of WASM_SOURCES) {
    const binary = await compileWat(join(ROOT, wat));
    writeFileSync(join(ROOT, wasm), binary);
    console.log(`${wat} -> ${wasm} (${binary.length} bytes)`);
  }
}
