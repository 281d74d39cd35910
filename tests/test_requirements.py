"""requirements.txt, environment.yml and pyproject.toml name the same packages with the same bounds."""

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def _requirement_lines(lines):
    found = set()
    for line in lines:
        line = line.split("#", 1)[0].strip().removeprefix("- ").strip()
        if line and not line.startswith("-e") and re.match(r"^[A-Za-z0-9]", line):
            found.add(re.sub(r"\s+", "", line).lower())
    return found


def test_requirements_txt_lists_the_package_and_its_book_and_test_extras() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["book"],
                *project["optional-dependencies"]["test"]]
    expected = {re.sub(r"\s+", "", d).lower() for d in declared}
    listed = _requirement_lines((ROOT / "requirements.txt").read_text().splitlines())
    assert listed == expected, f"only in requirements.txt: {listed - expected}; only in pyproject: {expected - listed}"


def test_environment_yml_lists_what_requirements_txt_lists() -> None:
    text = (ROOT / "environment.yml").read_text()
    pip_section = text.split("- pip:", 1)[1].splitlines()
    conda_section = text.split("- pip:", 1)[0].split("dependencies:", 1)[1].splitlines()
    listed = _requirement_lines(pip_section) | {
        line.replace("pytorch", "torch") for line in _requirement_lines(conda_section)
        if not line.startswith(("python=", "cpuonly", "pip"))
    }
    expected = _requirement_lines((ROOT / "requirements.txt").read_text().splitlines())
    assert listed == expected, (f"only in environment.yml: {listed - expected}; "
                                f"only in requirements.txt: {expected - listed}")
