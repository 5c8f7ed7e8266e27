import { z } from "zod";

/**
 * Selection (docs/filters-selection-scoring.md "Filters and selection"): which of the records that pass the filters are
 * written, decided once over the whole corpus. Applied in this order: `keep_fraction` (a seeded
 * draw per record), `max_per` (the best `keep` records of each key value), `caps` (no key value
 * above a share of what is kept). Every field named here is a `RecordFacts` field
 * (src/filter/record-facts.ts).
 */

/** Facts that name a group: records sharing the value are one group (a task, an agent, a model). */
export const KEY_FIELDS = ["task_id", "attempt", "agent", "model", "outcome", "failure_mode", "domain", "source", "format"] as const;
export type KeyField = (typeof KEY_FIELDS)[number];

/** Plain facts an order can sort by; `scores.<name>` and `classes.<name>` are accepted too. */
export const ORDER_FIELDS = ["reward", "tokens", "loss_tokens", "trained_share", "turns", "id", ...KEY_FIELDS] as const;
const MAP_FIELD = /^(scores|classes)\.[A-Za-z0-9_.-]+$/;

const keyField = z.string().superRefine((value, ctx) => {
  if (!(KEY_FIELDS as readonly string[]).includes(value)) {
    ctx.addIssue({ code: "custom", message: `unknown key field "${value}"; a key is one of ${KEY_FIELDS.join(", ")}` });
  }
});

const orderField = z.string().superRefine((value, ctx) => {
  if (!(ORDER_FIELDS as readonly string[]).includes(value) && !MAP_FIELD.test(value)) {
    ctx.addIssue({
      code: "custom",
      message: `unknown order field "${value}"; an order field is one of ${ORDER_FIELDS.join(", ")}, scores.<name>, classes.<name>`,
    });
  }
});

/** One field, or several whose values together name the group (`[task_id, model]`: per task and model). */
const keySchema = z
  .union([keyField, z.array(keyField).min(1)])
  .describe(`The group: one field, or a list whose values together name it (\`[task_id, model]\`). Fields: ${KEY_FIELDS.join(", ")}.`);

export const orderSchema = z
  .object({
    field: orderField.describe(`The fact sorted by: ${ORDER_FIELDS.join(", ")}, \`scores.<name>\` or \`classes.<class>\`.`),
    direction: z
      .enum(["asc", "desc"])
      .describe("`desc`: larger first (best reward first); `asc`: smaller first (shortest first). A null value always sorts last."),
  })
  .strict();

export const selectionSchema = z
  .object({
    order: z
      .array(orderSchema)
      .default([])
      .describe(
        "Which records are preferred, first field first; ties go to input order (task, then position in the task). `max_per` keeps the first, `caps` drop the last. Empty: input order.",
      ),
    max_per: z
      .object({
        key: keySchema,
        keep: z.number().int().positive().describe("Records kept per value of `key`, the first by `order`."),
      })
      .strict()
      .optional()
      .describe("Keep at most `keep` records per value of `key`; a record whose key is null is never dropped by it."),
    caps: z
      .array(
        z
          .object({
            key: keySchema,
            max_share: z.number().gt(0).max(1).describe("Most of what is kept that one value of `key` may hold."),
            of: z
              .enum(["records", "tokens", "loss_tokens"])
              .default("records")
              .describe("What the share counts: records, tokens, or trained (loss) tokens."),
          })
          .strict(),
      )
      .default([])
      .describe(
        "No value of `key` above `max_share` of what is kept; the records last by `order` go first. Records whose key is null count in the total and are never dropped by a cap.",
      ),
    keep_fraction: z
      .number()
      .gt(0)
      .max(1)
      .default(1)
      .describe("Share of records kept by a seeded draw, a sha256 of (seed, id): a record is drawn the same wherever it is processed."),
    seed: z.number().int().nonnegative().default(0).describe("Seed of the `keep_fraction` draw."),
  })
  .strict();

export type SelectionSettings = z.output<typeof selectionSchema>;
export type SelectionOrder = z.output<typeof orderSchema>;
export type SelectionCap = SelectionSettings["caps"][number];

/** A key as a list of fields. */
export const keyFields = (key: KeyField | string | readonly string[]): KeyField[] =>
  (typeof key === "string" ? [key] : [...key]) as KeyField[];

/** A key as written in reasons: `task_id`, `task_id+model`. */
export const keyName = (key: string | readonly string[]): string => keyFields(key).join("+");
