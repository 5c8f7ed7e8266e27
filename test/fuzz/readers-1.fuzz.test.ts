// The reader fuzz suites, part 1 of 2 (test/fuzz/reader-fuzz-suites.ts says why they are split).
import { readerFuzzSuites } from "./reader-fuzz-suites.ts";

readerFuzzSuites(0, 2);
