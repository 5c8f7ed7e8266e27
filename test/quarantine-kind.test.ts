import { describe, expect, it } from "vitest";
import { quarantineKind } from "../src/cli/quarantine-causes.ts";

// The run report's "top reasons" groups quarantine entries by kind: numbers that vary between
// entries are blanked, names that hold digits are kept whole.
describe("quarantineKind", () => {
  it("blanks counts, line numbers and durations, so one cause counts once", () => {
    const kinds = ["line 12 of 40 is not JSON", "line 7 of 9 is not JSON"].map((reason) => quarantineKind({ stage: "read", reason }));
    expect(kinds).toEqual(["read: line # of # is not JSON", "read: line # of # is not JSON"]);
    expect(quarantineKind({ stage: "read", reason: "timed out after 30s" })).toBe("read: timed out after #s");
  });

  it("keeps the digits of a name: UTF-16, x86_64, sha256", () => {
    const reason = "UTF-16 text, which lwm-data does not unpack: lwm-data reads UTF-8: convert it first";
    expect(quarantineKind({ stage: "detect", reason })).toBe("detect: UTF-16 text, which lwm-data does not unpack");
    expect(quarantineKind({ stage: "read", reason: "an x86_64 ELF binary, 3 sections" })).toBe("read: an x86_64 ELF binary, # sections");
    expect(quarantineKind({ stage: "verify", reason: "sha256 mismatch in 2 files" })).toBe("verify: sha256 mismatch in # files");
  });

  it("names an entry without a stage or reason", () => {
    expect(quarantineKind({})).toBe("?: no reason given");
  });
});
