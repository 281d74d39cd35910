"""What the site's tests read from a built page's HTML without a browser: the URLs it makes the browser
fetch, its inline styles, whether a URL is on another host, and the page budget. Shared by
``test_build.py``, ``test_page_weight.py`` and ``test_editions_site.py``, which import it instead of one another."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

MAX_PAGE_BYTES = 1_000_000
"""Bytes of a page of its own (DESIGN.md's budget: 1 MB)."""
# Attributes that make a browser fetch something when the page loads.
FETCHING = {("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src"), ("source", "src"),
            ("video", "src"), ("audio", "src"), ("embed", "src"), ("object", "data"), ("img", "srcset")}


class _Resources(HTMLParser):
    """Collects the URLs a page loads (script/link/img/... sources) and its inline styles."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str]] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if (tag, name) in FETCHING and value:
                self.urls.append((tag, value))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False if tag == "style" else self._in_style

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)


def resources(page: Path) -> _Resources:
    parser = _Resources()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def is_external(url: str) -> bool:
    """A URL on another host (relative URLs and data: URIs stay on the site)."""
    parsed = urlparse(url.strip())
    return parsed.scheme in ("http", "https") or url.strip().startswith("//")
