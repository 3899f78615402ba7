"""Pieces of the multi-node code that need no cluster: name validation, the bundle stream's
safety checks, and the cross-node trigger over a run directory (real files, real threads)."""

from __future__ import annotations

import io
import tarfile
import threading
import time
from pathlib import Path

import pytest

from triage.agent.hang import cluster_trigger
from triage.bundle import Manifest, Trigger, create_bundle_dir, write_manifest
from triage.errors import RemoteError, UsageError
from triage.remote.names import parse_hosts, parse_pids, validate_job_id
from triage.remote.slurm import JobPhase, phase_of, srun_argv
from triage.remote.transfer import pack, unpack


@pytest.mark.parametrize("job", ["1234", "77_3"])
def test_valid_job_ids(job: str) -> None:
    assert validate_job_id(job) == job


@pytest.mark.parametrize("job", ["", "abc", "12 34", "-1", "1;id", "$(id)", "1" * 13])
def test_invalid_job_ids(job: str) -> None:
    with pytest.raises(UsageError, match="invalid SLURM job id"):
        validate_job_id(job)


def test_hosts_are_validated_and_deduplicated() -> None:
    assert parse_hosts("node1, root@node2,node1,10.0.0.7,") == ["node1", "root@node2", "10.0.0.7"]
    for bad in ("node1;id", "-oProxyCommand=x", "a b", "x@@y", "../etc", ""):
        with pytest.raises(UsageError):
            parse_hosts(bad)
    with pytest.raises(UsageError, match="invalid pid"):
        parse_pids("12,x")


def test_srun_command_is_argv_and_validated() -> None:
    argv = srun_argv("42", "node7", ["triage", "collect", "--match", "a b;c"])
    assert argv[:8] == ["srun", "--jobid", "42", "--overlap", "-N1", "-n1", "-w", "node7"]
    assert argv[argv.index("--") + 1:-1] == ["triage", "collect", "--match"]
    assert argv[-1] == "a b;c"
    with pytest.raises(UsageError):
        srun_argv("42", "node7;id", ["true"])
    assert phase_of("PENDING") is JobPhase.PENDING and phase_of("RUNNING") is JobPhase.RUNNING
    assert phase_of("COMPLETING") is JobPhase.ENDING   # collect --job: a one-line "the job is ending", exit 2
    assert phase_of("CANCELLED by 0") is JobPhase.FINISHED and phase_of("TIMEOUT") is JobPhase.FINISHED


def _bundle(run_dir: Path, host: str, created: float, finished: bool = True) -> Path:
    bundle = create_bundle_dir(run_dir / host / "bundles", Trigger.REMOTE, created)
    (bundle / "node").mkdir()
    (bundle / "node" / "facts.json").write_text("{}")
    write_manifest(bundle, Manifest(job_id="j", host=host, trigger=Trigger.REMOTE, created=created,
                                    finished=created + 1 if finished else None))
    return bundle


def test_bundle_stream_round_trip(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "node", "node1", time.time())
    data = io.BytesIO()
    pack(tmp_path / "node", [bundle], data)
    got = unpack(data.getvalue(), tmp_path / "login", label="node1")
    assert got == tmp_path / "login" / "node1" / "bundles" / bundle.name
    assert (got / "node" / "facts.json").read_text() == "{}"


def test_bundle_stream_leaves_out_files_being_written(tmp_path: Path) -> None:
    """A worker writes fr.pickle as a dot-file and renames it: the stream must not carry (or trip
    over) the half-written file."""
    bundle = _bundle(tmp_path / "node", "node1", time.time())
    (bundle / "rank-0").mkdir()
    (bundle / "rank-0" / ".fr.pickle.partial").write_bytes(b"half")
    (bundle / "rank-0" / "fr.json").write_text("{}")
    data = io.BytesIO()
    pack(tmp_path / "node", [bundle], data)
    got = unpack(data.getvalue(), tmp_path / "login", label="node1")
    assert (got / "rank-0" / "fr.json").is_file()
    assert not (got / "rank-0" / ".fr.pickle.partial").exists()


@pytest.mark.parametrize("name", ["../evil", "/etc/evil", "node1/../../evil", "bad host/x"])
def test_bundle_stream_refuses_paths_outside_the_host_dir(tmp_path: Path, name: str) -> None:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(RemoteError, match="node1: refusing bundle stream"):
        unpack(data.getvalue(), tmp_path / "login", label="node1")
    assert not (tmp_path / "evil").exists() and not (tmp_path / "login").exists()


def test_bundle_stream_refuses_links(tmp_path: Path) -> None:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        info = tarfile.TarInfo("node1/bundles/b/manifest.json")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/shadow"
        tar.addfile(info)
    with pytest.raises(RemoteError, match="not a plain file"):
        unpack(data.getvalue(), tmp_path / "login", label="node1")


def test_trigger_announce_and_poll(tmp_path: Path) -> None:
    start = time.time()
    assert cluster_trigger.poll(tmp_path, "node2", start - 1) is None
    cluster_trigger.announce(tmp_path, "node1", "rank 3 stuck in all_gather\nsecond line")
    assert cluster_trigger.poll(tmp_path, "node1", start - 1) is None          # its own notice
    notice = cluster_trigger.poll(tmp_path, "node2", start - 1)
    assert notice is not None and notice.origin == "node1" and notice.reason == "rank 3 stuck in all_gather"
    assert cluster_trigger.poll(tmp_path, "node2", notice.time) is None        # already handled
    assert not [p for p in tmp_path.iterdir() if not p.name.startswith(".")]  # hidden from RunPaths.hosts()


def test_wait_for_node_bundles_names_the_missing_node(tmp_path: Path) -> None:
    since = time.time()
    for host in ("node1", "node2", "node3"):
        (tmp_path / host).mkdir()
        (tmp_path / host / "node.json").write_text("{}")
    _bundle(tmp_path, "node1", since - 60)                  # an older event: does not count
    _bundle(tmp_path, "node1", since + 0.1)
    _bundle(tmp_path, "node3", since + 0.1, finished=False)  # still being written
    late = threading.Timer(0.3, lambda: _bundle(tmp_path, "node2", since + 0.4))
    late.start()
    try:
        present, missing = cluster_trigger.wait_for_node_bundles(tmp_path, None, since, time.time() + 1.5)
    finally:
        late.join()
    assert sorted(present) == ["node1", "node2"] and missing == ["node3"]
