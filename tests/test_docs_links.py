"""Every relative link in README.md, docs/ and content/README.md points at a file that exists, and an anchor
(`#…`) at a heading of that file, as GitHub spells heading anchors: a moved section must take its links along."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(markdown: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    found = set()
    for line in markdown.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def _pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "content" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_docs_exist() -> None:
    assert {p.name for p in (ROOT / "docs").glob("*.md")} >= {
        "model.md",
        "models.md",
        "training.md",
        "gpt2.md",
        "performance.md",
        "development.md",
    }


def test_relative_links_resolve() -> None:
    broken = []
    for page in _pages():
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:, tutor: (the lessons' own links)
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
