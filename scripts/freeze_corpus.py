"""Write the frozen training corpus, `model/data/corpus.jsonl.gz`, from the lessons and Python's docstrings.

    python scripts/freeze_corpus.py            # from content/ and the running Python's standard library

Run it only to move the corpus on on purpose: every shipped model was trained on the snapshot, and a
new one means retraining them all (`python scripts/ship_models.py`). One JSON object per line — a
header `{"snapshot": ..., "python": ...}`, then `{"name": ..., "text": ...}`, lessons first, then one
document per standard-library module — gzip'd with no time stamp: the same text gives the same bytes.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from model.corpus import FROZEN_CORPUS, lesson_documents, stdlib_documents  # noqa: E402


def main() -> int:
    documents = lesson_documents(ROOT / "content") + stdlib_documents()
    version = ".".join(map(str, sys.version_info[:3]))
    header = json.dumps({"snapshot": "tutor-corpus/1", "python": version}) + "\n"
    lines = header + "".join(json.dumps({"name": d.name, "text": d.text}, ensure_ascii=False) + "\n" for d in documents)
    FROZEN_CORPUS.parent.mkdir(parents=True, exist_ok=True)
    with FROZEN_CORPUS.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as out:
        out.write(lines.encode("utf-8"))
    print(
        f"wrote {FROZEN_CORPUS.relative_to(ROOT)}: {len(documents)} documents, "
        f"{sum(len(d.text) for d in documents):,} characters (Python {version}), "
        f"{FROZEN_CORPUS.stat().st_size:,} bytes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
