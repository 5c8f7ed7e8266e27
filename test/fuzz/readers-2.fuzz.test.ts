// The reader fuzz suites, part 2 of 2 (test/fuzz/reader-fuzz-suites.ts says why they are split).
import { readerFuzzSuites } from "./reader-fuzz-suites.ts";

readerFuzzSuites(1, 2);
