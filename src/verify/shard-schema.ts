import type { DataType, Field, Schema } from "apache-arrow";
import { arrow } from "../io/arrow.ts";
import { packedSchema, shardSchema } from "../write/arrow-batch.ts";
import type { OutputManifest } from "./output-manifest.ts";

/**
 * The schema every shard of an output must have: the writer's own, chosen by the manifest's
 * `layout` (packed rows, or one sample per row with or without `messages`). A manifest without
 * `layout` (CPT v2) does not record `output.include_messages`, so the first shard's columns
 * decide; SFT v1 rows always have messages. New layouts belong here, read from `manifest.json`.
 */
export function expectedShardSchema(manifest: OutputManifest, firstShard?: Schema): Schema {
  if (manifest.packed) return packedSchema(manifest.lossWeight === true);
  const hasMessages = manifest.includeMessages ?? firstShard?.fields.some((field) => field.name === "messages") ?? false;
  return shardSchema({
    messages: hasMessages,
    controls: manifest.controls === true,
    provenance: manifest.provenance === true,
    scores: manifest.scores,
    lossWeight: manifest.lossWeight === true,
  });
}

/** A type with its nested fields spelled out: `List<item: Int32 not null>`; Arrow's own toString drops child names and nullability. */
export function describeType(type: DataType): string {
  const children = (type.children ?? []) as Field[];
  if (children.length === 0) return String(type);
  return `${arrow.Type[type.typeId]}<${children.map(describeField).join(", ")}>`;
}

export function describeField(field: Field): string {
  return `${field.name}: ${describeType(field.type)}${field.nullable ? "" : " not null"}`;
}

export interface SchemaDifference {
  column: string;
  expected?: string;
  actual?: string;
  message: string;
}

/** Column by column: missing, unexpected, or of another type (names, Arrow types, nullability), then order. */
export function compareSchemas(expected: Schema, actual: Schema): SchemaDifference[] {
  const actualByName = new Map(actual.fields.map((field) => [field.name, field]));
  const expectedNames = new Set(expected.fields.map((field) => field.name));
  const differences: SchemaDifference[] = [];
  for (const want of expected.fields) {
    const got = actualByName.get(want.name);
    if (!got) differences.push({ column: want.name, expected: describeField(want), message: `column ${want.name} is missing` });
    else if (describeField(got) !== describeField(want))
      differences.push({
        column: want.name,
        expected: describeField(want),
        actual: describeField(got),
        message: `column ${want.name} has another type`,
      });
  }
  for (const got of actual.fields) {
    if (!expectedNames.has(got.name))
      differences.push({ column: got.name, actual: describeField(got), message: `unexpected column ${got.name}` });
  }
  const order = (schema: Schema) => schema.fields.map((field) => field.name).join(", ");
  if (differences.length === 0 && order(expected) !== order(actual))
    differences.push({ column: "", expected: order(expected), actual: order(actual), message: "columns are in another order" });
  return differences;
}
