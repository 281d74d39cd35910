"""What each lab costs a student's server: wall time, CPU time and peak memory of its kernel.

Runs every lab of the book (``notebooks/*.ipynb``, the English ones; a Chinese lab runs the same
code) top to bottom, one at a time, each in a fresh Python process of its own that starts a fresh
kernel (as a student's JupyterLab does) and executes the notebook with ``nbclient`` in the lab's
folder. The kernel is that process's only child, so once it has exited,
``getrusage(RUSAGE_CHILDREN)`` gives exactly the kernel's

- ``cpu_s``: CPU time, user + system, summed over its threads (what the lab takes from a shared server);
- ``peak_rss_mib``: the largest resident set it reached (``ru_maxrss``: the memory a student's server
  must be allowed, for the kernel alone; JupyterLab's own server process adds ``server_rss_mib``);

and ``wall_s`` is the time from the kernel's start to the end of the last cell. The kernel runs with
PyTorch's default number of threads (a notebook may set its own: the labs set one thread for their
tiny tensors). The teachers' page (``book/teaching.md``) reads the results.

Run: ``python benchmarks/lab_resources.py`` (a few minutes); writes ``benchmarks/results/lab_resources.json``
and prints the table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"
ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
       "PYDEVD_DISABLE_FILE_VALIDATION": "1"}


def _run_one(path: Path) -> dict[str, object]:
    """Executes one lab in this process's only kernel; its numbers once the kernel has exited."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()  # starts the kernel, runs every cell, shuts the kernel down (and waits for it)
    wall = time.perf_counter() - start
    errors = [output for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.get("outputs", []) if output.output_type == "error"]
    if errors:
        raise RuntimeError(f"{path.name}: {errors[0].ename}: {errors[0].evalue}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = resource.getrusage(resource.RUSAGE_SELF)
    return {"lab": path.name, "wall_s": round(wall, 1), "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1), "runner_rss_mib": round(own.ru_maxrss / 1024, 1)}


def _server_rss_mib() -> float:
    """The resident set of an idle JupyterLab server (``jupyter lab``, no kernel), once it answers."""
    import secrets
    import socket
    import tempfile
    import urllib.request

    import psutil

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "JUPYTER_CONFIG_DIR": home, "JUPYTER_RUNTIME_DIR": home}
        command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
                   f"--ServerApp.port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT}",
                   "--LabApp.news_url=", "--allow-root"]
        process = subprocess.Popen(command, cwd=home, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    # the lab page itself: JupyterLab has loaded its extensions and settings
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=10).read()
                    break
                except OSError:
                    time.sleep(0.5)
            time.sleep(2)
            return round(psutil.Process(process.pid).memory_info().rss / 2**20, 1)
        finally:
            process.terminate()
            process.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", type=Path, help="run one lab and print its numbers as JSON (used internally)")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_run_one(args.one)))
        return 0

    labs = sorted((ROOT / "notebooks").glob("*.ipynb"))
    env = {**os.environ, **ENV}
    load_before = os.getloadavg()
    start = time.perf_counter()
    rows = []
    for lab in labs:
        run = subprocess.run([sys.executable, __file__, "--one", str(lab)], env=env, capture_output=True, text=True,
                             check=False)
        if run.returncode != 0:
            print(run.stderr[-3000:], file=sys.stderr)
            return run.returncode
        rows.append(json.loads(run.stdout.strip().splitlines()[-1]))
        row = rows[-1]
        print(f"{row['lab']:32s} wall {row['wall_s']:6.1f} s  cpu {row['cpu_s']:6.1f} s  "
              f"peak rss {row['peak_rss_mib']:7.1f} MiB", flush=True)
    server = _server_rss_mib()
    import torch

    result = {
        "description": "Each lab run top to bottom in a fresh kernel (nbclient), one at a time: the kernel's "
                       "wall time, CPU time (user + system) and peak resident set; an idle JupyterLab server's "
                       "resident set. See benchmarks/lab_resources.py.",
        "environment": {
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine(),
            "cpu": next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                         if line.startswith("model name")), platform.processor()),
            "cpu_count": os.cpu_count(), "load_average_before": list(load_before),
            "load_average_after": list(os.getloadavg()), "wall_s": round(time.perf_counter() - start, 1),
        },
        "server_rss_mib": server,
        "rows": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "lab_resources.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"idle JupyterLab server: {server} MiB; written to {RESULTS / 'lab_resources.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
