"""Both editions at build time: the language switch, the verdicts' language, links to English
(part of :mod:`editions`).

Every page of either edition gets a language switch in its header, a relative link to the same
page in the other edition (to the other edition's first page where that page is not translated
yet), and ``<link rel="alternate" hreflang>`` in its head; the lab checkers' stored verdicts are
rendered in the edition's language. In the Chinese edition, a reference to a page, label or API
object it does not hold yet leads to the English page (``objects.inv`` of the English build).
"""


import html
import json
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from docutils import nodes

from editions_records import ZH, toc_docnames

__all__ = [
    "GENERATED_PAGES",
    "edition_of",
    "localise_verdicts",
    "switch_target",
]

GENERATED_PAGES = ("genindex", "search", "py-modindex")
"""Pages Sphinx writes in both editions without a source file (the module index: both editions document modules)."""
# the link to each edition, on a page of the other: the tooltip in the language of the page it sits on
_EDITIONS = {"en": {"text": "English", "hreflang": "en", "title": "阅读本页的英文版"},
             "zh": {"text": "中文", "hreflang": "zh-CN", "title": "Read this page in Chinese"}}
_ZH_MISSING_TITLE = "This page has no Chinese version yet: go to the Chinese edition's first page"


def edition_of(app: Any) -> str:
    """``"zh"`` for the Chinese edition's build (Sphinx ``language`` ``zh_CN``), else ``"en"``."""
    return "zh" if str(app.config.language or "").lower().startswith("zh") else "en"


def english_root(app: Any) -> Path:
    """The English edition's source folder, seen from either build."""
    srcdir = Path(app.srcdir).resolve()
    return srcdir.parent if edition_of(app) == "zh" else srcdir


def switch_target(pagename: str, edition: str, other_pages: Iterable[str], other_root: str) -> tuple[str, bool]:
    """Where a page's language switch leads, relative to the page.

    Args:
        pagename: The page, e.g. ``"book/03-scaling/index"``.
        edition: The page's edition, ``"en"`` or ``"zh"``.
        other_pages: The other edition's pages.
        other_root: The other edition's first page (used when it lacks ``pagename``).

    Returns:
        ``(relative URL, whether the other edition lacks the page)``.
    """
    up = "../" * pagename.count("/")
    base = f"{up}{ZH}/" if edition == "en" else f"{up}../"
    missing = pagename not in set(other_pages)
    return f"{base}{other_root if missing else pagename}.html", missing


def other_edition(app: Any) -> tuple[list[str], str, bool]:
    """The other edition's pages (seen from the Chinese edition, with the English site's module-source
    pages, ``_modules/...``: the switch of a Chinese one leads to the same English one), its first page,
    and (seen from the English edition) whether the Chinese one documents the same modules."""
    cached = getattr(app, "_editions_other", None)
    if cached is None:
        root = english_root(app)
        book = root if edition_of(app) == "zh" else root / ZH
        docnames = toc_docnames(book)
        pages = [*docnames, *GENERATED_PAGES]
        if edition_of(app) == "zh":  # the English site, built first, holds every module's source page (viewcode)
            modules = Path(app.config.editions_english_html) / "_modules"
            pages += [path.relative_to(modules.parent).with_suffix("").as_posix() for path in modules.rglob("*.html")]
        cached = (pages, docnames[0] if docnames else "index",
                  # the Chinese edition, built second, documents the same modules once it has every API page
                  edition_of(app) == "en" and set(_api_pages(root)) <= set(docnames))
        app._editions_other = cached
    return cached


def _api_pages(root: Path) -> list[str]:
    return [docname for docname in toc_docnames(root) if docname.startswith("book/api/")]


def _other_edition_pages(app: Any, pagename: str) -> tuple[list[str], str]:
    """:func:`other_edition`'s pages and first page; with ``pagename`` among the pages when it is an
    English module-source page (``_modules/...``) and the Chinese edition has every API page."""
    pages, first, same_modules = other_edition(app)
    if same_modules and pagename.startswith("_modules/"):
        pages = [*pages, pagename]
    return pages, first


def _page_context(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """The language switch of a page (``html-page-context``): ``edition_switch`` for the header
    template, and ``<link rel="alternate">`` in the head."""
    edition = edition_of(app)
    other = "en" if edition == "zh" else "zh"
    pages, first = _other_edition_pages(app, pagename)
    url, missing = switch_target(pagename, edition, pages, first)
    labels = _EDITIONS[other]
    context["edition_switch"] = {"url": url, "text": labels["text"], "hreflang": labels["hreflang"],
                                 "title": _ZH_MISSING_TITLE if missing and other == "zh" else labels["title"],
                                 "edition": other, "missing": missing}
    if not missing:
        context["metatags"] = context.get("metatags", "") + (
            f'\n    <link rel="alternate" hreflang="{labels["hreflang"]}" href="{html.escape(url)}" />')


_VERDICT = re.compile(r'<p style="(?P<style>[^"]*)" data-check="(?P<record>[^"]*)">(?P<text>.*?)</p>', re.DOTALL)


def localise_verdicts(markup: str, language: str) -> str:
    """Renders every stored checker verdict of an output in ``language`` (see :mod:`helpers.exercises`).

    Args:
        markup: An HTML output of a notebook cell.
        language: ``"en"`` or ``"zh"``.

    Returns:
        The output with each ``<p data-check=...>`` verdict rendered again.
    """
    def render(match: re.Match[str]) -> str:
        from helpers.exercises import CheckResult

        record = json.loads(html.unescape(match["record"]))
        verdict = CheckResult(record["passed"], "", record["key"], record["fields"])
        return verdict.in_language(language)._repr_html_()

    return _VERDICT.sub(render, markup)


def raw_outputs(doctree: Any) -> Iterable[Any]:
    return (node for node in doctree.findall(nodes.raw) if "html" in node.get("format", "").split())


def set_raw(node: Any, markup: str) -> None:
    node.children = [nodes.Text(markup)]
    node.rawsource = markup


_GENERATED_ALT = re.compile(r'(<p [^>]*data-alt="generated") data-alt-zh="([^"]*)"([^>]*>)([^<]*)(</p>)')
_GENERATED_LABEL = re.compile(r'aria-label="([^"]*)"([^>]*?) data-label-zh="([^"]*)"')


def localise_generated_alts(markup: str, edition: str) -> str:
    """A figure's generated text alternative (``helpers.viz.renderer.describe_figure``) in the edition's
    language: the Chinese sentence the figure carries (``data-alt-zh``, ``data-label-zh``) replaces the
    English one in Chinese; in English it is dropped.

    Args:
        markup: A cell's HTML output.
        edition: ``"en"`` or ``"zh"``.

    Returns:
        The markup, with no ``data-alt-zh`` or ``data-label-zh`` left.
    """
    zh = edition == "zh"
    markup = _GENERATED_ALT.sub(lambda m: m[1] + m[3] + (m[2] if zh else m[4]) + m[5], markup)
    return _GENERATED_LABEL.sub(lambda m: f'aria-label="{m[3] if zh else m[1]}"{m[2]}', markup)


def _localise_outputs(app: Any, doctree: Any, docname: str) -> None:
    """``doctree-resolved``: the stored verdicts and the generated text alternatives in the edition's language."""
    edition = edition_of(app)
    for node in raw_outputs(doctree):
        markup = node.astext()
        changed = localise_verdicts(markup, edition) if "data-check=" in markup else markup
        if "data-alt-zh=" in changed or "data-label-zh=" in changed:
            changed = localise_generated_alts(changed, edition)
        if changed != markup:
            set_raw(node, changed)


def _config_inited(app: Any, config: Any) -> None:
    """The switch's template in the article header of every page, and its stylesheet."""
    here = Path(__file__).resolve().parent
    if str(here / "templates") not in config.templates_path:
        config.templates_path.append(str(here / "templates"))
    if str(here / "static") not in config.html_static_path:
        config.html_static_path.append(str(here / "static"))  # editions.css: the switch in the header's row
    options = dict(config.html_theme_options or {})
    header_end = options.get("article_header_end") or ["article-header-buttons.html"]
    if isinstance(header_end, str):
        header_end = [item.strip() for item in header_end.split(",") if item.strip()]
    if "edition-switch.html" not in header_end:
        header_end = ["edition-switch.html", *header_end]
    options["article_header_end"] = header_end
    config.html_theme_options = options


def english_inventory(app: Any) -> dict[str, dict[str, tuple[str, str, str, str]]]:
    """The English build's ``objects.inv`` (``{"py:function": {name: entry}}``), read once."""
    cached = getattr(app, "_editions_inventory", None)
    if cached is None:
        from sphinx.util.inventory import InventoryFile

        path = Path(app.config.editions_english_html) / "objects.inv"
        cached = {}
        if path.is_file():
            with path.open("rb") as stream:
                cached = InventoryFile.load(stream, "", posixpath.join)
        app._editions_inventory = cached
    return cached


def _fallback_to_english(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """``missing-reference`` in the Chinese edition: a link to the English page that holds the target."""
    if edition_of(app) != "zh":
        return None
    inventory = english_inventory(app)
    domain, reftype, target = node.get("refdomain", ""), node.get("reftype", ""), node.get("reftarget", "")
    refdoc = node.get("refdoc", "")
    entry = None
    if domain == "std" and reftype == "doc":
        docname = posixpath.normpath(target.lstrip("/") if target.startswith("/")
                                     else posixpath.join(posixpath.dirname(refdoc), target))
        entry = inventory.get("std:doc", {}).get(docname)
    elif domain:
        try:
            objtypes = env.get_domain(domain).objtypes_for_role(reftype) or []
        except Exception:  # an unknown domain: nothing to fall back to
            objtypes = []
        names = [target] + ([f"{node['py:module']}.{target}"] if node.get("py:module") else [])
        for objtype in objtypes:
            for name in names:
                entry = entry or inventory.get(f"{domain}:{objtype}", {}).get(name)
    if entry is None:
        return None
    uri, title = entry[2], entry[3]
    up = "../" * (refdoc.count("/") + 1)
    reference = nodes.reference("", "", internal=False, refuri=up + uri, reftitle="英文版（中文版尚无此页）",
                                classes=["edition-fallback"])
    if domain == "std" and reftype == "doc" and not node.get("refexplicit") and title and title != "-":
        reference += nodes.Text(title)
    else:
        reference += contnode
    return reference


def _switch_outdated(app: Any, env: Any, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """``env-get-outdated``: every page is rebuilt when the other edition's pages changed since the last
    build (each page's language switch names them)."""
    other = other_edition(app)
    key = (tuple(other[0]), *other[1:])
    if getattr(env, "editions_other_pages", None) != key:
        env.editions_other_pages = key
        return sorted(env.found_docs - set(added) - set(changed))
    return []


def setup(app: Any) -> None:
    """Registers the switch, the verdicts' language and the fallback to English (both editions)."""
    app.add_config_value("editions_english_html", "_build/html", "env", types=[str])
    app.connect("config-inited", _config_inited)
    app.add_css_file("editions.css")
    app.connect("html-page-context", _page_context)
    app.connect("doctree-resolved", _localise_outputs)
    app.connect("missing-reference", _fallback_to_english)
    app.connect("env-get-outdated", _switch_outdated)
