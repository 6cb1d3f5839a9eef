"""Every relative link in the README, the changelog and docs/ points to a file (and heading) that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)


def _prose(page: Path) -> str:
    return FENCE.sub("", page.read_text(encoding="utf-8"))  # a link inside a code block is no link


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    return {
        re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        for heading in HEADING.findall(_prose(page))
    }


def relative_links(page: Path) -> list[str]:
    return [target for target in LINK.findall(_prose(page)) if not re.match(r"^[a-z]+:", target)]


def test_anchors_follow_github() -> None:
    assert {"the-web-page", "areasyaml", "kind-light", "2026-11-27--stops-30-and-31"} <= {
        *anchors(ROOT / "README.md"),
        *anchors(ROOT / "docs/devices.md"),
        *anchors(ROOT / "CHANGELOG.md"),
    }


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_every_relative_link_points_to_something(page: Path) -> None:
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: {broken}"
