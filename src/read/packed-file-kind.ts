/**
 * Files lwm-data does not unpack itself, told from their first bytes (as text decoded from UTF-8,
 * the way format detection sees them), so that refusing one says what it is and what to do rather
 * than "binary data". lwm-data decompresses gzip and zstd itself (src/io/open-input.ts) and reads
 * Parquet and OpenCode's, Crush's, Cursor's, Zed's and Warp's SQLite databases (told before this: src/read/registry.ts `detectFormat`);
 * bzip2, xz, zip, tar, other SQLite files and UTF-16 text reach detection as they are.
 */
export interface PackedFileKind {
  /** What the file is: "a bzip2-compressed file". */
  what: string;
  /** What to do instead; FILE stands for the file's name, STEM for it without .bz2/.xz (packedFileAdvice). */
  advice: string;
}

const RECOMPRESS = "lwm-data decompresses gzip (.gz) and zstd (.zst) itself";

/** Each kind's signature at the start of the decoded head (invalid UTF-8 bytes read as U+FFFD). */
const KINDS: readonly { test: (head: string) => boolean; kind: PackedFileKind }[] = [
  {
    test: (head) => /^BZh[1-9]1AY&SY/.test(head),
    kind: {
      what: "a bzip2-compressed file",
      advice: `${RECOMPRESS}: decompress it first (\`bunzip2 -k FILE\`) or recompress it (\`bzcat FILE | zstd -o STEM.zst\`)`,
    },
  },
  {
    test: (head) => head.startsWith("\ufffd7zXZ\u0000"),
    kind: {
      what: "an xz-compressed file",
      advice: `${RECOMPRESS}: decompress it first (\`unxz -k FILE\`) or recompress it (\`xzcat FILE | zstd -o STEM.zst\`)`,
    },
  },
  {
    test: (head) => head.startsWith("7z\ufffd\ufffd'\u001c"),
    kind: { what: "a 7-Zip archive", advice: "extract it (`7z x FILE`) and give the extracted files (or their folder) as inputs" },
  },
  {
    test: (head) => head.startsWith("PK\u0003\u0004") || head.startsWith("PK\u0005\u0006"),
    kind: {
      what: "a zip archive",
      advice: "extract it (`unzip FILE -d DIR`) and give the folder as the input: its files are then read one by one",
    },
  },
  {
    test: (head) => head.length > 262 && head.slice(257, 262) === "ustar",
    kind: { what: "a tar archive", advice: "extract it (`tar -xf FILE -C DIR`) and give the folder as the input" },
  },
  {
    test: (head) => head.startsWith("SQLite format 3\u0000"),
    kind: {
      what: "an SQLite database",
      advice:
        "lwm-data reads no database but OpenCode's own (`opencode.db`, told by its session, message and part tables) Crush's (`crush.db`, told by its sessions and messages tables) Cursor's (`state.vscdb` in Cursor's globalStorage, told by its cursorDiskKV table) Zed's (`threads/threads.db`, told by its threads table) and the Warp terminal's (`warp.sqlite`, told by its blocks table), which this file does not show: export the records as JSON or JSONL and give those (an OpenCode database lwm-data cannot read: `opencode export <sessionID> > <sessionID>.json` writes one session as a document lwm-data reads)",
    },
  },
  {
    test: isUtf16Text,
    kind: { what: "UTF-16 text", advice: "lwm-data reads UTF-8: convert it first (`iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8`)" },
  },
  {
    test: (head) => head.startsWith("\ufffdPNG\r\n"),
    kind: {
      what: "a PNG image",
      advice: "give the trajectory file that refers to it as the input; screenshots are read as its companions where a format has them",
    },
  },
];

/** The kind's advice for the file named `name`. */
export function packedFileAdvice(kind: PackedFileKind, name: string): string {
  return kind.advice.replaceAll("FILE", name).replaceAll("STEM", name.replace(/\.(?:bz2|xz)$/i, ""));
}

/** What packed file `head` (the first decoded bytes) starts, or undefined. */
export function packedFileKind(head: string): PackedFileKind | undefined {
  for (const { test, kind } of KINDS) if (test(head)) return kind;
  return undefined;
}

/** A UTF-16 byte-order mark (FF FE / FE FF, each invalid UTF-8), or ASCII text with a NUL after (LE) or before (BE) each character. */
function isUtf16Text(head: string): boolean {
  const text = head.startsWith("\ufffd\ufffd") ? head.slice(2) : head;
  if (text.length < 8) return false;
  const nulAt = text.charCodeAt(0) === 0 ? 0 : 1;
  for (let i = 0; i < 8; i++) {
    const code = text.charCodeAt(i);
    const printable = code === 9 || code === 10 || code === 13 || (code >= 0x20 && code <= 0x7e);
    if (i % 2 === nulAt ? code !== 0 : !printable) return false;
  }
  return true;
}
