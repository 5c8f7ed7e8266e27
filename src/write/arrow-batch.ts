import type * as Arrow from "apache-arrow";
import { PROVENANCE_COLUMNS, type Provenance, provenanceOf } from "../core/provenance.ts";
import { arrow } from "../io/arrow.ts";
import type { PackedRow } from "../pack/packed-row.ts";
import type { Sample } from "./sample.ts";
import { type ShardColumns, scoreColumn, scoreColumns } from "./shard-columns.ts";

const int32Item = new arrow.Field("item", new arrow.Int32(), false);
const uint8Item = new arrow.Field("item", new arrow.Uint8(), false);
const float32Item = new arrow.Field("item", new arrow.Float32(), false);
/**
 * `loss_weight` (mask.weights): list<float32>, aligned with input_ids. float32, not a quantized
 * uint8/float16: a trainer multiplies it in as it is (no scale to agree on), it holds the
 * config's weights to float32 precision, and a turn's weights are one repeated 4-byte value, which
 * zstd stores as a run (docs/output.md "Shard schema").
 */
const lossWeightField = new arrow.Field("loss_weight", new arrow.List(float32Item), false);
const messageType = new arrow.Struct([
  new arrow.Field("role", new arrow.Utf8(), false),
  new arrow.Field("content", new arrow.Utf8(), false),
  new arrow.Field("loss", new arrow.Bool(), false),
]);

const controlType = new arrow.Struct([
  new arrow.Field("label", new arrow.Utf8(), false),
  new arrow.Field("turn", new arrow.Int32(), false),
  new arrow.Field("start", new arrow.Int32(), false),
  new arrow.Field("end", new arrow.Int32(), false),
]);

/** Arrow type of each provenance column: nullable, null where the source records nothing. */
function provenanceField(name: (typeof PROVENANCE_COLUMNS)[number]): Arrow.Field {
  return new arrow.Field(name, name === "reward" ? new arrow.Float64() : new arrow.Utf8(), true);
}

/** The shard schema; see docs/output.md "Shard schema". */
export function shardSchema(columns: ShardColumns): Arrow.Schema {
  const { messages: includeMessages, controls: includeControls = false, provenance: includeProvenance = false, scores = [] } = columns;
  const fields: Arrow.Field[] = [
    new arrow.Field("id", new arrow.Utf8(), false),
    new arrow.Field("domain", new arrow.Utf8(), false),
    new arrow.Field("source", new arrow.Utf8(), false),
    new arrow.Field("mixture_source", new arrow.Utf8(), false),
    new arrow.Field("input_ids", new arrow.List(int32Item), false),
    new arrow.Field("loss_mask", new arrow.List(uint8Item), false),
    ...(columns.lossWeight ? [lossWeightField] : []),
    new arrow.Field("num_tokens", new arrow.Int32(), false),
    new arrow.Field("num_loss_tokens", new arrow.Int32(), false),
    new arrow.Field("num_turns", new arrow.Int32(), false),
  ];
  if (includeProvenance) fields.push(...PROVENANCE_COLUMNS.map(provenanceField));
  fields.push(...scoreColumns(scores).map((name) => new arrow.Field(name, new arrow.Float64(), true)));
  if (includeMessages) fields.push(new arrow.Field("messages", new arrow.List(new arrow.Field("item", messageType, false)), false));
  if (includeControls)
    fields.push(
      new arrow.Field("control_kind", new arrow.Utf8(), false),
      new arrow.Field("control_instruction", new arrow.Utf8(), false),
      new arrow.Field("controls", new arrow.List(new arrow.Field("item", controlType, false)), false),
    );
  return new arrow.Schema(fields);
}

const utf8Item = new arrow.Field("item", new arrow.Utf8(), false);

/** The packed-shard schema (`pack.enabled`); see docs/packing-and-trainers.md "Packing". */
export function packedSchema(lossWeight = false): Arrow.Schema {
  return new arrow.Schema([
    new arrow.Field("input_ids", new arrow.List(int32Item), false),
    new arrow.Field("loss_mask", new arrow.List(uint8Item), false),
    ...(lossWeight ? [lossWeightField] : []),
    new arrow.Field("position_ids", new arrow.List(int32Item), false),
    new arrow.Field("cu_seqlens", new arrow.List(int32Item), false),
    new arrow.Field("document_ids", new arrow.List(utf8Item), false),
    new arrow.Field("document_parts", new arrow.List(int32Item), false),
    new arrow.Field("document_domains", new arrow.List(utf8Item), false),
    new arrow.Field("document_sources", new arrow.List(utf8Item), false),
    new arrow.Field("num_tokens", new arrow.Int32(), false),
    new arrow.Field("num_loss_tokens", new arrow.Int32(), false),
    new arrow.Field("num_documents", new arrow.Int32(), false),
  ]);
}

/** A list column built straight from one concatenated values buffer and its offsets. */
function listData<T extends Arrow.Int32 | Arrow.Uint8 | Arrow.Float32>(
  item: Arrow.Field<T>,
  values: T["TArray"],
  offsets: Int32Array,
): Arrow.Data<Arrow.List<T>> {
  // One makeData overload per type family: the cast picks the primitive one for all three.
  const child = arrow.makeData({
    type: item.type as Arrow.Int32,
    length: values.length,
    nullCount: 0,
    data: values as Int32Array,
  }) as unknown as Arrow.Data<T>;
  return arrow.makeData({
    type: new arrow.List(item),
    length: offsets.length - 1,
    nullCount: 0,
    valueOffsets: offsets,
    child,
  });
}

/** A column as a single Arrow Data chunk (a record batch needs exactly one per column). */
function singleChunk<T extends Arrow.DataType>(type: T, values: readonly unknown[]): Arrow.Data<T> {
  const builder = arrow.makeBuilder({ type, nullValues: [] });
  for (const value of values) builder.append(value as T["TValue"]);
  return builder.finish().flush() as Arrow.Data<T>;
}

/** A nullable column: `null` values become nulls. */
function nullableChunk<T extends Arrow.DataType>(type: T, values: readonly unknown[]): Arrow.Data<T> {
  const builder = arrow.makeBuilder({ type, nullValues: [null] });
  for (const value of values) builder.append(value as T["TValue"]);
  return builder.finish().flush() as Arrow.Data<T>;
}

function int32Data(values: number[]): Arrow.Data<Arrow.Int32> {
  return arrow.makeData({ type: new arrow.Int32(), length: values.length, nullCount: 0, data: Int32Array.from(values) });
}

/** Builds one Arrow record batch (one Parquet row group) from samples. */
export function samplesToTable(samples: readonly Sample[], shardColumns: ShardColumns): Arrow.Table {
  const schema = shardSchema(shardColumns);
  const { messages: includeMessages, controls: includeControls = false, provenance: includeProvenance = false, scores = [] } = shardColumns;
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
  const columns: Record<string, Arrow.Data> = {
    ...(shardColumns.lossWeight ? { loss_weight: lossWeightList(samples) } : {}),
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
    mixture_source: singleChunk(
      utf8,
      samples.map((s) => s.mixtureSource ?? s.domain),
    ),
    input_ids: listData(int32Item, ids, offsets),
    loss_mask: listData(uint8Item, mask, offsets),
    num_tokens: int32Data(samples.map((s) => s.inputIds.length)),
    num_loss_tokens: int32Data(samples.map((s) => s.numLossTokens)),
    num_turns: int32Data(samples.map((s) => s.numTurns)),
  };
  if (includeProvenance) {
    const rows: Provenance[] = samples.map((s) => s.provenance ?? provenanceOf(undefined));
    for (const name of PROVENANCE_COLUMNS) {
      const field = schema.fields.find((f) => f.name === name) as Arrow.Field;
      columns[name] = nullableChunk(
        field.type,
        rows.map((row) => row[name]),
      );
    }
  }
  const float64 = new arrow.Float64();
  for (const scorer of scores) {
    columns[scoreColumn(scorer)] = nullableChunk(
      float64,
      samples.map((s) => s.scores?.[scorer] ?? null),
    );
  }
  if (includeMessages) {
    const field = schema.fields.find((f) => f.name === "messages") as Arrow.Field;
    columns.messages = singleChunk(
      field.type,
      samples.map((s) => (s.messages ?? []).map(({ role, content, loss }) => ({ role, content, loss }))),
    );
  }
  if (includeControls) {
    columns.control_kind = singleChunk(
      utf8,
      samples.map((s) => s.controls?.kind ?? "none"),
    );
    columns.control_instruction = singleChunk(
      utf8,
      samples.map((s) => s.controls?.instruction ?? ""),
    );
    const field = schema.fields.find((f) => f.name === "controls") as Arrow.Field;
    columns.controls = singleChunk(
      field.type,
      samples.map((s) => (s.controls?.labels ?? []).map(({ label, turn, start, end }) => ({ label, turn, start, end }))),
    );
  }
  const batch = new arrow.RecordBatch(
    schema,
    arrow.makeData({
      type: new arrow.Struct(schema.fields),
      length: samples.length,
      nullCount: 0,
      children: schema.fields.map((f) => columns[f.name] as Arrow.Data),
    }),
  );
  return new arrow.Table(schema, [batch]);
}

/** The loss_weight column of rows: each row's weights, or its 0/1 mask where it has none (a text document, an SFT answer). */
function lossWeightList(rows: readonly { lossMask: Uint8Array; lossWeight?: Float32Array }[]): Arrow.Data<Arrow.List<Arrow.Float32>> {
  const { values, offsets } = concatenated(
    rows.map((r) => r.lossWeight ?? Float32Array.from(r.lossMask)),
    (n) => new Float32Array(n),
  );
  return listData(float32Item, values, offsets);
}

/** Concatenates per-row typed arrays into one values buffer with its list offsets. */
function concatenated<T extends Int32Array | Uint8Array | Float32Array>(
  parts: readonly T[],
  make: (length: number) => T,
): { values: T; offsets: Int32Array } {
  let total = 0;
  for (const part of parts) total += part.length;
  const values = make(total);
  const offsets = new Int32Array(parts.length + 1);
  let position = 0;
  parts.forEach((part, i) => {
    values.set(part, position);
    position += part.length;
    offsets[i + 1] = position;
  });
  return { values, offsets };
}

function int32List(parts: readonly Int32Array[]): Arrow.Data<Arrow.List<Arrow.Int32>> {
  const { values, offsets } = concatenated(parts, (n) => new Int32Array(n));
  return listData(int32Item, values, offsets);
}

/** Builds one Arrow record batch of packed rows (one Parquet row group). */
export function packedRowsToTable(rows: readonly PackedRow[], lossWeight = false): Arrow.Table {
  const schema = packedSchema(lossWeight);
  const mask = concatenated(
    rows.map((r) => r.lossMask),
    (n) => new Uint8Array(n),
  );
  const stringList = new arrow.List(utf8Item);
  const columns: Record<string, Arrow.Data> = {
    input_ids: int32List(rows.map((r) => r.inputIds)),
    loss_mask: listData(uint8Item, mask.values, mask.offsets),
    ...(lossWeight ? { loss_weight: lossWeightList(rows) } : {}),
    position_ids: int32List(rows.map((r) => r.positionIds)),
    cu_seqlens: int32List(rows.map((r) => r.cuSeqlens)),
    document_ids: singleChunk(
      stringList,
      rows.map((r) => r.documentIds),
    ),
    document_parts: int32List(rows.map((r) => Int32Array.from(r.documentParts))),
    document_domains: singleChunk(
      stringList,
      rows.map((r) => r.documentDomains),
    ),
    document_sources: singleChunk(
      stringList,
      rows.map((r) => r.documentSources),
    ),
    num_tokens: int32Data(rows.map((r) => r.inputIds.length)),
    num_loss_tokens: int32Data(rows.map((r) => r.numLossTokens)),
    num_documents: int32Data(rows.map((r) => r.documentIds.length)),
  };
  const batch = new arrow.RecordBatch(
    schema,
    arrow.makeData({
      type: new arrow.Struct(schema.fields),
      length: rows.length,
      nullCount: 0,
      children: schema.fields.map((f) => columns[f.name] as Arrow.Data),
    }),
  );
  return new arrow.Table(schema, [batch]);
}
