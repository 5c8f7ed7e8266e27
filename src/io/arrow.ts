import { createRequire } from "node:module";
import type * as Arrow from "apache-arrow";

/**
 * apache-arrow, loaded as its one-file build (the UMD bundle the package's `exports` "./*" maps
 * `require` to): one file instead of the ESM build's ~150 modules, ~10 ms instead of ~100 ms in
 * every process and pool thread that reads or writes Parquet. Every module of lwm-data takes
 * apache-arrow's values from here, never from "apache-arrow" directly: the two builds' classes are
 * different objects, and a table made by one and written by the other's `tableToIPC` comes out as a
 * broken stream. Types still come from `import type ... from "apache-arrow"` (erased at run time).
 */
const load = createRequire(import.meta.url);
export const arrow: typeof Arrow = load("apache-arrow/Arrow.esnext.min");
