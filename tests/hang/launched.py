"""Helpers for hang tests: run real torchrun gloo jobs under ``triage launch`` and read their bundles."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sysconfig
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.support import EXAMPLES, PROGRAMS, kill_tree, triage_cmd
from triage.bundle import CollectorStatus, Manifest, read_manifest
from triage.parsing.flight_recorder import load_fr_file

TIMEOUT_S = 3.0
TORCHRUN = str(Path(sysconfig.get_path("scripts")) / "torchrun")  # this interpreter's scripts dir, no realpath
RANK_COLLECTORS = {"proc", "fr", "stacks", "fr-torch", "pyspy", "gdb", "strace"}


def torchrun(script: str | Path, nproc: int = 2) -> list[str]:
    """torchrun --standalone: the rendezvous store binds a free port itself (no race with other jobs)."""
    return [TORCHRUN, "--standalone", "--nproc-per-node", str(nproc), str(script)]


def example(name: str) -> Path:
    return EXAMPLES / name


def program(name: str) -> Path:
    return PROGRAMS / name


def job_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGE_")}
    env.update({"EXAMPLE_HANG_SECONDS": "60", "PYTHONPATH": str(EXAMPLES), **extra})
    return env


def launch_argv(run_dir: Path, job: Sequence[str], *options: str) -> list[str]:
    return [*triage_cmd("launch", "--run-dir", str(run_dir), "--hang-timeout", str(TIMEOUT_S),
                        "--console", "none", "--strace-seconds", "1", *options, "--"), *job]


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str
    run_dir: Path

    def bundle(self) -> Path:
        match = re.search(r"triage: evidence saved to (\S+)", self.stderr)
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
        for line in self.stderr.splitlines():
            if line.startswith(prefix):
                return line
        raise AssertionError(f"no line starting with {prefix!r} in:\n{self.stderr}")


def run_launch(argv: Sequence[str], env: dict[str, str], run_dir: Path, timeout: float = 120.0) -> Finished:
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True, cwd=str(run_dir.parent))
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        kill_tree(proc.pid)
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)
    return Finished(proc.returncode, out, err, run_dir)


def check_complete(bundle: Path, ranks: Sequence[int]) -> Manifest:
    """Every collector of every rank is listed with a status; node collectors too."""
    manifest = read_manifest(bundle)
    assert manifest.finished is not None
    for rank in ranks:
        names = {c.name for c in manifest.collectors if c.rank == rank}
        assert names == RANK_COLLECTORS, (rank, names)
    assert {c.name for c in manifest.collectors if c.rank is None} >= {"dmesg", "facts", "nvidia-smi"}
    assert all(isinstance(c.status, CollectorStatus) for c in manifest.collectors)
    return manifest


def status(manifest: Manifest, name: str, rank: int | None) -> CollectorStatus:
    return next(c.status for c in manifest.collectors if c.name == name and c.rank == rank)


def pyspy_functions(bundle: Path, rank: int) -> set[str]:
    from triage.parsing.stacks import parse_pyspy_json

    threads = parse_pyspy_json(json.loads((bundle / f"rank-{rank}" / "pyspy.json").read_text()))
    return {f.function for t in threads for f in t.frames}


def detection_latency(bundle: Path, ranks: Sequence[int]) -> float:
    """Seconds between 'a rank has waited hang_timeout in its collective' and the bundle start."""
    manifest = read_manifest(bundle)
    entered: list[float] = []
    for rank in ranks:
        dump = load_fr_file(bundle / f"rank-{rank}" / "fr.json", rank)
        pending = [c for c in dump.collectives if c.state.value != "completed" and c.time_ns]
        if pending:
            entered.append(max(c.time_ns for c in pending if c.time_ns) / 1e9)
    assert entered, "no in-flight collective in any fr.json"
    return manifest.created - (min(entered) + TIMEOUT_S)


@contextlib.contextmanager
def background_launch(argv: Sequence[str], env: dict[str, str], run_dir: Path,
                      ready: str = "READY", timeout: float = 60.0) -> Iterator[subprocess.Popen[str]]:
    """A launch left running (console on stdout) until a line containing ``ready`` appears."""
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
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
