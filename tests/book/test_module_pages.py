"""The module-source pages (Sphinx's viewcode, ``_modules/``: one template, about half of each
edition's pages) without a browser. The browser tests load ``browser.MODULE_SAMPLE`` of them (every
other page of the site they load all); here every module page is checked to hold nothing the sample
does not: the same scripts and stylesheets (so the same code runs in it as in the sample), no
highlighting token class the sample lacks (what axe-core's contrast check reads), and no heading word
longer than the sample's longest (what must wrap on a phone). What differs from page to page
otherwise is the text of the source, which the static tests of every page read (size, hosts, math)."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

import pytest
from browser import MODULE_SAMPLE

pytestmark = pytest.mark.book

_TOKEN = re.compile(r'<span class="([a-z][a-z0-9]{0,3})">')  # Pygments' short token classes
_H1 = re.compile(r"<h1>(.*?)</h1>", re.S)
_SCRIPT = re.compile(r'<script[^>]*\bsrc="([^"]*)"')
_STYLESHEET = re.compile(r'<link[^>]*\brel="(?:stylesheet|preload)"[^>]*\bhref="([^"]*)"')
_ICON = re.compile(r'<(?:i|span)\b[^>]*\bclass="([^"]*\bfa-[^"]*)"')


EDITIONS = ("", "zh")  # the English edition at the site's root, the Chinese one in zh/


def module_pages(html: Path) -> dict[str, Path]:
    """An edition's module-source pages, by their path in the edition."""
    return {page.relative_to(html).as_posix(): page for page in sorted((html / "_modules").rglob("*.html"))}


def loaded(html: Path, page: Path) -> tuple[str, ...]:
    """The scripts and stylesheets the page loads, each URL resolved against the page (so that pages
    at any depth compare)."""
    text = page.read_text(encoding="utf-8")
    urls = _SCRIPT.findall(text) + _STYLESHEET.findall(text)
    folder = posixpath.dirname(page.relative_to(html).as_posix())
    return tuple(posixpath.normpath(posixpath.join(folder, url.split("?")[0].split("#")[0])) for url in urls)


def longest_heading_word(page: Path) -> int:
    text = " ".join(re.sub(r"<[^>]+>", " ", h) for h in _H1.findall(page.read_text(encoding="utf-8")))
    return max((len(word) for word in text.split()), default=0)


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
def test_the_sample_is_module_pages_of_the_site(built_html: Path, edition: str) -> None:
    modules = module_pages(built_html / edition)
    assert len(modules) > 2 * len(MODULE_SAMPLE), f"only {len(modules)} module pages"
    assert set(MODULE_SAMPLE) <= set(modules), f"not in the site: {set(MODULE_SAMPLE) - set(modules)}"


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
def test_every_module_page_loads_what_a_sampled_page_loads(built_html: Path, edition: str) -> None:
    html = built_html / edition
    modules = module_pages(html)
    sampled = {loaded(html, modules[name]) for name in MODULE_SAMPLE}
    other = sorted(name for name, page in modules.items() if loaded(html, page) not in sampled)
    assert not other, f"module pages that load what no sampled page loads (add one to MODULE_SAMPLE): {other}"


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
def test_every_module_pages_highlighting_and_headings_are_in_the_sample(built_html: Path, edition: str) -> None:
    modules = module_pages(built_html / edition)
    tokens = {name: set(_TOKEN.findall(page.read_text(encoding="utf-8"))) for name, page in modules.items()}
    sampled = set().union(*(tokens[name] for name in MODULE_SAMPLE))
    assert {"k", "nn", "s2"} <= sampled, sampled  # a keyword, a module name, a string: the sample is highlighted
    lacking = {name: sorted(found - sampled) for name, found in tokens.items() if found - sampled}
    assert not lacking, f"token classes no sampled page shows (add a page that has them to MODULE_SAMPLE): {lacking}"
    longest = max(longest_heading_word(modules[name]) for name in MODULE_SAMPLE)
    longer = {name: n for name, page in modules.items() if (n := longest_heading_word(page)) > longest}
    assert not longer, f"headings with a word longer than the sample's ({longest}): add one to MODULE_SAMPLE: {longer}"


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
def test_every_module_pages_icons_are_in_the_sample(built_html: Path, edition: str) -> None:
    """The theme's icons (``<i class="fa-...">``, drawn by Font Awesome in the browser): none the sample lacks."""
    modules = module_pages(built_html / edition)
    icons = {name: set(_ICON.findall(page.read_text(encoding="utf-8"))) for name, page in modules.items()}
    sampled = set().union(*(icons[name] for name in MODULE_SAMPLE))
    assert sampled, "no icon on the sampled pages"
    lacking = {name: sorted(found - sampled) for name, found in icons.items() if found - sampled}
    assert not lacking, f"icons no sampled page shows (add a page that has them to MODULE_SAMPLE): {lacking}"
