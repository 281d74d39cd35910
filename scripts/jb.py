"""`jupyter-book` with Sphinx's parallel reading: one notebook executes per core.

Jupyter Book 1.x's command line has no `-j` option, though its `build_sphinx` takes `jobs`; this
passes BOOK_JOBS (default: the number of cores) to it and runs the ordinary command line. Each
notebook's kernel gets one thread per job (OMP_NUM_THREADS, set by scripts/build.sh), so two
notebooks on a 2-core machine do not fight over the cores.
"""

import functools
import json
import os
import sys
from pathlib import Path

import jupyter_book.sphinx
import myst_nb.sphinx_ext
import sphinx.builders
import sphinx.errors
import sphinx_multitoc_numbering
from jupyter_book.cli.main import main
from jupyter_cache import get_cache

jobs = int(os.environ.get("BOOK_JOBS") or os.cpu_count() or 1)
jupyter_book.sphinx.build_sphinx = functools.partial(jupyter_book.sphinx.build_sphinx, jobs=jobs)

# sphinx-external-toc always loads sphinx-multitoc-numbering, whose setup() declares nothing, so
# Sphinx assumes it unsafe and reads serially (with a warning, an error under -W). It keeps no
# per-document state (it renumbers the merged toctree once, in the main process): declare it safe.
_multitoc_setup = sphinx_multitoc_numbering.setup


def _multitoc_setup_declared(app):
    _multitoc_setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


sphinx_multitoc_numbering.setup = _multitoc_setup_declared


NOTEBOOK_SECONDS = Path(__file__).with_name("notebook-seconds.json")
"""How long each page's notebook took to execute in a build (seconds, by document name): the order in
which the workers take the pages. Refreshed from a build's notebook cache by
``python scripts/jb.py --record-seconds`` (a page missing from it is ordered by its size)."""


def _expected_seconds(docnames):
    """Each document's expected reading time: its recorded execution time, else its size in bytes over
    1,000 (a long page tends to run long experiments), so that unlisted pages still sort by size."""
    recorded = json.loads(NOTEBOOK_SECONDS.read_text(encoding="utf-8")) if NOTEBOOK_SECONDS.exists() else {}

    def expected(docname):
        if docname in recorded:
            return float(recorded[docname])
        for suffix in (".md", ".ipynb", ".rst"):
            if os.path.exists(docname + suffix):
                return os.path.getsize(docname + suffix) / 1000
        return 0.0

    return {docname: expected(docname) for docname in docnames}


def _one_document_per_task(docnames, nproc, maxbatch=10):
    """Sphinx hands each worker a batch of up to 13 documents in name order, so one worker can get
    every heavy chapter while the other gets the API pages. One document per task, the longest first,
    keeps both cores busy to the end (longest-processing-time-first scheduling).

    Sphinx's ``ParallelTasks`` starts the first ``nproc`` tasks in order and then the waiting ones last
    in, first out (``dict.popitem``): the list returned is the first ``nproc`` longest, then the rest
    shortest first, so that the workers take the rest longest first."""
    expected = _expected_seconds(docnames)
    longest_first = sorted(docnames, key=lambda docname: (-expected[docname], docname))
    workers = max(int(nproc), 1)
    order = longest_first[:workers] + longest_first[workers:][::-1]
    return [[docname] for docname in order]


def record_seconds(cache_path="_build/.jupyter_cache", root="."):
    """Writes NOTEBOOK_SECONDS from a build's notebook cache (jupyter-cache's execution times)."""
    root = Path(root).resolve()
    seconds = {}
    for record in get_cache(cache_path).list_cache_records():
        uri = Path(record.uri).resolve()
        if uri.is_relative_to(root) and "execution_seconds" in record.data:
            seconds[uri.relative_to(root).with_suffix("").as_posix()] = round(record.data["execution_seconds"], 1)
    NOTEBOOK_SECONDS.write_text(json.dumps(dict(sorted(seconds.items())), indent=1) + "\n", encoding="utf-8")
    print(f"jb.py: {len(seconds)} execution times in {NOTEBOOK_SECONDS}")


sphinx.builders.make_chunks = _one_document_per_task

# A notebook that fails in a worker process is reported as "ExecutionError: <path>": the failing cell and
# its traceback travel in the error's `traceback` attribute, which Sphinx does not print. Print it.
sphinx.errors.SphinxParallelError.__str__ = lambda self: f"{self.message}\n{self.traceback}"

# The notebook cache (an SQLite database) is created by the first notebook that asks for it; with a
# fresh cache and two workers, both create its tables at once and one fails ("table settings already
# exists"). Create it in the main process, once myst-nb has settled its path, before the workers start.
_create_mystnb_config = myst_nb.sphinx_ext.create_mystnb_config


def _create_mystnb_config_and_cache(app):
    _create_mystnb_config(app)
    if app.env.mystnb_config.execution_mode in ("cache", "auto"):
        get_cache(app.env.mystnb_config.execution_cache_path).db  # noqa: B018 (creates the database)


myst_nb.sphinx_ext.create_mystnb_config = _create_mystnb_config_and_cache

if __name__ == "__main__":
    if sys.argv[1:] == ["--record-seconds"]:
        record_seconds()
    else:
        sys.exit(main())
