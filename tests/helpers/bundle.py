"""Checks on the bundles that real launches and dumps write."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from tests.helpers.launch import TIMEOUT_S
from triage.bundle import CollectorStatus, Manifest, read_manifest
from triage.parsing.flight_recorder.parse import load_fr_file
from triage.parsing.stacks import parse_pyspy_json

RANK_COLLECTORS = {"proc", "fr", "stacks", "fr-torch", "pyspy", "gdb", "strace"}


def check_complete(bundle: Path, ranks: Sequence[int], also: frozenset[str] = frozenset()) -> Manifest:
    """Every collector of every rank is listed with a status; node collectors too. ``also``: the
    collectors that run only when others failed (pystack when py-spy is missing)."""
    manifest = read_manifest(bundle)
    assert manifest.finished is not None
    for rank in ranks:
        names = {c.name for c in manifest.collectors if c.rank == rank}
        assert names == RANK_COLLECTORS | also, (rank, names)
    assert {c.name for c in manifest.collectors if c.rank is None} >= {"dmesg", "facts", "nvidia-smi"}
    assert all(isinstance(c.status, CollectorStatus) for c in manifest.collectors)
    return manifest


def status(manifest: Manifest, name: str, rank: int | None) -> CollectorStatus:
    return next(c.status for c in manifest.collectors if c.name == name and c.rank == rank)


def pyspy_functions(bundle: Path, rank: int) -> set[str]:
    threads = parse_pyspy_json(json.loads((bundle / f"rank-{rank}" / "pyspy.json").read_text()))
    return {f.function for t in threads for f in t.frames}


def detection_latency(bundle: Path, ranks: Sequence[int]) -> float:
    """Seconds between 'a rank has waited the hang timeout in its collective' and the bundle start
    (a launch with launch_argv's quick hang policy)."""
    manifest = read_manifest(bundle)
    entered: list[float] = []
    for rank in ranks:
        dump = load_fr_file(bundle / f"rank-{rank}" / "fr.json", rank)
        pending = [c for c in dump.collectives if c.state.value != "completed" and c.time_ns]
        if pending:
            entered.append(max(c.time_ns for c in pending if c.time_ns) / 1e9)
    assert entered, "no in-flight collective in any fr.json"
    return manifest.created - (min(entered) + TIMEOUT_S)
