import { describe, expect, it } from "vitest";
import { parseByteSize } from "../src/config/byte-size.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { DEMO_CONFIG, demoInputsYaml, writeConfig } from "./helpers.ts";

describe("sizes in the config, as the README writes them", () => {
  it("parses bytes and IEC / SI units", () => {
    expect(parseByteSize("8 MiB")).toBe(8 * 1024 * 1024);
    expect(parseByteSize("256MiB")).toBe(268435456);
    expect(parseByteSize("1.5 GiB")).toBe(1610612736);
    expect(parseByteSize("500 MB")).toBe(500_000_000);
    expect(parseByteSize("64 kib")).toBe(65536);
    expect(parseByteSize("4096")).toBe(4096);
    expect(parseByteSize("4096 B")).toBe(4096);
    // Not sizes: an unknown unit, a sign, words.
    expect(parseByteSize("8 MiBs")).toBeUndefined();
    expect(parseByteSize("-8 MiB")).toBeUndefined();
    expect(parseByteSize("eight megabytes")).toBeUndefined();
  });

  it("a job config takes `task_bytes: 8 MiB` and means 8388608; a size it cannot read is an error naming the key", () => {
    const inputs = demoInputsYaml().join("\n");
    const loaded = loadConfig(writeConfig(`inputs:\n${inputs}\ninput:\n  task_bytes: 8 MiB\noutput:\n  max_shard_bytes: 64MiB\n`));
    expect(loaded.config.input.task_bytes).toBe(8388608);
    expect(loaded.config.output.max_shard_bytes).toBe(67108864);
    expect(() => loadConfig(writeConfig(`inputs:\n${inputs}\ninput:\n  task_bytes: 8 MiBs\n`))).toThrow(
      /input\.task_bytes.*"8 MiBs" is not a size/s,
    );
    // The demo config's numbers still load as they are.
    expect(loadConfig(DEMO_CONFIG).config.input.task_bytes).toBe(268435456);
  });
});
