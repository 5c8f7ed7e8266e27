import * as arrow from "apache-arrow";
import type { Sample } from "./sample.ts";

const int32Item = new arrow.Field("item", new arrow.Int32(), false);
const uint8Item = new arrow.Field("item", new arrow.Uint8(), false);
const messageType = new arrow.Struct([
  new arrow.Field("role", new arrow.Utf8(), false),
  new arrow.Field("content", new arrow.Utf8(), false),
  new arrow.Field("loss", new arrow.Bool(), false),
]);

/** The shard schema; see README "Output schema". */
export function shardSchema(includeMessages: boolean): arrow.Schema {
  const fields: arrow.Field[] = [
    new arrow.Field("id", new arrow.Utf8(), false),
    new arrow.Field("domain", new arrow.Utf8(), false),
    new arrow.Field("source", new arrow.Utf8(), false),
    new arrow.Field("input_ids", new arrow.List(int32Item), false),
    new arrow.Field("loss_mask", new arrow.List(uint8Item), false),
    new arrow.Field("num_tokens", new arrow.Int32(), false),
    new arrow.Field("num_loss_tokens", new arrow.Int32(), false),
    new arrow.Field("num_turns", new arrow.Int32(), false),
  ];
  if (includeMessages) fields.push(new arrow.Field("messages", new arrow.List(new arrow.Field("item", messageType, false)), false));
  return new arrow.Schema(fields);
}

/** A list column built straight from one concatenated values buffer and its offsets. */
function listData<T extends arrow.Int32 | arrow.Uint8>(
  item: arrow.Field<T>,
  values: T["TArray"],
  offsets: Int32Array,
): arrow.Data<arrow.List<T>> {
  const child = arrow.makeData({ type: item.type, length: values.length, nullCount: 0, data: values });
  return arrow.makeData({
    type: new arrow.List(item),
    length: offsets.length - 1,
    nullCount: 0,
    valueOffsets: offsets,
    child,
  });
}

/** A column as a single Arrow Data chunk (a record batch needs exactly one per column). */
function singleChunk<T extends arrow.DataType>(type: T, values: readonly unknown[]): arrow.Data<T> {
  const builder = arrow.makeBuilder({ type, nullValues: [] });
  for (const value of values) builder.append(value as T["TValue"]);
  return builder.finish().flush() as arrow.Data<T>;
}

function int32Data(values: number[]): arrow.Data<arrow.Int32> {
  return arrow.makeData({ type: new arrow.Int32(), length: values.length, nullCount: 0, data: Int32Array.from(values) });
}

/** Builds one Arrow record batch (one Parquet row group) from samples. */
export function samplesToTable(samples: readonly Sample[], includeMessages: boolean): arrow.Table {
  const schema = shardSchema(includeMessages);
  let totalTokens = 0;
  for (const sample of samples) totalTokens += sample.inputIds.length;
  const ids = new Int32Array(totalTokens);
  const mask = new Uint8Array(totalTokens);
  const offsets = new Int32Array(samples.length + 1);
  let position = 0;
  samples.forEach((sample, i) => {
    ids.set(sample.inputIds, position);
    mask.set(sample.lossMask, position);
    position += sample.inputIds.length;
    offsets[i + 1] = position;
  });

  const utf8 = new arrow.Utf8();
  const columns: Record<string, arrow.Data> = {
    id: singleChunk(
      utf8,
      samples.map((s) => s.id),
    ),
    domain: singleChunk(
      utf8,
      samples.map((s) => s.domain),
    ),
    source: singleChunk(
      utf8,
      samples.map((s) => s.source),
    ),
    input_ids: listData(int32Item, ids, offsets),
    loss_mask: listData(uint8Item, mask, offsets),
    num_tokens: int32Data(samples.map((s) => s.inputIds.length)),
    num_loss_tokens: int32Data(samples.map((s) => s.numLossTokens)),
    num_turns: int32Data(samples.map((s) => s.numTurns)),
  };
  if (includeMessages) {
    const field = schema.fields.find((f) => f.name === "messages") as arrow.Field;
    columns.messages = singleChunk(
      field.type,
      samples.map((s) => (s.messages ?? []).map(({ role, content, loss }) => ({ role, content, loss }))),
    );
  }
  const batch = new arrow.RecordBatch(
    schema,
    arrow.makeData({
      type: new arrow.Struct(schema.fields),
      length: samples.length,
      nullCount: 0,
      children: schema.fields.map((f) => columns[f.name] as arrow.Data),
    }),
  );
  return new arrow.Table(schema, [batch]);
}
