"""Fixtures: compiled C/C++ crashers and one torch-process core (deleted at the end)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.paths import PROGRAMS
from tests.helpers.postmortem import Crash, core_pattern_is_relative_core, crash


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The C/C++ test programs compiled with gcc/g++ into a tmp dir (once per session)."""
    if not core_pattern_is_relative_core():
        pytest.skip("kernel.core_pattern is not 'core': cores would not land in the test's tmp dir")
    out = tmp_path_factory.mktemp("pm-bin")
    commands = {
        "pm_mt_crash": ["gcc", "-g", "-O0", "-pthread", str(PROGRAMS / "pm_mt_crash.c"), "-o"],
        "pm_assert": ["gcc", "-g", "-O0", str(PROGRAMS / "pm_assert.c"), "-o"],
        "libpm_terminate.so": ["g++", "-g", "-O0", "-shared", "-fPIC", str(PROGRAMS / "pm_terminate.cpp"), "-o"],
    }
    for name, argv in commands.items():
        subprocess.run([*argv, str(out / name)], check=True, capture_output=True, timeout=120)
    return {name: out / name for name in commands}


@pytest.fixture
def crash_dir(tmp_path: Path) -> Iterator[Path]:
    """A cwd for crashing children; every core in it is deleted at the end of the test."""
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.fixture(scope="session")
def torch_core(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crash]:
    """One core of a Python process with torch loaded that segfaulted through ctypes (~150 MB)."""
    if not core_pattern_is_relative_core():
        pytest.skip("kernel.core_pattern is not 'core'")
    where = tmp_path_factory.mktemp("pm-torch-core")
    result = crash([sys.executable, str(PROGRAMS / "pm_torch_segv.py")], where)
    yield result
    shutil.rmtree(where, ignore_errors=True)
