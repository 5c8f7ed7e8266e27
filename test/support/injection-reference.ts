import { spawnSync } from "node:child_process";
import { ensurePythonEnv, PYTHON } from "./python-env.ts";

/**
 * Independent references for the injection tests, in Python from `.venv` (created on first use by
 * test/python/ensure-venv.sh from test/python/requirements.txt):
 *
 * - `hf`: Hugging Face `tokenizers` (Rust) on the same tokenizer.json with its added tokens
 *   removed, so `<|im_start|>` in the text is plain text to it. (`encode_special_tokens = True`
 *   is not the same thing: it only splits tokens marked `special`, while `<think>`,
 *   `<tool_call>`, … are non-special added tokens that it would still match.)
 * - `tiktoken`: the Python `tiktoken` package is not in requirements.txt, so this is tiktoken's
 *   algorithm written out: the encoding's own split regex run by `tokenizers`' Split
 *   pre-tokenizer (Oniguruma, not our JS regex or tiktoken's fancy-regex), then rank-ordered BPE
 *   over the encoding's ranks in pure Python (a whole piece that is a token is that token, as in
 *   tiktoken's core). Equivalent to `tiktoken`'s `encode_ordinary`.
 *
 * Both encode each text as one piece with no special tokens: what the text between two template
 * control tokens must become.
 */

export type ReferenceSpec = { kind: "hf"; path: string } | { kind: "tiktoken"; path: string };

const SCRIPT = String.raw`
import base64, json, sys
from tokenizers import Regex, Tokenizer, pre_tokenizers

request = json.load(sys.stdin)
texts = request["texts"]
if request["kind"] == "hf":
    with open(request["path"], encoding="utf-8") as f:
        spec = json.load(f)
    if request.get("keep_added"):
        tokenizer = Tokenizer.from_str(json.dumps(spec))
    else:
        spec["added_tokens"] = []
        tokenizer = Tokenizer.from_str(json.dumps(spec))
    out = [encoding.ids for encoding in tokenizer.encode_batch(texts, add_special_tokens=False)]
else:
    with open(request["path"], encoding="utf-8") as f:
        encoder = json.load(f)
    ranks = {}
    for line in encoder["bpe_ranks"].split("\n"):
        parts = line.split(" ")
        if parts[0] == "!":
            base = int(parts[1])
            for i, token in enumerate(parts[2:]):
                ranks[base64.b64decode(token)] = base + i
        elif len(parts) == 2:
            ranks[base64.b64decode(parts[0])] = int(parts[1])
    split = pre_tokenizers.Split(Regex(encoder["pat_str"]), behavior="isolated")

    def bpe(piece):
        if piece in ranks:
            return [ranks[piece]]
        parts = [piece[i : i + 1] for i in range(len(piece))]
        while True:
            best = None
            for i in range(len(parts) - 1):
                rank = ranks.get(parts[i] + parts[i + 1])
                if rank is not None and (best is None or rank < best[0]):
                    best = (rank, i)
            if best is None:
                return [ranks[part] for part in parts]
            i = best[1]
            parts[i : i + 2] = [parts[i] + parts[i + 1]]

    cache = {}
    out = []
    for text in texts:
        ids = []
        for piece, _ in split.pre_tokenize_str(text):
            if piece not in cache:
                cache[piece] = bpe(piece.encode("utf-8"))
            ids.extend(cache[piece])
        out.append(ids)
json.dump(out, sys.stdout)
`;

/**
 * Makes sure `.venv` has the reference tools (test/python/ensure-venv.sh creates it when missing);
 * throws, naming what to install, when it cannot: a missing reference fails, never skips.
 */
export function ensureReference(): void {
  ensurePythonEnv();
  const check = spawnSync(PYTHON, ["-c", "import tokenizers"], { encoding: "utf8" });
  if (check.status !== 0)
    throw new Error(`${PYTHON} cannot import tokenizers (bash test/python/ensure-venv.sh installs it): ${check.stderr}`);
}

/** The reference ids of each text; `keepAdded` (hf only) keeps the added tokens, as the trainer's tokenizer has them. */
export function referenceIds(spec: ReferenceSpec, texts: readonly string[], options: { keepAdded?: boolean } = {}): number[][] {
  const result = spawnSync(PYTHON, ["-c", SCRIPT], {
    input: JSON.stringify({ ...spec, texts, keep_added: options.keepAdded === true }),
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  if (result.status !== 0) throw new Error(`reference tokenizer failed (${result.status}): ${result.stderr}`);
  const ids = JSON.parse(result.stdout) as number[][];
  if (ids.length !== texts.length) throw new Error(`reference returned ${ids.length} results for ${texts.length} texts`);
  return ids;
}
