"""Run `triage launch` for real (torchrun gloo jobs and plain launchers) and read its run directory.

One way to build and run a launch for every suite:

- ``launch_argv(run_dir, job, *options)``: by default the hang tests' quick policy (a
  ``TIMEOUT_S`` hang timeout, no console, 1 s of strace); ``quick_hang=False`` for triage's own
  defaults, ``host=HOST`` to pin the node's name (the rank directories are then ``rank_dir()``);
- ``job_env(**extra)``: the environment of a launched job (no developer ``TRIAGE_*`` settings);
- ``run_launch(argv, env, run_dir)``: runs it in ``run_dir``'s parent to the end and kills what is
  left; a ``Finished`` has the output as text and as the exact bytes.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers.paths import EXAMPLES, REPO
from tests.helpers.processes import kill_tree, triage_cmd

HOST = "testhost"
TIMEOUT_S = 3.0                 # the hang timeout of launch_argv's quick hang policy
TORCHRUN = str(Path(sysconfig.get_path("scripts")) / "torchrun")  # this interpreter's scripts dir, no realpath
TORCHRUN_MODULE = (sys.executable, "-m", "torch.distributed.run")


def torchrun(script: str | Path, nproc: int = 2, *args: str, before: Sequence[str] = ()) -> list[str]:
    """`torchrun --standalone` (its console script, so triage recognises it; the rendezvous store binds
    a free port itself: no race with other jobs). ``before``: more torchrun options; ``args``: the
    script's arguments."""
    return [TORCHRUN, "--standalone", "--nproc-per-node", str(nproc), *before, str(script), *args]


@functools.cache
def jobs_tmpdir() -> str:
    """The TMPDIR of every job this test process launches, removed when it exits: torchrun leaves a
    ``torchelastic_*`` directory per run (and multiprocessing its ``pymp-*``), which would otherwise pile
    up in the machine's /tmp. Private to this user (a job run as another user names its own TMPDIR)."""
    path = tempfile.mkdtemp(prefix="triage-tests-jobs-")
    atexit.register(shutil.rmtree, path, True)
    return path


def job_env(**extra: str) -> dict[str, str]:
    """This environment without TRIAGE_* settings; the examples' hangs last 60 s and find their helpers.
    The repository under test comes first on PYTHONPATH: `triage launch` and the jobs' ``import triage`` run
    this checkout's code, not whichever one the environment's editable install points at (a git worktree).
    Temporary files go under :func:`jobs_tmpdir` unless ``extra`` names a TMPDIR."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGE_")}
    env.update({"EXAMPLE_HANG_SECONDS": "60", "PYTHONPATH": os.pathsep.join((str(REPO), str(EXAMPLES))),
                "TMPDIR": jobs_tmpdir(), **extra})
    return env


def launch_argv(run_dir: Path, job: Sequence[str], *options: str, quick_hang: bool = True,
                host: str | None = None) -> list[str]:
    """`triage launch --run-dir RUN_DIR [quick hang policy] [--host HOST] OPTIONS -- JOB`."""
    quick = ("--hang-timeout", str(TIMEOUT_S), "--console", "none", "--strace-seconds", "1") if quick_hang else ()
    pinned = ("--host", host) if host is not None else ()
    return [*triage_cmd("launch", "--run-dir", str(run_dir), *quick, *pinned, *options, "--"), *job]


def _text(data: bytes) -> str:
    """What a text-mode pipe would have read: UTF-8 (undecodable bytes replaced), universal newlines."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str
    run_dir: Path
    stdout_bytes: bytes = b""       # the exact bytes (run_launch fills them)
    stderr_bytes: bytes = b""

    def bundle(self) -> Path:
        match = re.search(r"triage(?:\[[^\]]+\])?: evidence saved to (\S+)", self.stderr)
        assert match, f"no bundle line in: {self.stderr}"
        return Path(match.group(1))

    def explain(self) -> str:
        """stderr plus the tail of every rank's output.log (for assertion messages)."""
        parts = [self.stderr]
        for log in sorted(self.run_dir.glob("*/ranks/*/output.log")):
            parts.append(f"--- {log}\n" + log.read_text(errors="replace")[-2000:])
        launcher = sorted(self.run_dir.glob("*/launcher.log"))
        if launcher:
            parts.append("--- launcher.log\n" + launcher[0].read_text(errors="replace")[-2000:])
        return "\n".join(parts)

    def line(self, prefix: str) -> str:
        """The first agent line that starts with ``prefix``; ``triage[host]: `` (a multi-node job's
        lines) is read as ``triage: ``."""
        for line in self.stderr.splitlines():
            line = re.sub(r"^triage\[[^\]]+\]: ", "triage: ", line)
            if line.startswith(prefix):
                return line
        raise AssertionError(f"no line starting with {prefix!r} in:\n{self.stderr}")


def run_launch(argv: Sequence[str], env: Mapping[str, str] | None, run_dir: Path, timeout: float = 120.0) -> Finished:
    """Run ``argv`` (in ``run_dir``'s parent, its own session; ``env`` None: ``job_env()``) to its end,
    then kill whatever it left behind."""
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=dict(env) if env is not None else job_env(), start_new_session=True,
                            cwd=str(run_dir.parent))
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        kill_tree(proc.pid)
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)
    return Finished(proc.returncode, _text(out), _text(err), run_dir, out, err)


@contextlib.contextmanager
def background_launch(argv: Sequence[str], env: Mapping[str, str], run_dir: Path,
                      ready: str = "READY", timeout: float = 60.0) -> Iterator[subprocess.Popen[str]]:
    """A launch left running (console on stdout) until a line containing ``ready`` appears."""
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(env),
                            start_new_session=True, cwd=str(run_dir.parent))
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if ready in line:
                break
            assert time.monotonic() < deadline, "".join(seen)
        else:
            raise AssertionError("launch ended before ready: " + "".join(seen))
        yield proc
    finally:
        kill_tree(proc.pid)
        with contextlib.suppress(Exception):
            proc.communicate(timeout=10)


def rank_dir(run_dir: Path, rank: int, host: str = HOST) -> Path:
    """A rank's directory in a run directory (``launch_argv(..., host=HOST)`` pins the host)."""
    return run_dir / host / "ranks" / str(rank)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
