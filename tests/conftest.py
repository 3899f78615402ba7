"""Suite-wide checks: no test may leave a process behind, nor litter in the machine's /tmp; the suites
that run real jobs are `slow`.

The session's temporary files (TMPDIR, for the test process and every job it starts) go to a private
directory removed at the end: torchrun leaves a ``torchelastic_*`` directory per run, multiprocessing its
``pymp-*``, triage's node side its ``triage-collect-node-*`` (:func:`private_tmpdir`). pytest's own
``tmp_path`` stays where it was (``/tmp/pytest-of-USER``, its last runs kept for a look after a failure).

The fast suite, for a developer's loop: ``python -m pytest tests -m "not slow"`` (parsers, loaders,
pure analysis, renderers, the recorded runs and the real-world corpus). The directories in
:data:`REAL_JOB_SUITES` start torchrun jobs, clusters, cores or attackers: every test there is
marked ``slow`` except the ``*_units.py`` files; a test elsewhere that runs a real job marks itself."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

# Launched jobs must not inherit a developer's TRIAGE_* settings.
for _name in list(os.environ):
    if _name.startswith("TRIAGE_"):
        del os.environ[_name]


def _descendants() -> list[psutil.Process]:
    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    """Fail a test that leaves a child process running (after a short grace period)."""
    before = {p.pid for p in _descendants()}
    yield
    deadline = time.monotonic() + 5.0
    leftovers: list[psutil.Process] = []
    while time.monotonic() < deadline:
        leftovers = [p for p in _descendants() if p.pid not in before and _is_running(p)]
        if not leftovers:
            return
        time.sleep(0.1)
    described = []
    for proc in leftovers:
        try:
            described.append(f"{proc.pid} {' '.join(proc.cmdline())[:120]}")
        except psutil.Error:
            continue
        with contextlib.suppress(psutil.Error):
            proc.kill()
    if described:
        pytest.fail("test left processes running: " + "; ".join(described))


@pytest.fixture(scope="session", autouse=True)
def private_tmpdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """TMPDIR for the whole session: a new private directory, removed at its end with whatever the tests
    and their jobs left there (the names a test left are listed in the summary under ``-v``)."""
    tmp_path_factory.getbasetemp()          # pytest's tmp_path: where it was, before TMPDIR changes
    path = Path(tempfile.mkdtemp(prefix="triage-tests-"))
    path.chmod(0o711)                       # writable by us alone; the test cluster's munged (user munge) goes through
    saved = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(path)
    tempfile.tempdir = None                 # this process's tempfile asks TMPDIR again
    try:
        yield path
    finally:
        if saved is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved
        tempfile.tempdir = None
        shutil.rmtree(path, ignore_errors=True)


LEFT_IN_TMPDIR: dict[str, list[str]] = {}


def _tmp_entries(root: Path) -> set[str]:
    """The names in ``root``; for the jobs' TMPDIR (tests/helpers/launch.py jobs_tmpdir), the names in it."""
    try:
        names = set(os.listdir(root))
    except OSError:
        return set()
    for name in [n for n in names if n.startswith("triage-tests-jobs-")]:
        names.discard(name)
        with contextlib.suppress(OSError):
            names.update(f"{name}/{inner}" for inner in os.listdir(root / name))
    return names


@pytest.fixture(autouse=True)
def tmpdir_litter(request: pytest.FixtureRequest, private_tmpdir: Path) -> Iterator[None]:
    """Note what a test (its jobs included) left in the session's TMPDIR."""
    before = _tmp_entries(private_tmpdir)
    yield
    left = sorted(_tmp_entries(private_tmpdir) - before)
    if left:
        LEFT_IN_TMPDIR[request.node.nodeid] = left


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if not LEFT_IN_TMPDIR:
        return
    total = sum(len(names) for names in LEFT_IN_TMPDIR.values())
    terminalreporter.write_line(f"tests that left files in the session's TMPDIR (removed at its end; -v lists "
                                f"them): {len(LEFT_IN_TMPDIR)}, entries: {total}")
    if config.get_verbosity() > 0:
        for nodeid, names in LEFT_IN_TMPDIR.items():
            terminalreporter.write_line(f"  {nodeid}: {' '.join(names)}")


def _is_running(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


TESTS = Path(__file__).resolve().parent
REAL_JOB_SUITES = frozenset({"check", "cluster", "collectors", "gpu", "hang", "launch", "matrix", "numerics",
                             "postmortem", "security", "stragglers"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        try:
            relative = item.path.resolve().relative_to(TESTS)
        except ValueError:
            continue
        if relative.parts[0] in REAL_JOB_SUITES and not relative.name.endswith("_units.py"):
            item.add_marker(pytest.mark.slow)
