"""helpers.seeding: every seed of the book goes through one place, and HELPERS_SEED_OFFSET shifts them all."""

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers import seeding, tasks
from helpers.train import set_seed

ROOT = Path(__file__).resolve().parents[1]


def test_without_an_offset_a_seed_is_itself(monkeypatch):
    monkeypatch.delenv("HELPERS_SEED_OFFSET", raising=False)
    assert seeding.seed_offset() == 0 and seeding.shifted(7) == 7
    torch.testing.assert_close(torch.randn(5, generator=seeding.generator(7)),
                               torch.randn(5, generator=torch.Generator().manual_seed(7)))


def test_the_offset_shifts_every_generator_and_the_global_seeds(monkeypatch):
    monkeypatch.setenv("HELPERS_SEED_OFFSET", "1000")
    assert seeding.shifted(2) == 1002
    torch.testing.assert_close(torch.randn(5, generator=seeding.generator(2)),
                               torch.randn(5, generator=torch.Generator().manual_seed(1002)))
    seeding.manual_seed(2)
    drawn = (torch.randn(3), np.random.rand(3), random.random())
    torch.manual_seed(1002)
    np.random.seed(1002)
    random.seed(1002)
    torch.testing.assert_close(drawn[0], torch.randn(3))
    np.testing.assert_array_equal(drawn[1], np.random.rand(3))
    assert drawn[2] == random.random()


def test_tasks_and_training_seeds_follow_the_offset(monkeypatch):
    monkeypatch.delenv("HELPERS_SEED_OFFSET", raising=False)
    base = tasks.copy_task(4, 6, 10, seed=3)[0]
    monkeypatch.setenv("HELPERS_SEED_OFFSET", "5")
    torch.testing.assert_close(tasks.copy_task(4, 6, 10, seed=-2)[0], base)  # -2 + 5 = 3
    assert not torch.equal(tasks.copy_task(4, 6, 10, seed=3)[0], base)
    set_seed(0)
    first = torch.randn(4)
    torch.manual_seed(5)
    torch.testing.assert_close(first, torch.randn(4))


def test_a_negative_or_huge_shifted_seed_is_folded_into_range(monkeypatch):
    monkeypatch.setenv("HELPERS_SEED_OFFSET", "-10")
    assert seeding.shifted(3) == 2**63 - 7
    seeding.manual_seed(3)  # NumPy takes the seed modulo 2**32, torch and random any int
    assert torch.randn(1, generator=seeding.generator(3)).shape == (1,)


@pytest.mark.parametrize("value", ["ten", "1.5", "0x10"])
def test_a_bad_offset_names_the_variable(monkeypatch, value):
    monkeypatch.setenv("HELPERS_SEED_OFFSET", value)
    with pytest.raises(ValueError, match="HELPERS_SEED_OFFSET must be an integer"):
        seeding.generator(0)


def test_a_bad_seed_names_the_argument():
    with pytest.raises(TypeError, match="seed must be an int"):
        seeding.generator(1.0)
    with pytest.raises(TypeError, match="seed must be an int"):
        seeding.manual_seed(True)


DIRECT_SEEDING = re.compile(
    r"(?<!seeding)\.manual_seed\(|torch\.cuda\.manual_seed|np\.random\.seed\(|np\.random\.default_rng\("
    r"|(?<![\w.])random\.seed\(|random\.Random\(|np\.random\.RandomState\(")


def _code_of(path: Path) -> str:
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    if path.suffix == ".md":
        return "\n".join(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", path.read_text(encoding="utf-8"), re.S))
    return path.read_text(encoding="utf-8")


def test_no_page_lab_or_module_seeds_a_generator_itself():
    """Every seed goes through helpers.seeding, so that HELPERS_SEED_OFFSET reaches all of them."""
    files = [p for p in (ROOT / "src" / "helpers").rglob("*.py") if p.name != "seeding.py"]
    files += [p for p in ROOT.glob("book/**/*.md")] + [p for p in ROOT.glob("zh/book/**/*.md")]
    files += list(ROOT.glob("notebooks/*.ipynb")) + list(ROOT.glob("zh/notebooks/*.ipynb"))
    offenders = []
    for path in files:
        for number, line in enumerate(_code_of(path).splitlines(), 1):
            if DIRECT_SEEDING.search(line.split("#")[0]):
                offenders.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    assert not offenders, "seeded outside helpers.seeding:\n" + "\n".join(offenders)
