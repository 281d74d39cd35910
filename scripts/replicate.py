"""The replication run: every chapter page and lab executed again, strict, under a perturbation.

A claim of the book must hold wherever the book runs, not only in the build that wrote it. This script
executes every page and lab that has code (the English edition; the Chinese pages run the same code)
outside Sphinx, the way the build does (jupytext reads the page, nbclient runs it in a kernel started
in the page's folder), under one *variant*:

- ``offset``: every seed shifted (``HELPERS_SEED_OFFSET``, default 1000; ``helpers.seeding``);
- ``mkl-avx2``, ``mkl-compatible``: MKL's other numerical paths (``MKL_CBWR=AVX2`` / ``COMPATIBLE``; on an
  Intel Xeon these flip training outcomes one way and the other);
- ``aten-default``: PyTorch's own kernels without vector instructions (``ATEN_CPU_CAPABILITY=default``);
- ``aten-avx2``: PyTorch's AVX2 kernels on a CPU that has AVX-512 (``ATEN_CPU_CAPABILITY=avx2``);
- ``threads``: two threads wherever a page asks for one (a kernel start-up file makes every
  ``torch.set_num_threads(n)`` use at least 2);
- ``build``: nothing changed (the build's own conditions, for comparison).

Every variant runs with ``HELPERS_CLAIMS=strict``: a claim that does not hold stops its page, and the
page is reported as failed with the claim's sentence. ``--report`` keeps going past a failed claim
(``HELPERS_CLAIMS`` unset: each failed claim is printed and recorded) so that one run lists every
claim that fails, not only the first of each page.

Usage::

    python scripts/replicate.py offset [--offset 1000] [--jobs 2] [--only PATTERN ...] [--report]
    python scripts/replicate.py mkl-avx2 mkl-compatible aten-default threads

It prints one line a page (``ok``/``FAILED``, seconds) and, for a failed page, the claim or error; it
writes ``_build/replication/<variant>.json`` and exits with 1 when any page failed.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import resource
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "replication"

VARIANTS: dict[str, dict[str, str]] = {
    "build": {},
    "offset": {"HELPERS_SEED_OFFSET": "1000"},
    "mkl-avx2": {"MKL_CBWR": "AVX2"},
    "mkl-compatible": {"MKL_CBWR": "COMPATIBLE"},
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
    "aten-avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "threads": {"OMP_NUM_THREADS": "2", "REPLICATE_MIN_THREADS": "2"},
}
"""Each variant's environment, on top of the build's (one thread a kernel, offline, strict claims)."""

STARTUP = textwrap.dedent('''
    # Written by scripts/replicate.py into the kernels' IPython start-up folder.
    import os as _os
    _threads = int(_os.environ.get("REPLICATE_MIN_THREADS", "0") or 0)
    if _threads:
        import torch as _torch
        _set = _torch.set_num_threads
        def _at_least(n, _set=_set, _threads=_threads):
            _set(max(int(n), _threads))
        _torch.set_num_threads = _at_least
''')


def pages() -> list[Path]:
    """Every page and lab of the English edition's table of contents that has code to run."""
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    found = []
    for name in re.findall(r"file:\s*(\S+)", toc) + ["book/intro"]:
        for suffix in (".md", ".ipynb"):
            path = ROOT / (name + suffix)
            if path.exists():
                text = path.read_text(encoding="utf-8")
                if "{code-cell}" in text or (suffix == ".ipynb" and '"cell_type": "code"' in text):
                    found.append(path)
    return sorted(set(found), key=lambda p: p.relative_to(ROOT).as_posix())


def run_page(path: Path, env: dict[str, str], timeout: int) -> dict:
    """Executes one page in a fresh kernel (its folder as working directory) and says how it went."""
    import jupytext
    import nbclient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    name = path.relative_to(ROOT).with_suffix("").as_posix()
    notebook = jupytext.read(path)
    os.environ.update(env)
    os.environ["REPLICATE_NOTEBOOK"] = name
    # every claim the page checks, held or not, with its numbers (in report mode the page goes on past a failed one)
    claims_log = Path(tempfile.mkstemp(prefix="replicate-claims-", suffix=".jsonl")[1])
    os.environ["HELPERS_CLAIMS_LOG"] = str(claims_log)
    client = nbclient.NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    start, children = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {"page": name, "ok": True, "seconds": None, "cpu_seconds": None, "error": None}
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError) as error:
        result["ok"] = False
        text = str(error)
        lines = [line for line in text.splitlines() if line.strip()]
        result["error"] = "\n".join(lines[-12:])
    except Exception as error:  # a kernel that died, a page that does not parse
        result["ok"] = False
        result["error"] = f"{type(error).__name__}: {error}"
    result["seconds"] = round(time.perf_counter() - start, 1)
    # the kernel's CPU time (a child of this worker, reaped once the client shuts it down): on a loaded machine
    # the wall clock counts the waiting too; the CPU time of a one-thread kernel is what a quiet run would take
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    result["cpu_seconds"] = round(used.ru_utime + used.ru_stime - children.ru_utime - children.ru_stime, 1)
    reported = []
    if claims_log.exists():
        records = [json.loads(line) for line in claims_log.read_text(encoding="utf-8").splitlines()]
        reported = [f"claim does not hold: {r['statement']} ({r['found']})" for r in records if not r["holds"]]
        result["claims"] = records
        claims_log.unlink()
    result["reported"] = reported
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="+", choices=sorted(VARIANTS))
    parser.add_argument("--offset", type=int, default=1000, help="seed offset of the 'offset' variant")
    parser.add_argument("--jobs", type=int, default=2, help="pages executed at once (one thread each)")
    parser.add_argument("--only", nargs="*", default=[], help="run only pages whose name contains one of these")
    parser.add_argument("--report", action="store_true",
                        help="go on past a failed claim (HELPERS_CLAIMS unset) and list every claim that fails")
    parser.add_argument("--timeout", type=int, default=600, help="seconds a cell may run")
    args = parser.parse_args(argv)

    todo = [p for p in pages() if not args.only or any(o in p.as_posix() for o in args.only)]
    OUT.mkdir(parents=True, exist_ok=True)
    failed_any = False
    for variant in args.variants:
        startup = Path(tempfile.mkdtemp(prefix="replicate-ipython-"))
        (startup / "profile_default" / "startup").mkdir(parents=True)
        (startup / "profile_default" / "startup" / "00-replicate.py").write_text(STARTUP, encoding="utf-8")
        env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
               "PYDEVD_DISABLE_FILE_VALIDATION": "1", "OMP_NUM_THREADS": "1", "IPYTHONDIR": str(startup),
               "HELPERS_CLAIMS": "report" if args.report else "strict"}
        env.update(VARIANTS[variant])
        if variant == "offset":
            env["HELPERS_SEED_OFFSET"] = str(args.offset)
        label = f"offset-{args.offset}" if variant == "offset" else variant
        print(f"== {variant}: {' '.join(f'{k}={v}' for k, v in VARIANTS[variant].items()) or 'as built'}"
              f" ({len(todo)} pages, {args.jobs} at a time)", flush=True)
        started = time.perf_counter()
        results = []
        with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(run_page, page, env, args.timeout): page for page in todo}
            for future in concurrent.futures.as_completed(futures):
                result = future.result()
                results.append(result)
                mark = "ok    " if result["ok"] else "FAILED"
                print(f"{mark} {result['seconds']:7.1f} s ({result['cpu_seconds']:.1f} s CPU)  {result['page']}",
                      flush=True)
                for line in result["reported"]:
                    print(f"         {line}")
                if result["error"]:
                    print(textwrap.indent(result["error"], "         "), flush=True)
        failed = [r["page"] for r in results if not r["ok"] or r["reported"]]
        failed_any |= bool(failed)
        summary = {"variant": variant, "environment": VARIANTS[variant] | (
            {"HELPERS_SEED_OFFSET": env["HELPERS_SEED_OFFSET"]} if variant == "offset" else {}),
            "seconds": round(time.perf_counter() - started, 1), "failed": failed,
            "pages": sorted(results, key=lambda r: r["page"])}
        (OUT / f"{label}.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
        print(f"== {variant}: {len(todo) - len(failed)} of {len(todo)} pages hold every claim"
              f" ({summary['seconds']:.0f} s)", flush=True)
    return 1 if failed_any else 0


if __name__ == "__main__":
    sys.exit(main())
