"""BundlePaths is the bundle contract in code: every file a real collection writes is one of its
paths, and the loaders find what the collectors wrote through it."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.processes import python_program, running_program
from triage.bundle import Trigger, read_manifest, write_manifest
from triage.collectors.common import Target
from triage.collectors.node_bundle import JobInfo, collect_node_bundle
from triage.layout import BundlePaths, BundleRankPaths, HostPaths, RankPaths
from triage.options import CollectSettings


def _known(paths: BundlePaths, rank: int, pid: int) -> set[Path]:
    files = paths.rank(rank)
    node = paths.node
    return {paths.manifest, files.fr_json, files.fr_pickle, files.stacks, files.pyspy_json, files.pyspy_txt,
            files.gdb, files.strace, files.proc, files.pystack, files.child_pyspy(pid), node.dmesg,
            node.dmesg_relevant, node.dmesg_events, node.facts, node.nvidia_smi, node.gpus, node.nvidia_smi_xml}


def test_every_file_of_a_real_bundle_is_a_bundle_path(tmp_path: Path) -> None:
    with running_program(python_program("collect_target.py", "both"), env=None) as proc:
        bundle = collect_node_bundle(
            JobInfo("job1", started=None), [Target(rank=0, pid=proc.pid)], Trigger.MANUAL, "test",
            CollectSettings(gdb="always", strace_seconds=1.0), tmp_path / "bundles")
    paths = BundlePaths(bundle)
    assert paths.is_bundle()
    listed = [f for record in read_manifest(bundle).collectors for f in record.files]
    assert listed, "the collectors wrote nothing"
    known = {paths.relative(p) for p in _known(paths, 0, proc.pid)}
    assert set(listed) <= known, set(listed) - known
    written = {paths.relative(p) for p in bundle.rglob("*") if p.is_file()}
    assert written <= known, written - known
    for name in listed:
        assert (bundle / name).is_file(), name


def test_host_lists_only_directories_with_a_manifest(tmp_path: Path) -> None:
    host = HostPaths(tmp_path / "node01")
    real = host.bundles_dir / "20261123T000000.000-manual"
    real.mkdir(parents=True)
    (host.bundles_dir / "half-written").mkdir()
    assert host.bundles() == []
    with running_program(python_program("collect_target.py", "both"), env=None) as proc:
        bundle = collect_node_bundle(JobInfo("job1", started=None), [Target(rank=0, pid=proc.pid)], Trigger.MANUAL,
                                     "test", CollectSettings(strace_seconds=0.0), host.bundles_dir)
    write_manifest(real, read_manifest(bundle))
    assert host.bundles() == sorted([real, bundle])
    assert BundlePaths(real).rank(3).root == real / "rank-3" and BundlePaths(real).core(None).root.name == "core-unknown"


def test_straggler_watch_files_are_host_paths(tmp_path: Path) -> None:
    host = HostPaths(tmp_path / "node01")
    for rank in (10, 2):
        host.live_fr(rank).parent.mkdir(parents=True)
        host.live_fr(rank).write_text("{}")
    (host.stragglers.root / "fr" / "rank-x").mkdir()
    (host.stragglers.root / "fr" / "rank-x" / "fr.json").write_text("{}")
    assert host.stragglers.live_fr_ranks() == [2, 10] and host.live_fr(2) == host.stragglers.live_fr(2)
    assert HostPaths(tmp_path / "node02").stragglers.live_fr_ranks() == []
    assert host.stragglers.sample(3, "20261123T000000Z").name == "rank-3-20261123T000000Z.pyspy.txt"
    assert {host.stragglers.summary.parent, host.stragglers.warnings.parent} == {host.stragglers.root}


def test_names_readers_match_are_the_names_writers_use(tmp_path: Path) -> None:
    files = BundlePaths(tmp_path).rank(0)
    assert (files.pyspy_json.name, files.stacks.name) == BundleRankPaths.STACK_DUMPS
    assert (RankPaths(tmp_path).exit.name, RankPaths(tmp_path).worker.name) == (RankPaths.EXIT, RankPaths.WORKER)
