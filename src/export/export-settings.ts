import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load-config.ts";
import type { JobConfig } from "../config/schema.ts";
import { UserError } from "../core/errors.ts";
import { DEFAULT_VERIFY_THRESHOLDS, type VerifyThresholds } from "../sft/verify/index.ts";
import { bundledQwen3Dir, loadTokenizer } from "../tokenize/load-tokenizer.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";
import { escaperFor, type LiteralEscaper } from "./special-literals.ts";

/**
 * What the world-model exports take from a job config (`--config`): the SFT verifier's thresholds
 * (`sft.verify`), the train/validation draw (`output.validation_fraction`, `split_seed`) and the
 * tokenizer and chat template whose special-token literals a prompt must not carry. Without a
 * config: configs/defaults.yaml's thresholds, everything train, and the bundled Qwen3 tokenizer.
 */
export interface ExportSettings {
  thresholds: VerifyThresholds;
  validationFraction: number;
  splitSeed: number;
  /** For prompts read from a file (an output folder's shards carry their own). */
  escaper: () => LiteralEscaper;
}

/** The SFT stage's thresholds for a config, as `sft sample` verifies with them. */
export function verifyThresholds(config: JobConfig): VerifyThresholds {
  const verify = config.sft.verify;
  return {
    ...DEFAULT_VERIFY_THRESHOLDS,
    fidelity: verify.fidelity,
    lengths: { ...DEFAULT_VERIFY_THRESHOLDS.lengths, thinkMinChars: verify.min_think_chars, thinkMaxChars: verify.max_think_chars },
  };
}

function qwen3Template(): string {
  return (JSON.parse(readFileSync(join(bundledQwen3Dir(), "tokenizer_config.json"), "utf8")) as { chat_template: string }).chat_template;
}

/** The chat template a job renders with (`render.template`), as text. */
function chatTemplateText(config: JobConfig, tokenizer: Tokenizer): string {
  const setting = config.render.template;
  if (setting === "tokenizer") return tokenizer.chatTemplate ?? qwen3Template();
  const text = readFileSync(setting, "utf8");
  if (!setting.endsWith(".json")) return text;
  const parsed = JSON.parse(text) as { chat_template?: unknown };
  if (typeof parsed.chat_template !== "string") throw new UserError(`render.template: ${setting} has no string "chat_template" field`);
  return parsed.chat_template;
}

export function exportSettings(configPath?: string): ExportSettings {
  if (!configPath) {
    let escaper: LiteralEscaper | undefined;
    return {
      thresholds: DEFAULT_VERIFY_THRESHOLDS,
      validationFraction: 0,
      splitSeed: 0,
      escaper: () => {
        if (!escaper) {
          const tokenizer = loadTokenizer({ name: "qwen3" });
          escaper = escaperFor(tokenizer, tokenizer.chatTemplate ?? qwen3Template());
        }
        return escaper;
      },
    };
  }
  const { config } = loadConfig(configPath);
  let escaper: LiteralEscaper | undefined;
  return {
    thresholds: verifyThresholds(config),
    validationFraction: config.output.validation_fraction,
    splitSeed: config.output.split_seed,
    escaper: () => {
      if (!escaper) {
        const tokenizer = loadTokenizer(config.tokenizer);
        escaper = escaperFor(tokenizer, chatTemplateText(config, tokenizer));
      }
      return escaper;
    },
  };
}
