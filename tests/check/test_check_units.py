"""Unit tests of `triage check`: the launcher parsing, --timeout, and the verdict over result records."""

from __future__ import annotations

import ast
import io
import os
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from triage.check import worker
from triage.check.launcher import WORKER, Expected, parse_launch
from triage.check.render import render_html, render_text
from triage.check.results import CheckData
from triage.check.run import is_lead
from triage.check.verdict import _ifname_problem, decide, rank_ranges
from triage.cli.check import parse_timeout
from triage.errors import InputError, UsageError
from triage.layout import CheckPaths
from triage.schemas import CHECK_RESULT_FORMAT

TORCHRUN = ["torchrun"]   # found on PATH, as a user types it: this interpreter's scripts dir is put there


@pytest.fixture(autouse=True)
def _torchrun_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """`torchrun` resolves as in an activated venv, whether or not the test run activated one."""
    monkeypatch.setenv("PATH", sysconfig.get_path("scripts") + os.pathsep + os.environ.get("PATH", ""))


def test_torchrun_options_give_the_expected_ranks_and_master() -> None:
    launch = parse_launch(["--", "torchrun", "--nnodes", "2", "--nproc_per_node=4", "--node-rank", "1",
                           "--master-addr", "10.0.0.1", "--master-port", "29511"], environ={})
    expected = launch.expected
    assert (expected.nnodes, expected.nproc_per_node, expected.node_rank) == (2, 4, 1)
    assert (expected.master_host, expected.master_port, expected.world_size) == ("10.0.0.1", 29511, 8)
    command = launch.command(Path("/c"), 123.0)
    assert command[:-5] == launch.argv and command[-5:] == [str(WORKER), "--check-dir", "/c", "--deadline", "123.000"]


@pytest.mark.parametrize(("endpoint", "host", "port"), [
    ("node1:29400", "node1", 29400), ("node1", "node1", 29400), ("[fe80::1]:123", "fe80::1", 123),
])
def test_c10d_endpoint(endpoint: str, host: str, port: int) -> None:
    launch = parse_launch(["torchrun", "--nnodes=1:3", "--rdzv-backend", "c10d", "--rdzv-endpoint", endpoint],
                          environ={})
    assert (launch.expected.master_host, launch.expected.master_port) == (host, port)
    assert launch.expected.nnodes == 3 and launch.expected.elastic and launch.expected.nproc_per_node == 1


def test_standalone_and_slurm_defaults() -> None:
    alone = parse_launch(["torchrun", "--standalone", "--nproc-per-node", "4"], environ={}).expected
    assert (alone.nnodes, alone.node_rank, alone.master_host, alone.world_size) == (1, 0, None, 4)
    slurm = parse_launch(["torchrun", "--nproc-per-node", "2"],
                         environ={"SLURM_JOB_NUM_NODES": "3", "SLURM_NODEID": "2"}).expected
    assert (slurm.nnodes, slurm.node_rank, slurm.slurm_node_id, slurm.world_size) == (3, None, 2, 6)


@pytest.mark.parametrize(("argv", "error", "words"), [
    ([], UsageError, "no launcher given"),
    (["--"], UsageError, "no launcher given"),
    (["no-such-launcher-xyz", "--nnodes", "2"], InputError, "'no-such-launcher-xyz' not found"),
    (["torchrun", "--nproc-per-node", "2", "train.py"], UsageError, "'train.py': triage check supplies the program"),
    (["python3", "train.py"], UsageError, "python3 train.py: triage check needs torchrun in the launcher command"),
    (["torchrun", "-m", "mypkg"], UsageError, "-m: triage check runs its own worker"),
    (["torchrun", "--nnodes", "two"], UsageError, "--nnodes 'two'"),
    (["torchrun", "--nnodes", "3:2"], UsageError, "--nnodes '3:2'"),
    (["torchrun", "--nproc-per-node", "0"], UsageError, "--nproc-per-node '0': out of range"),
    (["torchrun", "--master-port", "x"], UsageError, "--master-port 'x'"),
    (["torchrun", "--nproc-per-node"], UsageError, "--nproc-per-node: missing its value"),
])
def test_bad_launchers(argv: list[str], error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words.replace("(", r"\(").replace("[", r"\[")):
        parse_launch(argv, environ={})


@pytest.mark.parametrize("text", ["0", "-5", "nan", "NaN", "inf", "-inf", "soon", ""])
def test_bad_timeouts(text: str) -> None:
    with pytest.raises(UsageError, match="--timeout"):
        parse_timeout(text)


def test_good_timeout() -> None:
    assert parse_timeout("0.5") == 0.5 and parse_timeout("120") == 120.0


def test_rank_ranges() -> None:
    assert rank_ranges([5, 0, 1, 2]) == "ranks 0-2, 5"
    assert rank_ranges([3]) == "rank 3"
    assert rank_ranges([]) == "no ranks"


# --------------------------------------------------------------------------- verdict

def _rank(rank: int, node_rank: int, host: str, nproc: int = 2, **extra: Any) -> dict[str, Any]:
    leader = rank % nproc == 0
    steps: dict[str, Any] = {
        "store": {"ok": True, "master": "n1:29400", "connect_s": 0.001, "interface": "eth0"},
        "links": {"ok": True, "leader": leader, "probes": []},
        "collectives/gloo": {"ok": True},
        "ring/gloo": {"ok": True, "mb_per_s": 100.0},
        "bandwidth/gloo": {"busbw_gbps": 1.25 if host != "n2" else 0.5},
        "facts": {"clock_offset_s": 0.002},
    }
    record: dict[str, Any] = {"rank": rank, "node_rank": node_rank, "host": host, "local_rank": rank % nproc,
                              "world_size": 6, "finished": True, "step": "done", "steps": steps}
    record.update(extra)
    return record


def _expected(nnodes: int = 3, nproc: int = 2, slurm: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"nnodes": nnodes, "nproc_per_node": nproc, "slurm_nodes": slurm}


def _healthy() -> dict[int, dict[str, Any]]:
    return {r: _rank(r, r // 2, f"n{r // 2 + 1}") for r in range(6)}


def _probes(ranks: dict[int, dict[str, Any]], failing: set[frozenset[str]], error: str = "connection timed out") -> None:
    hosts = {r["node_rank"]: r["host"] for r in ranks.values()}
    for record in ranks.values():
        if record["local_rank"] != 0:
            continue
        probes = []
        for peer, host in hosts.items():
            if peer != record["node_rank"]:
                bad = frozenset((record["host"], host)) in failing
                probes.append({"node_rank": peer, "host": host, "ok": not bad, **({"error": error} if bad else {})})
        record["steps"]["links"]["probes"] = probes


def test_all_healthy_is_ok_with_the_slowest_nodes_bandwidth() -> None:
    verdict = decide(CheckData(nodes=(), ranks=_healthy(), expected=_expected()))
    assert verdict.ok and verdict.exit_code == 0
    assert verdict.headline == "OK: 3 nodes, 6 ranks, all collectives and links fine; gloo 0.5 GB/s"
    assert [n.label for n in verdict.nodes] == ["n1", "n2", "n3"]


def test_one_broken_link_names_the_pair() -> None:
    ranks = _healthy()
    _probes(ranks, {frozenset(("n2", "n3"))})
    for record in ranks.values():
        record["steps"].pop("collectives/gloo")
    verdict = decide(CheckData(nodes=(), ranks=ranks, expected=_expected()))
    assert not verdict.ok
    assert verdict.headline == "link n2 <-> n3 fails (connection timed out); all other links fine"


def test_a_link_that_fails_one_way_names_its_direction() -> None:
    ranks = _healthy()
    _probes(ranks, set())
    for record in ranks.values():
        record["steps"].pop("collectives/gloo")
        if record["host"] == "n2":
            for probe in record["steps"]["links"]["probes"]:
                if probe["host"] == "n3":
                    probe.update(ok=False, error="connection timed out")
    verdict = decide(CheckData(nodes=(), ranks=ranks, expected=_expected()))
    assert verdict.headline == "link n2 -> n3 fails (connection timed out); all other links fine"


def test_a_node_that_reaches_no_other_node_is_named_once() -> None:
    ranks = {r: _rank(r, r // 2, f"n{r // 2 + 1}") for r in range(8)}
    _probes(ranks, {frozenset(("n4", h)) for h in ("n1", "n2", "n3")})
    verdict = decide(CheckData(nodes=(), ranks=ranks, expected=_expected(nnodes=4)))
    assert verdict.problems == ("n4 cannot reach any other node (connection timed out); it reaches the master store",)


def test_unreachable_master_port_names_the_node_interface_and_ranks() -> None:
    nodes = ({"host": "n1", "node_rank": 0, "probe": {"reached": True, "attempts": 1}},
             {"host": "n3", "node_rank": 2, "probe": {"reached": False, "attempts": 9, "target": "n1:29400",
                                                      "error": "connection refused", "interface": "eth1"}})
    verdict = decide(CheckData(nodes=nodes, ranks={}, expected=_expected()))
    assert verdict.headline == ("n3 cannot reach the master port n1:29400 (connection refused) from eth1: "
                                "ranks 4-5 never joined")
    assert verdict.problems[1] == "ranks 0-3 never started: the rendezvous waits for every node"


def test_a_slurm_node_that_never_reported_is_named() -> None:
    ranks = {r: rec for r, rec in _healthy().items() if r < 4}
    for record in ranks.values():       # without n3 no collective can complete
        record["steps"].pop("collectives/gloo")
    verdict = decide(CheckData(nodes=(), ranks=ranks, expected=_expected(slurm=("n1", "n2", "n3"))))
    assert verdict.headline.startswith("n3: never reported")
    assert verdict.missing_ranks == (4, 5)


def test_a_killed_rank_comes_before_the_ranks_the_launcher_stopped() -> None:
    ranks = _healthy()
    for rank in range(6):
        ranks[rank].update(finished=False, step="links", terminated="signal 15")
    ranks[3].pop("terminated")
    ranks[3]["step"] = "store"
    verdict = decide(CheckData(nodes=(), ranks=ranks, expected=_expected()))
    assert verdict.headline == "rank 3 on n2 died (killed or crashed) in step 'store'"
    assert "collateral" in verdict.problems[-1]


def test_ranks_that_had_not_joined_when_a_rank_died_are_its_collateral() -> None:
    """Rank 2 killed before rank 0 wrote its first result: the launcher stopped rank 0 with the rest."""
    ranks = {r: rec for r, rec in _healthy().items() if r in (1, 2)}
    for record in ranks.values():
        record.update(finished=False, step="start", terminated="signal 15")
        record["steps"] = {}
    ranks[2].pop("terminated")
    verdict = decide(CheckData(nodes=(), ranks=ranks, expected=_expected(nnodes=1, nproc=3)))
    assert verdict.headline == "rank 2 on n2 died (killed or crashed) in step 'start'", verdict.problems
    assert verdict.problems[1] == "rank 0 never joined (no result from them; stopped when a rank died)"
    assert "collateral" in verdict.problems[2]


def test_collective_errors_are_grouped() -> None:
    ranks = _healthy()
    for rank in (1, 2):
        ranks[rank]["errors"] = {"gloo": "gloo all_reduce: timed out"}
    verdict = decide(CheckData(nodes=(), ranks=ranks, expected=_expected()))
    assert verdict.headline == "gloo all_reduce: timed out on ranks 1-2"


def test_launcher_that_exits_before_any_rank() -> None:
    nodes = ({"host": "n1", "node_rank": 0, "launcher_exit": 2, "launcher_tail": "error: unrecognized arguments"},)
    verdict = decide(CheckData(nodes=nodes, ranks={}, expected=_expected(nnodes=1)))
    assert verdict.headline == ("the launcher on n1 exited with code 2 before any rank started: "
                                "error: unrecognized arguments")


def test_clock_offset_note() -> None:
    ranks = _healthy()
    ranks[4]["steps"]["facts"]["clock_offset_s"] = -2.5
    verdict = decide(CheckData(nodes=(), ranks=ranks, expected=_expected()))
    assert verdict.ok and verdict.notes == ("n3: clock differs from rank 0's by -2.500 s",)


def test_ranks_without_results_that_joined_the_collectives_are_a_note_not_a_problem() -> None:
    ranks = {r: rec for r, rec in _healthy().items() if r < 2}     # another node's directory is not shared
    verdict = decide(CheckData(nodes=(), ranks=ranks, expected=_expected()))
    assert verdict.ok and verdict.headline.startswith("OK: 3 nodes, 6 ranks")
    assert verdict.notes[0].startswith("ranks 2-5: no result in the check directory, but they joined every collective")


def test_text_rendering_snapshot() -> None:
    ranks = _healthy()
    _probes(ranks, {frozenset(("n2", "n3"))})
    for record in ranks.values():
        for key in ("collectives/gloo", "ring/gloo", "bandwidth/gloo"):
            record["steps"].pop(key)
    out = io.StringIO()
    render_text(decide(CheckData(nodes=(), ranks=ranks, expected=_expected())), Path("/shared/c"), out)
    assert out.getvalue() == (
        "link n2 <-> n3 fails (connection timed out); all other links fine\n"
        "\n"
        "nodes:\n"
        "  n1: ranks 0-1, master via eth0 (connect 1.0 ms), clock +0.002 s\n"
        "  n2: ranks 2-3, master via eth0 (connect 1.0 ms), clock +0.002 s\n"
        "  n3: ranks 4-5, master via eth0 (connect 1.0 ms), clock +0.002 s\n"
        "\n"
        "check directory: /shared/c\n")


def test_html_escapes_what_the_nodes_wrote() -> None:
    ranks = {r: _rank(r, r // 2, "<b>n1</b>" if r < 2 else f"n{r // 2 + 1}") for r in range(6)}
    out = io.StringIO()
    render_html(decide(CheckData(nodes=(), ranks=ranks, expected=_expected())), Path("/c"), out)
    page = out.getvalue()
    assert "<b>n1</b>" not in page and "&lt;b&gt;n1&lt;/b&gt;" in page
    assert '<h1 class="verdict ok"' in page


def test_a_node_that_never_reached_the_link_step_is_named() -> None:
    ranks = _healthy()
    for record in ranks.values():
        record["steps"].pop("collectives/gloo")
        record["steps"]["links"].update(ok=False, error="not every node finished its link probes before the deadline")
    ranks[0]["steps"]["links"]["nodes_missing"] = [2]
    verdict = decide(CheckData(nodes=(), ranks=ranks, expected=_expected()))
    assert verdict.headline == "node rank 2 never published a link address (its first rank did not reach the link step)"


@pytest.mark.parametrize(("name", "value", "wrong"), [
    ("GLOO_SOCKET_IFNAME", "eth0", False), ("GLOO_SOCKET_IFNAME", "eth1", True),
    ("GLOO_SOCKET_IFNAME", "eth0,ib0", True), ("NCCL_SOCKET_IFNAME", "eth", False),
    ("NCCL_SOCKET_IFNAME", "=eth", True), ("NCCL_SOCKET_IFNAME", "ib,eth", False),
    ("NCCL_SOCKET_IFNAME", "^docker,lo", False), ("NCCL_SOCKET_IFNAME", "bond", True),
])
def test_socket_ifname_that_selects_no_interface(name: str, value: str, wrong: bool) -> None:
    problem = _ifname_problem(name, value, ["lo", "eth0"])
    assert (problem is not None) == wrong
    if problem:
        assert problem == f"{name}={value} names no interface of this node (it has eth0, lo)"


def test_a_wrong_gloo_ifname_is_the_problem_when_gloo_failed_and_a_note_otherwise() -> None:
    ranks = _healthy()
    for record in ranks.values():
        record["steps"]["facts"].update(interfaces={"lo": [], "eth0": []}, env={"GLOO_SOCKET_IFNAME": "eth9",
                                                                               "NCCL_SOCKET_IFNAME": "ib"})
    verdict = decide(CheckData(nodes=(), ranks=ranks, expected=_expected()))
    assert verdict.ok and "n1: NCCL_SOCKET_IFNAME=ib names no interface of this node (it has eth0, lo)" in verdict.notes
    for record in ranks.values():
        record["errors"] = {"gloo": "gloo init: RuntimeError: Unable to find address for: eth9"}
    verdict = decide(CheckData(nodes=(), ranks=ranks, expected=_expected()))
    assert verdict.headline == "n1: GLOO_SOCKET_IFNAME=eth9 names no interface of this node (it has eth0, lo)"


@pytest.mark.parametrize("name", ["worker.py", "worker_torch.py"])
def test_the_worker_imports_only_the_standard_library_and_torch(name: str) -> None:
    """The launcher may run it under a Python where triage is not installed."""
    tree = ast.parse((WORKER.parent / name).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {str(node.module).split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.level == 0}
    allowed = set(sys.stdlib_module_names) | {"torch", "psutil", "worker_torch"}
    assert imported <= allowed, imported - allowed


def test_when_no_other_node_reaches_the_master_port_the_master_is_suspected() -> None:
    bad = {"reached": False, "attempts": 5, "target": "n1:29400", "error": "connection timed out"}
    nodes = ({"host": "n1", "probe": {"reached": True, "attempts": 1}},
             {"host": "n2", "probe": bad}, {"host": "n3", "probe": bad})
    verdict = decide(CheckData(nodes=nodes, ranks={}, expected=_expected()))
    assert verdict.headline.startswith("no other node can reach the master port n1:29400 (connection timed out)")
    assert verdict.problems[1].startswith("n2 cannot reach the master port") and len(verdict.problems) == 4


def test_text_output_shows_control_characters_instead_of_sending_them() -> None:
    ranks = {r: _rank(r, r // 2, "evil\x1b]0;owned\x07" if r < 2 else f"n{r // 2 + 1}") for r in range(6)}
    out = io.StringIO()
    render_text(decide(CheckData(nodes=(), ranks=ranks, expected=_expected())), Path("/c"), out)
    assert "\x1b" not in out.getvalue() and "evil\\x1b]0;owned\\x07: ranks 0-1" in out.getvalue()


def test_the_worker_stamps_the_schema_id_of_triage_schemas() -> None:
    """The worker imports nothing of triage (it runs under the job's Python), so it keeps a copy."""
    assert worker.FORMAT == CHECK_RESULT_FORMAT


def test_the_worker_writes_where_the_layout_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's own file name for a rank's result is the one CheckPaths (and the lead) read."""
    monkeypatch.setenv("RANK", "5")
    record = worker.RankRecord(str(tmp_path), deadline=0.0)
    assert Path(record.path) == CheckPaths(tmp_path).rank(5)
    assert Path(record.path).match(str(CheckPaths(tmp_path).ranks_dir / CheckPaths.RANK_GLOB))


def test_an_unreachable_rendezvous_endpoint_is_named() -> None:
    node = {"host": "n1", "node_rank": 0, "launcher_exit": None, "launcher_stopped": "deadline",
            "probe": {"target": "10.9.9.9:29500", "reached": None, "attempts": 0}}   # its first attempt still waiting
    verdict = decide(CheckData(nodes=(node,), ranks={}, expected=_expected(nnodes=1)))
    assert not verdict.ok
    assert "rendezvous endpoint 10.9.9.9:29500 could not be reached from n1 (no answer)" in verdict.headline


def test_the_lead_node_is_node_rank_0_the_only_node_or_the_master_host() -> None:
    def expected(**fields: object) -> Expected:
        base: dict[str, object] = {"nnodes": 2, "nproc_per_node": 2, "node_rank": None, "master_host": None,
                                   "master_port": 29500, "standalone": False, "slurm_nodes": ()}
        return Expected(**{**base, **fields})  # type: ignore[arg-type]

    assert is_lead(expected(node_rank=0)) and not is_lead(expected(node_rank=1))
    assert is_lead(expected(slurm_node_id=0)) and not is_lead(expected(slurm_node_id=3))
    assert is_lead(expected(nnodes=1, master_host="node9.invalid")) and is_lead(expected(standalone=True))
    assert is_lead(expected(master_host="127.0.0.1")) and not is_lead(expected(master_host="node9.invalid"))
