"""Runs the book's build and records it, so that the test suite checks that build instead of building again.

``scripts/build.sh`` runs itself through this script: the build's output goes to the terminal and to
``_build/build.log``, then ``_build/build-record.json`` says what was built (a fingerprint of the
sources and of the environment), how long it took and how it ended. The test suite's ``book_build``
fixture (``tests/book/conftest.py``) reuses a successful build whose fingerprint is the current one
(``scripts/build-book.sh`` then ``scripts/test.sh``: one build, as in CI) and builds otherwise; the
build's tests (warnings as errors, the Chinese build's log) read the recorded log.

    python scripts/build_record.py COMMAND...   # runs COMMAND, records it, exits with its status
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "_build" / "build.log"
RECORD = ROOT / "_build" / "build-record.json"
NOT_READ_BY_THE_BUILD = ("tests/",)  # what may change between the build and its tests


def fingerprint(root: Path = ROOT) -> str | None:
    """A hash of everything the build reads: every file git tracks or would track (the sources, the
    configuration, the scripts, the lock files) but the tests, with its content, and the Python and
    packages of the running environment. ``None`` outside a git work tree (nothing is then reused).

    Args:
        root: the repository's root.

    Returns:
        A hex digest, or ``None`` when git cannot list the files.
    """
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, check=False)
    if listed.returncode != 0:
        return None
    digest = hashlib.sha256()
    for name in sorted(set(listed.stdout.decode("utf-8", "surrogateescape").split("\0")) - {""}):
        path = root / name
        if name.startswith(NOT_READ_BY_THE_BUILD) or not path.is_file():
            continue  # the tests, and a file deleted but not yet staged
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    digest.update(sys.version.encode())
    digest.update(f"HELPERS_SEED_OFFSET={os.environ.get('HELPERS_SEED_OFFSET', '').strip()}".encode())
    packages = sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions() if d.metadata["Name"])
    digest.update("\n".join(packages).encode())
    return digest.hexdigest()


def reusable(root: Path = ROOT) -> dict[str, object] | None:
    """The record of the last build when it succeeded from what is here now (its log added), else ``None``.

    Args:
        root: the repository's root.

    Returns:
        The record (``returncode``, ``seconds``, ``finished``, ``fingerprint``, ``log``) or ``None``.
    """
    record_path, log_path = root / "_build" / RECORD.name, root / "_build" / LOG.name
    if not record_path.is_file() or not log_path.is_file() or not (root / "_build" / "html" / "index.html").is_file():
        return None
    record = json.loads(record_path.read_text(encoding="utf-8"))
    current = fingerprint(root)
    if record.get("returncode") != 0 or current is None or record.get("fingerprint") != current:
        return None
    return {**record, "log": log_path.read_text(encoding="utf-8", errors="replace")}


def main(command: list[str]) -> int:
    """Runs ``command`` with its output teed to the log, then writes the record.

    Args:
        command: the build's command line.

    Returns:
        The command's exit status.
    """
    if not command:
        raise ValueError("command: give the build's command line (scripts/build.sh runs itself through this)")
    LOG.parent.mkdir(parents=True, exist_ok=True)
    RECORD.unlink(missing_ok=True)  # a build that dies half-way leaves no record to reuse
    before = fingerprint()
    start = time.perf_counter()
    with LOG.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   errors="replace", bufsize=1)
        for line in process.stdout or ():
            sys.stdout.write(line)
            sys.stdout.flush()
            log.write(line)
        returncode = process.wait()
    seconds = time.perf_counter() - start
    after = fingerprint()
    record = {"returncode": returncode, "seconds": round(seconds, 1), "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
              # the build must not change what it read (else its record would describe another tree)
              "fingerprint": before if before == after else None}
    RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
