import { Transform, type TransformCallback } from "node:stream";
import { DictionaryBatch } from "apache-arrow/fb/dictionary-batch";
import type { Field } from "apache-arrow/fb/field";
import { Message } from "apache-arrow/fb/message";
import { MessageHeader } from "apache-arrow/fb/message-header";
import { RecordBatch } from "apache-arrow/fb/record-batch";
import { Schema } from "apache-arrow/fb/schema";
import { ByteBuffer } from "flatbuffers";

/*
 * The Arrow IPC stream's framing, checked before apache-arrow decodes a message. Its decoder
 * trusts the lengths a message states: a damaged schema whose field count reads 2^31 sends it into
 * a synchronous loop that never ends (found by fuzzing one byte range of a `datasets` file), and a
 * record batch claiming 2^40 rows would have the reader iterate them. So every message's metadata
 * is parsed here first (the same generated flatbuffers classes apache-arrow uses) and held to what
 * its bytes can hold: a vector of N tables or structs needs at least 4·N (16·N for nodes and
 * buffers) bytes of metadata, a batch's rows at most 8 per body byte (a validity bit each; an
 * all-null column of type Null, which needs no bytes, is the exception this refuses), a body no
 * longer than what is left of the file. The first message that fails ends the stream right before
 * it, so the rows before are read and the break is reported with the reason.
 *
 * Stream format (columnar.html "Encapsulated message format"): [0xFFFFFFFF] int32 metadata length,
 * the Message flatbuffer padded to 8 bytes, then its body (`bodyLength` bytes); before Arrow 0.15
 * without the continuation marker. A metadata length of 0 ends the stream.
 */

/** Metadata longer than this is not believed (a schema of thousands of fields is a few MB). */
const MAX_METADATA_BYTES = 64 << 20;

export interface FramingBreak {
  /** 0-based message in the stream (the schema is message 0). */
  message: number;
  /** Byte offset of the message in the stream. */
  offset: number;
  reason: string;
}

/** Passes an IPC stream through, cut before the first message whose framing is implausible (`broken`). */
export class IpcFramingGuard extends Transform {
  broken: FramingBreak | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of the current message's body still to pass through. */
  private bodyLeft = 0;
  private message = 0;
  private offset = 0;
  private ended = false;

  /** The stream's length when known (a local file), to bound a body's length. */
  private readonly streamBytes: number | undefined;
  /** The IPC file format: its footer follows the end-of-stream marker. */
  private readonly footerFollows: boolean;

  constructor(options: { streamBytes?: number | undefined; fileFormat: boolean }) {
    super();
    this.streamBytes = options.streamBytes;
    this.footerFollows = options.fileFormat;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.ended) {
      done();
      return;
    }
    let at = 0;
    while (at < chunk.length && !this.ended) {
      if (this.bodyLeft > 0) {
        const take = Math.min(this.bodyLeft, chunk.length - at);
        this.push(chunk.subarray(at, at + take));
        this.bodyLeft -= take;
        this.offset += take;
        at += take;
        continue;
      }
      this.pending.push(chunk.subarray(at));
      this.pendingBytes += chunk.length - at;
      at = chunk.length;
      this.nextHeader();
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    // What is left is a message cut short: apache-arrow reports it as the break it is.
    if (!this.ended && this.pendingBytes > 0) this.push(Buffer.concat(this.pending));
    done();
  }

  /** Frames as many whole message headers (prefix + metadata) as are pending. */
  private nextHeader(): void {
    for (;;) {
      if (this.ended || this.bodyLeft > 0 || this.pendingBytes < 4) return;
      const buffered = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
      this.pending = [buffered];
      const continuation = buffered.readUInt32LE(0) === 0xffff_ffff;
      const prefix = continuation ? 8 : 4;
      if (buffered.length < prefix) return;
      const length = buffered.readInt32LE(prefix - 4);
      if (length === 0) {
        // End of stream. In the file format its footer follows; in a stream nothing may: bytes
        // after the marker are a damaged length read as 0 (or another stream appended), and the
        // rows they hold would be lost without a word.
        const after = this.streamBytes === undefined ? 0 : this.streamBytes - (this.offset + prefix);
        if (!this.footerFollows && after > 0) {
          this.refuse(`an end-of-stream marker, but ${after} more bytes follow it`);
          return;
        }
        this.push(buffered.subarray(0, prefix));
        this.stop();
        return;
      }
      if (length < 0 || length > MAX_METADATA_BYTES) {
        this.refuse(`its metadata length reads ${length} bytes`);
        return;
      }
      if (buffered.length < prefix + length) return;
      const metadata = buffered.subarray(prefix, prefix + length);
      let body: number | string;
      try {
        body = this.check(metadata);
      } catch (err) {
        this.refuse(`its metadata cannot be read: ${(err as Error).message}`);
        return;
      }
      if (typeof body === "string") {
        this.refuse(body);
        return;
      }
      const left = this.streamBytes === undefined ? undefined : this.streamBytes - (this.offset + prefix + length);
      if (left !== undefined && body > left) {
        this.refuse(`its body is ${body} bytes, more than the ${left} left in the file`);
        return;
      }
      this.push(buffered.subarray(0, prefix + length));
      this.offset += prefix + length;
      this.message++;
      const rest = buffered.subarray(prefix + length);
      this.pending = [];
      this.pendingBytes = 0;
      this.bodyLeft = body;
      if (rest.length === 0) return;
      const take = Math.min(body, rest.length);
      if (take > 0) {
        this.push(rest.subarray(0, take));
        this.bodyLeft -= take;
        this.offset += take;
      }
      if (rest.length > take) {
        this.pending = [rest.subarray(take)];
        this.pendingBytes = rest.length - take;
      }
    }
  }

  /** The body length a plausible message states; a string saying why it is not plausible. */
  private check(metadata: Buffer): number | string {
    const bytes = metadata.length;
    const message = Message.getRootAsMessage(new ByteBuffer(new Uint8Array(metadata.buffer, metadata.byteOffset, bytes)));
    const body = Number(message.bodyLength());
    if (!Number.isSafeInteger(body) || body < 0) return `its body length reads ${message.bodyLength()}`;
    const type = message.headerType();
    if (type === MessageHeader.Schema) {
      const schema = message.header(new Schema()) as Schema | null;
      return schema ? (schemaProblem(schema, bytes) ?? body) : "its schema header is missing";
    }
    if (type === MessageHeader.RecordBatch || type === MessageHeader.DictionaryBatch) {
      const batch =
        type === MessageHeader.RecordBatch
          ? (message.header(new RecordBatch()) as RecordBatch | null)
          : ((message.header(new DictionaryBatch()) as DictionaryBatch | null)?.data() ?? null);
      if (!batch) return "its record batch header is missing";
      return batchProblem(batch, bytes, body) ?? body;
    }
    return body;
  }

  private refuse(why: string): void {
    this.broken = { message: this.message, offset: this.offset, reason: `message ${this.message} at byte ${this.offset}: ${why}` };
    this.stop();
  }

  private stop(): void {
    this.ended = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.push(null);
  }
}

/** A schema whose vectors state more entries than its metadata could hold (each a 4-byte offset at least). */
function schemaProblem(schema: Schema, bytes: number): string | undefined {
  const most = Math.floor(bytes / 4);
  if (schema.fieldsLength() > most) return `its schema states ${schema.fieldsLength()} fields in ${bytes} bytes`;
  if (schema.customMetadataLength() > most) return `its schema states ${schema.customMetadataLength()} metadata entries in ${bytes} bytes`;
  let visited = 0;
  const stack: Field[] = [];
  for (let i = 0; i < schema.fieldsLength(); i++) {
    const field = schema.fields(i);
    if (field) stack.push(field);
  }
  while (stack.length > 0) {
    const field = stack.pop() as Field;
    if (++visited > most) return `its schema states more than ${most} fields in ${bytes} bytes`;
    const children = field.childrenLength();
    if (children > most || field.customMetadataLength() > most) return `a field states ${children} children in ${bytes} bytes`;
    for (let i = 0; i < children; i++) {
      const child = field.children(i);
      if (child) stack.push(child);
    }
  }
  return undefined;
}

/** A batch whose node or buffer vectors, or row count, its bytes cannot hold. */
function batchProblem(batch: RecordBatch, bytes: number, body: number): string | undefined {
  if (batch.nodesLength() * 16 > bytes) return `its record batch states ${batch.nodesLength()} field nodes in ${bytes} bytes`;
  if (batch.buffersLength() * 16 > bytes) return `its record batch states ${batch.buffersLength()} buffers in ${bytes} bytes`;
  const rows = Number(batch.length());
  if (!Number.isSafeInteger(rows) || rows < 0) return `its record batch states ${batch.length()} rows`;
  if (rows > Math.max(8 * body, 8)) return `its record batch states ${rows} rows in a body of ${body} bytes`;
  return undefined;
}
