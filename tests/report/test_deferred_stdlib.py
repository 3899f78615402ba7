"""The CLI's start defers the standard library's modules it imports without using them (triage.cli.start: ``inspect``,
which the dataclasses module imports; docs/performance.md, Parsing, session 51): each is loaded at its first use, by
whichever thread asks first, and is then the module itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

import triage
from triage.cli import start

CASE = Path(__file__).resolve().parents[1] / "realworld" / "cases" / "3dem__relion__194" / "log.txt"

PROBE = ("import sys, types; from triage.cli import main; code = main(sys.argv[1:]); "
         "deferred = type(sys.modules['inspect']) is not types.ModuleType; "
         "sys.stderr.write(f'\\nDEFERRED {deferred} {\"dis\" in sys.modules}\\n'); "
         "import inspect; sys.stderr.write(f'SIGNATURE {inspect.signature(main)}\\n'); sys.exit(code)")


@pytest.fixture
def fresh() -> Iterator[types.ModuleType]:
    """A standard-library module (colorsys) deferred as if this process had not imported it; the one it had (if
    any) put back afterwards."""
    had = sys.modules.pop("colorsys", None)
    try:
        assert start.defer("colorsys")
        yield sys.modules["colorsys"]
    finally:
        sys.modules.pop("colorsys", None)
        if had is not None:
            sys.modules["colorsys"] = had


def test_a_deferred_module_loads_at_its_first_use_and_is_then_the_module(fresh: types.ModuleType) -> None:
    assert type(fresh) is not types.ModuleType
    assert "rgb_to_hsv" not in vars(fresh)      # its body has not run
    import colorsys  # (the import finds the deferred module: it does not load it)

    assert colorsys is fresh and "rgb_to_hsv" not in vars(fresh)
    from colorsys import rgb_to_hsv

    assert type(fresh) is types.ModuleType and sys.modules["colorsys"] is fresh
    assert rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
    with pytest.raises(AttributeError):
        _ = fresh.no_such_name
    assert not start.defer("colorsys")      # imported already: left alone


def test_threads_that_ask_at_once_all_get_the_loaded_module(fresh: types.ModuleType) -> None:
    barrier = threading.Barrier(8)
    got: list[object] = []

    def ask() -> None:
        barrier.wait(timeout=60)
        got.append(fresh.hls_to_rgb)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(got) == 8 and len(set(map(id, got))) == 1
    assert type(fresh) is types.ModuleType


def test_a_missing_module_is_not_deferred() -> None:
    assert not start.defer("triage_no_such_module_here")
    assert "triage_no_such_module_here" not in sys.modules


@pytest.mark.parametrize(("which", "fmt"), [("made", "json"), ("corpus", "json"), ("corpus", "text")])
def test_a_log_report_never_loads_inspect_and_says_the_same(which: str, fmt: str, tmp_path: Path) -> None:
    if which == "made":
        log = tmp_path / "job.log"
        log.write_text("[rank0]: step 1 loss 2.0\n" * 20 + "[rank0]: torch.OutOfMemoryError: CUDA out of memory. "
                       "Tried to allocate 2.00 GiB.\n", encoding="utf-8")
    else:
        log = CASE
    env = dict(os.environ, PYTHONPATH=str(Path(triage.__file__).resolve().parents[1]), COLUMNS="100")
    args = ["report", str(log), "--format", fmt]
    deferred = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=300, check=False)
    assert deferred.returncode == 1, deferred.stderr
    assert "\nDEFERRED True False\n" in deferred.stderr, deferred.stderr
    assert "SIGNATURE (argv: " in deferred.stderr      # and loaded at its first use
    # the same report where inspect was imported before triage (nothing deferred)
    loaded = subprocess.run([sys.executable, "-c", "import inspect; " + PROBE, *args], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300, check=False)
    assert "\nDEFERRED False True\n" in loaded.stderr, loaded.stderr
    assert deferred.stdout == loaded.stdout
    if fmt == "json":
        assert json.loads(deferred.stdout)["verdict"]["culprit_ranks"] == ([0] if which == "made" else [1])
