import { once } from "node:events";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { UserError } from "../core/errors.ts";
import { fileSha256 } from "../io/file-sha256.ts";
import { readJsonFile, writeJsonFile } from "../io/json-file.ts";
import { openParquetTable } from "../io/parquet-table.ts";

/**
 * `lwm-data export megatron`: an output's shards as Megatron-LM indexed datasets, the `.bin/.idx`
 * pair its `preprocess_data.py` writes and `megatron.core.datasets.indexed_dataset.IndexedDataset`
 * (formerly `MMapIndexedDataset`) reads, one per split:
 *
 *   <dir>/<split>.bin / .idx             input_ids, one sequence and one document per sample
 *                                        (a packed row's documents, cut at cu_seqlens, each its own)
 *   <dir>/<split>_loss_mask.bin / .idx   the loss mask, uint8, the same sequences and documents
 *   <dir>/<split>_loss_weight.bin / .idx only for shards with `loss_weight` (mask.weights): the
 *                                        per-token weights, float32, the same sequences (0 where
 *                                        the mask is 0); python/lwm_megatron's MaskedGPTDataset
 *                                        puts them in Megatron's float loss_mask
 *
 * `.bin` is the tokens back to back (little-endian, the index's dtype). `.idx` is
 *
 *   b"MMIDIDX\x00\x00" · version u64 = 1 · dtype code u8 · sequence count u64 · document count u64 ·
 *   sequence lengths int32[sequences] · sequence byte offsets int64[sequences] ·
 *   document indices int64[documents + 1] (0, then the sequence index after each document)
 *
 * dtype codes: 1 uint8, 4 int32, 7 float32, 8 uint16. Token ids are uint16 when the vocabulary has fewer than
 * 65,500 entries and int32 otherwise (Megatron's `DType.optimal_dtype`; Qwen's 151k vocabulary is
 * int32). Both files are written as the shards are read, shard by shard and row group by row group;
 * the per-document lengths go through a spill file, so memory does not grow with the corpus.
 */

const INDEX_HEADER = Buffer.from("MMIDIDX\x00\x00", "latin1");
const DTYPE_CODES = { uint8: 1, int32: 4, float32: 7, uint16: 8 } as const;
type TokenDtype = "uint16" | "int32";

export interface MegatronExportOptions {
  /** Append this token id (the tokenizer's end-of-document token) to every document, with loss 0. */
  appendEod?: number;
}

export interface MegatronSplitInfo {
  split: string;
  /** Path prefix Megatron takes (`--data-path`, `--train-data-path`): `<dir>/<split>`. */
  prefix: string;
  dtype: TokenDtype;
  documents: number;
  tokens: number;
  lossTokens: number;
  files: { path: string; bytes: number; sha256: string }[];
}

export interface MegatronExportResult {
  dir: string;
  splits: MegatronSplitInfo[];
  /** `<dir>/megatron.json`: the splits, dtype, tokenizer and file checksums. */
  metadataPath: string;
}

interface ManifestShape {
  tokenizer?: { name?: string; vocab_size?: number; vocab_sha256?: string };
  shards?: { path: string; split?: string; tokens?: number; documents?: number }[];
  layout?: { loss_weight?: boolean };
}

/** Megatron's `DType.optimal_dtype(cardinality)`. */
export function tokenDtype(vocabSize: number): TokenDtype {
  return vocabSize < 65500 ? "uint16" : "int32";
}

async function write(stream: WriteStream, chunk: Uint8Array): Promise<void> {
  if (!stream.write(chunk)) await once(stream, "drain");
}

async function close(stream: WriteStream): Promise<void> {
  stream.end();
  await once(stream, "finish");
}

/** Buffers small fixed-size values (lengths) into chunks for a stream. */
class ChunkedWriter {
  readonly stream: WriteStream;
  private buffer: Buffer;
  private used = 0;
  constructor(stream: WriteStream, size = 1 << 20) {
    this.stream = stream;
    this.buffer = Buffer.alloc(size);
  }
  async int32(value: number): Promise<void> {
    if (this.used + 4 > this.buffer.length) await this.flush();
    this.buffer.writeInt32LE(value, this.used);
    this.used += 4;
  }
  async int64(value: number): Promise<void> {
    if (this.used + 8 > this.buffer.length) await this.flush();
    this.buffer.writeBigInt64LE(BigInt(value), this.used);
    this.used += 8;
  }
  async flush(): Promise<void> {
    if (this.used === 0) return;
    // The stream keeps the chunk it is given: hand it a copy and reuse the buffer.
    await write(this.stream, Buffer.from(this.buffer.subarray(0, this.used)));
    this.used = 0;
  }
}

/** One split's two datasets being written: tokens and masks to `.bin`, lengths to a spill file. */
class SplitWriter {
  readonly ids: WriteStream;
  readonly mask: WriteStream;
  /** The float32 weights, when the shards carry `loss_weight`. */
  readonly weights: WriteStream | undefined;
  readonly lengths: ChunkedWriter;
  documents = 0;
  tokens = 0;
  lossTokens = 0;

  readonly prefix: string;
  readonly dtype: TokenDtype;
  readonly appendEod: number | undefined;

  constructor(prefix: string, dtype: TokenDtype, appendEod: number | undefined, withWeights: boolean) {
    this.prefix = prefix;
    this.dtype = dtype;
    this.appendEod = appendEod;
    this.ids = createWriteStream(`${prefix}.bin.tmp`);
    this.mask = createWriteStream(`${prefix}_loss_mask.bin.tmp`);
    this.weights = withWeights ? createWriteStream(`${prefix}_loss_weight.bin.tmp`) : undefined;
    this.lengths = new ChunkedWriter(createWriteStream(`${prefix}.lengths.tmp`));
  }

  async add(ids: ArrayLike<number>, mask: ArrayLike<number>, weights: ArrayLike<number> | undefined, where: string): Promise<void> {
    const eod = this.appendEod === undefined ? 0 : 1;
    const length = ids.length + eod;
    const tokens = this.dtype === "uint16" ? new Uint16Array(length) : new Int32Array(length);
    const limit = this.dtype === "uint16" ? 0xffff : 0x7fffffff;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      if (id < 0 || id > limit)
        throw new UserError(`${where}: token id ${id} does not fit ${this.dtype} (the manifest's vocab_size is too small?)`);
      tokens[i] = id;
    }
    const loss = new Uint8Array(length);
    loss.set(mask);
    if (this.appendEod !== undefined) tokens[ids.length] = this.appendEod;
    for (let i = 0; i < mask.length; i++) this.lossTokens += mask[i] as number;
    await write(this.ids, new Uint8Array(tokens.buffer));
    await write(this.mask, loss);
    if (this.weights) {
      if (!weights || weights.length !== ids.length)
        throw new UserError(`${where}: loss_weight is missing or differs in length from input_ids`);
      // The appended EOD weighs 0 like its mask.
      const values = new Float32Array(length);
      values.set(weights);
      await write(this.weights, new Uint8Array(values.buffer));
    }
    await this.lengths.int32(length);
    this.documents += 1;
    this.tokens += length;
  }

  /** Closes the `.bin` files and writes both `.idx` files from the spilled lengths. */
  async finish(): Promise<MegatronSplitInfo["files"]> {
    await close(this.ids);
    await close(this.mask);
    if (this.weights) await close(this.weights);
    await this.lengths.flush();
    await close(this.lengths.stream);
    const files: MegatronSplitInfo["files"] = [];
    for (const [name, itemSize, code] of [
      [this.prefix, this.dtype === "uint16" ? 2 : 4, DTYPE_CODES[this.dtype]],
      [`${this.prefix}_loss_mask`, 1, DTYPE_CODES.uint8],
      ...(this.weights ? ([[`${this.prefix}_loss_weight`, 4, DTYPE_CODES.float32]] as const) : []),
    ] as const) {
      await this.writeIndex(`${name}.idx.tmp`, itemSize, code);
      await rename(`${name}.bin.tmp`, `${name}.bin`);
      await rename(`${name}.idx.tmp`, `${name}.idx`);
      for (const extension of ["bin", "idx"]) {
        const path = `${name}.${extension}`;
        const { size } = await stat(path);
        files.push({ path, bytes: size, sha256: await fileSha256(path) });
      }
    }
    await rm(`${this.prefix}.lengths.tmp`, { force: true });
    return files;
  }

  private async writeIndex(path: string, itemSize: number, code: number): Promise<void> {
    const out = new ChunkedWriter(createWriteStream(path));
    const head = Buffer.alloc(INDEX_HEADER.length + 8 + 1 + 8 + 8);
    let at = INDEX_HEADER.copy(head, 0);
    at = head.writeBigUInt64LE(1n, at);
    at = head.writeUInt8(code, at);
    at = head.writeBigUInt64LE(BigInt(this.documents), at);
    head.writeBigUInt64LE(BigInt(this.documents + 1), at);
    await write(out.stream, head);
    // Sequence lengths: the spill file as it is (int32 little-endian).
    for await (const chunk of createReadStream(`${this.prefix}.lengths.tmp`)) await write(out.stream, chunk as Buffer);
    // Byte offsets: running sums of length × item size.
    let pointer = 0;
    let carry = Buffer.alloc(0);
    for await (const raw of createReadStream(`${this.prefix}.lengths.tmp`)) {
      const chunk = carry.length > 0 ? Buffer.concat([carry, raw as Buffer]) : (raw as Buffer);
      const whole = chunk.length - (chunk.length % 4);
      for (let i = 0; i < whole; i += 4) {
        await out.int64(pointer);
        pointer += chunk.readInt32LE(i) * itemSize;
      }
      carry = Buffer.from(chunk.subarray(whole));
    }
    // Document indices: every sequence is one document.
    for (let d = 0; d <= this.documents; d++) await out.int64(d);
    await out.flush();
    await close(out.stream);
  }

  async abort(): Promise<void> {
    for (const stream of [this.ids, this.mask, this.weights, this.lengths.stream]) stream?.destroy();
    for (const path of [
      `${this.prefix}.bin.tmp`,
      `${this.prefix}_loss_mask.bin.tmp`,
      `${this.prefix}_loss_weight.bin.tmp`,
      `${this.prefix}.lengths.tmp`,
    ])
      await rm(path, { force: true });
  }
}

interface ListCell {
  toArray(): ArrayLike<number>;
}

/** Writes `<dir>/<split>{,_loss_mask,_loss_weight}.{bin,idx}` for every split of a finished output (weights only with `loss_weight`). */
export async function exportMegatron(outputDir: string, dir: string, options: MegatronExportOptions = {}): Promise<MegatronExportResult> {
  const manifest = await readJsonFile<ManifestShape>(join(outputDir, "manifest.json"));
  if (!manifest?.shards) throw new UserError(`${outputDir} has no manifest.json with shards: export needs a finished lwm-data output`);
  const vocabSize = manifest.tokenizer?.vocab_size;
  if (!vocabSize) throw new UserError(`${outputDir}/manifest.json names no tokenizer.vocab_size: cannot choose the token dtype`);
  const dtype = tokenDtype(Math.max(vocabSize, (options.appendEod ?? 0) + 1));
  const withWeights = manifest.layout?.loss_weight === true;
  await mkdir(dir, { recursive: true });
  const bySplit = Map.groupBy(manifest.shards, (shard) => shard.split ?? "train");
  const splits: MegatronSplitInfo[] = [];
  for (const [split, shards] of [...bySplit].sort(([a], [b]) => a.localeCompare(b))) {
    const writer = new SplitWriter(join(dir, split), dtype, options.appendEod, withWeights);
    try {
      for (const shard of [...shards].sort((a, b) => a.path.localeCompare(b.path)))
        await exportShard(join(outputDir, shard.path), writer, withWeights);
      const files = await writer.finish();
      splits.push({
        split,
        prefix: join(dir, split),
        dtype,
        documents: writer.documents,
        tokens: writer.tokens,
        lossTokens: writer.lossTokens,
        files,
      });
    } catch (err) {
      await writer.abort();
      throw err;
    }
  }
  const metadataPath = join(dir, "megatron.json");
  await writeJsonFile(
    metadataPath,
    {
      format: "megatron-indexed-dataset",
      index_version: 1,
      tokenizer: manifest.tokenizer,
      token_dtype: dtype,
      loss_mask_dtype: "uint8",
      ...(withWeights ? { loss_weight_dtype: "float32" } : {}),
      append_eod: options.appendEod ?? null,
      splits: Object.fromEntries(
        splits.map((s) => [
          s.split,
          {
            prefix: s.split,
            loss_mask_prefix: `${s.split}_loss_mask`,
            ...(withWeights ? { loss_weight_prefix: `${s.split}_loss_weight` } : {}),
            documents: s.documents,
            tokens: s.tokens,
            loss_tokens: s.lossTokens,
            files: s.files.map((f) => ({ ...f, path: f.path.slice(dir.length + 1) })),
          },
        ]),
      ),
    },
    { indent: 2 },
  );
  return { dir, splits, metadataPath };
}

async function exportShard(path: string, writer: SplitWriter, withWeights: boolean): Promise<void> {
  const table = await openParquetTable(path).catch((err: Error) => {
    throw new UserError(`${path} is not a readable Parquet file (${err.message}); check the output with \`lwm-data verify\``);
  });
  try {
    const packed = table.schema.fields.some((field) => field.name === "cu_seqlens");
    const columns = [
      ...(packed ? ["input_ids", "loss_mask", "cu_seqlens"] : ["input_ids", "loss_mask"]),
      ...(withWeights ? ["loss_weight"] : []),
    ];
    for (const column of columns)
      if (!table.schema.fields.some((field) => field.name === column))
        throw new UserError(`${path}: column "${column}" is missing; is this an lwm-data shard?`);
    let row = 0;
    for (let group = 0; group < table.rowGroupRows.length; group++) {
      const batch = await table.readRowGroup(group, columns);
      const [ids, masks, bounds] = ["input_ids", "loss_mask", "cu_seqlens"].map(
        (name) => batch.getChild(name) as { get(i: number): ListCell } | null,
      );
      const weightCells = withWeights ? (batch.getChild("loss_weight") as { get(i: number): ListCell } | null) : null;
      if (!ids || !masks) throw new UserError(`${path}: row group ${group} has no input_ids or loss_mask`);
      for (let i = 0; i < batch.numRows; i++, row++) {
        const tokens = ids.get(i).toArray();
        const mask = masks.get(i).toArray();
        const weights = weightCells?.get(i).toArray();
        const where = `${path} row ${row}`;
        if (tokens.length !== mask.length) throw new UserError(`${where}: input_ids and loss_mask differ in length`);
        if (!packed) {
          await writer.add(tokens, mask, weights, where);
          continue;
        }
        if (!bounds) throw new UserError(`${where}: packed row without cu_seqlens`);
        const cuts = bounds.get(i).toArray();
        for (let d = 0; d + 1 < cuts.length; d++) {
          const [start, end] = [cuts[d] as number, cuts[d + 1] as number];
          await writer.add(
            (tokens as Int32Array).subarray(start, end),
            (mask as Uint8Array).subarray(start, end),
            (weights as Float32Array | undefined)?.subarray(start, end),
            `${where} document ${d}`,
          );
        }
      }
    }
  } finally {
    table.close();
  }
}
