"""Write data/knowledge/explainers.parquet from data/knowledge/src/explainers.jsonl.

The output has the column layout of FineWeb on the Hugging Face Hub (HuggingFaceFW/fineweb), so
the demo reads a Parquet text source in the shape real CPT corpora come in:

    text            string   the document, paragraphs separated by blank lines
    id              string   "<urn:uuid:...>", a uuid5 of the row's url (deterministic)
    dump            string   "lwm-data-demo" for every row (FineWeb: the crawl, e.g. "CC-MAIN-2024-10")
    url             string   a made-up https://example.org/lwm-data/knowledge/<slug of the title> URL
    date            string   the project's fixed demo clock, "2026-01-15T12:00:00Z"
    file_path       string   where the row came from: "data/knowledge/src/explainers.jsonl#L<line>"
    language        string   "en"
    language_score  double   1.0: hand-written English, no language classifier was run
    token_count     int64    whitespace-separated words (str.split()), NOT tokenizer tokens as in
                             FineWeb (which counts GPT-2 tokens); a stand-in of the same type

The source's own `id` ("kb-tech-01"), `topic` and `title` are not FineWeb columns and are not
written; the title survives in the url's slug.

Row groups hold 4 rows, so a reader that streams row group by row group sees several (9 rows:
4 + 4 + 1). Compression is zstd. The file is byte-for-byte reproducible: the rows keep the source
order, the schema carries no pandas metadata, and the Parquet footer records only the writer's
`created_by` (the pyarrow version), no timestamp. Rerunning with the same pyarrow version gives
the same sha256 (printed at the end).

Run with the project's venv:  .venv/bin/python scripts/make-knowledge-parquet.py
"""

import hashlib
import json
import re
import sys
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "data" / "knowledge" / "src" / "explainers.jsonl"
OUTPUT = ROOT / "data" / "knowledge" / "explainers.parquet"

DUMP = "lwm-data-demo"
DATE = "2026-01-15T12:00:00Z"  # the demo recordings' fixed clock (scripts/record-demo/common.ts)
URL_PREFIX = "https://example.org/lwm-data/knowledge/"
ROW_GROUP_ROWS = 4

SCHEMA = pa.schema(
    [
        ("text", pa.string()),
        ("id", pa.string()),
        ("dump", pa.string()),
        ("url", pa.string()),
        ("date", pa.string()),
        ("file_path", pa.string()),
        ("language", pa.string()),
        ("language_score", pa.float64()),
        ("token_count", pa.int64()),
    ]
)


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def read_source() -> list[dict]:
    rows = []
    seen_ids: set[str] = set()
    seen_urls: set[str] = set()
    relative = SOURCE.relative_to(ROOT).as_posix()
    with SOURCE.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            doc = json.loads(line)
            for field in ("id", "text", "topic", "title"):
                if not isinstance(doc.get(field), str) or not doc[field].strip():
                    sys.exit(f"{relative}:{number}: missing or empty {field!r}")
            if doc["id"] in seen_ids:
                sys.exit(f"{relative}:{number}: duplicate id {doc['id']!r}")
            seen_ids.add(doc["id"])
            url = URL_PREFIX + slug(doc["title"])
            if url in seen_urls:
                sys.exit(f"{relative}:{number}: two titles give the url {url}")
            seen_urls.add(url)
            rows.append(
                {
                    "text": doc["text"],
                    "id": f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, url)}>",
                    "dump": DUMP,
                    "url": url,
                    "date": DATE,
                    "file_path": f"{relative}#L{number}",
                    "language": "en",
                    "language_score": 1.0,
                    "token_count": len(doc["text"].split()),
                }
            )
    return rows


def main() -> None:
    rows = read_source()
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        table,
        OUTPUT,
        row_group_size=ROW_GROUP_ROWS,
        compression="zstd",
        compression_level=3,
        use_dictionary=True,
        write_statistics=True,
        version="2.6",
        data_page_version="1.0",
    )
    meta = pq.ParquetFile(OUTPUT).metadata
    digest = hashlib.sha256(OUTPUT.read_bytes()).hexdigest()
    print(
        f"{OUTPUT.relative_to(ROOT).as_posix()}: {meta.num_rows} rows, {meta.num_row_groups} row groups, "
        f"{sum(r['token_count'] for r in rows)} words, {OUTPUT.stat().st_size} bytes, sha256 {digest}"
    )


if __name__ == "__main__":
    main()
