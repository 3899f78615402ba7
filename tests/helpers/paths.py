"""Where the test suite's own files are: the repository, its example jobs and the test programs."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = REPO / "tests" / "programs"
EXAMPLES = REPO / "examples"


def example(name: str) -> str:
    """An example job of examples/ (a path string, ready for an argv)."""
    return str(EXAMPLES / name)


def program(name: str) -> str:
    """A test program of tests/programs/ (a path string, ready for an argv)."""
    return str(PROGRAMS / name)
