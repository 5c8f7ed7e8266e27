import { posix } from "node:path";
import type { SourceRef } from "../core/trajectory.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { baseName, beside, listFolder, parentOf } from "../io/side-files.ts";
import { parseJsonLine, type Reader, type ReadItem } from "./reader.ts";
import { isRecord } from "./record-helpers.ts";

const FORMAT = "hf-dataset-metadata";

/**
 * Files that describe a Hugging Face dataset's data without holding any of it:
 *
 * - `datasets`' metadata: `state.json` and `dataset_info.json` of a `Dataset.save_to_disk` folder,
 *   `dataset_dict.json` of a `DatasetDict.save_to_disk` folder (a subfolder per split), and the
 *   `dataset_info.json` beside the Arrow files of its cache (`<name>-<split>.arrow`);
 * - a Hub dataset card: a `README.md` whose YAML front matter has a dataset card's keys
 *   (`configs`, `dataset_info`, `task_categories`, `size_categories`, `pretty_name`, …; a plain
 *   README, or one with only `license` / `tags` / `language`, is not one).
 *
 * Such a file stands for the data files it describes (`expand`): `planJob` reads those instead, and
 * lists the file as covered (`validate`: "stands for N file(s) read instead"), so a folder input
 * holding a saved dataset or a Hub snapshot reads its rows once and quarantines none of its
 * metadata. The data files are the Arrow files `state.json` lists (those of each split's
 * `state.json` for `dataset_dict.json`), the cache's `<name>-<split>[-NNNNN-of-NNNNN].arrow` files
 * its `dataset_info.json` names, and for a card the files its `configs[].data_files` patterns match
 * below its folder (without `configs`: its Parquet, Arrow, JSON and JSONL files). One whose data
 * files are not there is read as one quarantine entry saying so.
 */

/** `dataset_info.json` keys besides `features` (DatasetInfo's fields). */
const INFO_KEYS = [
  "builder_name",
  "citation",
  "config_name",
  "dataset_name",
  "dataset_size",
  "description",
  "download_checksums",
  "download_size",
  "homepage",
  "license",
  "post_processed",
  "size_in_bytes",
  "splits",
  "supervised_keys",
  "version",
];

/** Front matter keys only a dataset card has (a model card or a blog post shares `license`, `tags`, `language`). */
const CARD_KEYS = new Set([
  "configs",
  "dataset_info",
  "task_categories",
  "task_ids",
  "size_categories",
  "pretty_name",
  "annotations_creators",
  "language_creators",
  "source_datasets",
  "multilinguality",
  "paperswithcode_id",
  "train-eval-index",
]);

/** File endings a card without `configs` stands for (the data files the Hub reads by default). */
const DEFAULT_DATA_FILE = /\.(parquet|arrow|jsonl|ndjson|json)(\.(gz|zst))?$/i;
/** Files below a card's folder listed at most, and folders deep. */
const MAX_LISTED = 100_000;
const MAX_DEPTH = 8;
/** Metadata files are small: a larger one is not read whole to be expanded. */
const MAX_METADATA_BYTES = 16 << 20;

type Metadata =
  | { kind: "state"; files: string[] }
  | { kind: "dict"; splits: string[] }
  | { kind: "info"; name: string | undefined; splits: string[] }
  | { kind: "card" };

/** The metadata kind of a JSON value, if it is one. */
function jsonMetadata(value: unknown): Metadata | undefined {
  if (!isRecord(value)) return undefined;
  const files = value._data_files;
  if (Array.isArray(files) && "_fingerprint" in value && files.every((file) => isRecord(file) && typeof file.filename === "string"))
    return { kind: "state", files: files.map((file) => (file as { filename: string }).filename) };
  const keys = Object.keys(value);
  const { splits } = value;
  if (keys.length === 1 && Array.isArray(splits) && splits.length > 0 && splits.every((split) => typeof split === "string"))
    return { kind: "dict", splits: splits as string[] };
  if (isRecord(value.features) && INFO_KEYS.filter((key) => key in value).length >= 2) {
    const name = [value.dataset_name, value.builder_name].find((n): n is string => typeof n === "string" && n !== "");
    return { kind: "info", name, splits: isRecord(splits) ? Object.keys(splits) : [] };
  }
  return undefined;
}

/** The top-level keys of a head's YAML front matter (`---` on the first line), or undefined when it has none. */
function frontMatterKeys(head: string): string[] | undefined {
  const text = head.replace(/^\uFEFF/, "");
  if (!/^---[ \t]*\r?\n/.test(text)) return undefined;
  const body = text.slice(text.indexOf("\n") + 1);
  const close = body.search(/^(---|\.\.\.)[ \t]*\r?$/m);
  const matter = close === -1 ? body : body.slice(0, close);
  return [...matter.matchAll(/^([A-Za-z_][\w-]*)[ \t]*:/gm)].map((match) => match[1] as string);
}

/** A Hub dataset card: front matter with at least one key only dataset cards have. */
export function isDatasetCardHead(head: string): boolean {
  return frontMatterKeys(head)?.some((key) => CARD_KEYS.has(key)) ?? false;
}

function metadataOfHead(head: string): Metadata | undefined {
  if (isDatasetCardHead(head)) return { kind: "card" };
  // Parsed only when it names a key of one (the sniff sees every unclaimed JSONL line).
  if (!/"(_data_files|splits|features)"\s*:/.test(head)) return undefined;
  const parsed = parseJsonLine(head.replace(/^\uFEFF/, ""));
  return parsed.ok ? jsonMetadata(parsed.value) : undefined;
}

async function readMetadata(path: string): Promise<{ metadata: Metadata; text: string } | undefined> {
  const whole = await readWholeText(path, MAX_METADATA_BYTES);
  if ("error" in whole) return undefined;
  const metadata = metadataOfHead(whole.text);
  return metadata && { metadata, text: whole.text };
}

/** The files of `names` present in `dir`, as paths. */
async function present(dir: string, names: readonly string[]): Promise<string[]> {
  const { files } = await listFolder(dir);
  return names.filter((name) => files.has(name)).map((name) => beside(dir, name));
}

/** The Arrow files a save_to_disk folder's `state.json` lists, those present. */
async function savedArrowFiles(dir: string): Promise<string[]> {
  const state = beside(dir, "state.json");
  if (!(await listFolder(dir)).files.has("state.json")) return [];
  const read = await readMetadata(state);
  return read?.metadata.kind === "state" ? present(dir, read.metadata.files) : [];
}

/** Every file below `dir` (its path relative to `dir`, `/`-separated), hidden folders and files aside. */
async function filesBelow(dir: string, prefix = "", depth = 0, out: string[] = []): Promise<string[]> {
  const listing = await listFolder(dir);
  for (const name of [...listing.files.keys()].sort()) if (!name.startsWith(".") && out.length < MAX_LISTED) out.push(`${prefix}${name}`);
  if (depth < MAX_DEPTH)
    for (const sub of [...listing.dirs].sort())
      if (!sub.startsWith(".") && out.length < MAX_LISTED) await filesBelow(beside(dir, sub), `${prefix}${sub}/`, depth + 1, out);
  return out;
}

/** A card's `configs[].data_files` patterns (a string, a list of them, or a list of `{split, path}`). */
function cardPatterns(front: unknown): string[] {
  if (!isRecord(front) || !Array.isArray(front.configs)) return [];
  const patterns: string[] = [];
  const add = (value: unknown) => {
    if (typeof value === "string") patterns.push(value.replace(/^\.\//, ""));
    else if (Array.isArray(value)) for (const item of value) add(isRecord(item) ? item.path : item);
    else if (isRecord(value)) add(value.path);
  };
  for (const config of front.configs) if (isRecord(config)) add(config.data_files);
  return patterns;
}

/** The data files a dataset card describes, below its folder. */
async function cardDataFiles(path: string, text: string): Promise<string[]> {
  const dir = parentOf(path);
  const card = text.replace(/^\uFEFF/, "");
  const start = card.indexOf("\n") + 1;
  const end = card.slice(start).search(/^(---|\.\.\.)[ \t]*\r?$/m);
  let front: unknown;
  try {
    const { parse } = await import("yaml");
    front = parse(card.slice(start, end === -1 ? undefined : start + end));
  } catch {
    front = undefined;
  }
  const patterns = cardPatterns(front);
  const name = baseName(path);
  const files = (await filesBelow(dir)).filter((file) => file !== name);
  const matched = files.filter((file) =>
    patterns.length > 0 ? patterns.some((pattern) => posix.matchesGlob(file, pattern)) : DEFAULT_DATA_FILE.test(file),
  );
  return matched.map((file) => beside(dir, ...file.split("/")));
}

/** The data files a metadata file stands for, those present. */
async function dataFilesOf(path: string, metadata: Metadata, text: string): Promise<string[]> {
  const dir = parentOf(path);
  switch (metadata.kind) {
    case "state":
      return present(dir, metadata.files);
    case "dict": {
      const { dirs } = await listFolder(dir);
      const splits = metadata.splits.filter((split) => dirs.has(split));
      return (await Promise.all(splits.map((split) => savedArrowFiles(beside(dir, split))))).flat();
    }
    case "info": {
      const saved = await savedArrowFiles(dir);
      if (saved.length > 0 || !metadata.name) return saved;
      // A cache folder: <name>-<split>.arrow, or its shards <name>-<split>-00000-of-00003.arrow.
      const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      const shard = new RegExp(`^${literal(metadata.name)}-(${metadata.splits.map(literal).join("|")})(-\\d{5}-of-\\d{5})?\\.arrow$`);
      const { files } = await listFolder(dir);
      return [...files.keys()]
        .filter((name) => metadata.splits.length > 0 && shard.test(name))
        .sort()
        .map((name) => beside(dir, name));
    }
    case "card":
      return cardDataFiles(path, text);
  }
}

function describe(metadata: Metadata): string {
  switch (metadata.kind) {
    case "state":
      return "a `datasets` save_to_disk state.json";
    case "dict":
      return "a `datasets` DatasetDict's dataset_dict.json";
    case "info":
      return "a `datasets` dataset_info.json";
    case "card":
      return "a Hugging Face dataset card (YAML front matter with a dataset card's keys)";
  }
}

export const hfDatasetMetadataReader: Reader = {
  name: FORMAT,
  description:
    "Hugging Face dataset metadata (datasets' state.json, dataset_info.json, dataset_dict.json; a Hub dataset card README.md): stands for the data files it describes",
  domain: "from the data files it describes",

  sniff(head) {
    return metadataOfHead(head) !== undefined;
  },

  async expand(path: string): Promise<string[] | undefined> {
    const read = await readMetadata(path);
    if (!read) return undefined;
    const files = await dataFilesOf(path, read.metadata, read.text);
    return files.length > 0 ? [...new Set(files)].sort() : undefined;
  },

  async *read(path: string): AsyncGenerator<ReadItem> {
    // Only a file whose data files are not there is read (planning reads those instead of it).
    const source: SourceRef = { uri: path, format: FORMAT };
    const read = await readMetadata(path);
    const what = read ? describe(read.metadata) : "Hugging Face dataset metadata";
    const reason = `${what}: it describes a dataset's data files but holds no records, and none of those data files is here; give the data files (or their folder) as the input`;
    yield { kind: "quarantine", entry: { source, stage: "read", reason } };
  },
};
