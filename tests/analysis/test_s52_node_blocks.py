"""Session 52 (rev47 item 8, 2 again): a rank's end under a node's own head. pdsh's dshbak (and ClusterShell's
clush -b) prints each node's output under a head of its own, the node between two rules of dashes; a launcher's
`rank 3 died from signal 9` in such a block is that node's rank (it lost its host). A head of several nodes
(dshbak -c's `gpu-[08,11]`) names none, nor does a word between two rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log

RULE16, RULE15 = "-" * 16, "-" * 15


def _hosts(out: dict) -> dict[int, str | None]:   # type: ignore[type-arg]
    return {r["rank"]: r["host"] for r in out["ranks"]}


@pytest.mark.parametrize("rule", [RULE16, RULE15])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_rank_under_a_node_block_is_that_nodes(rule: str, eol: str, tmp_path: Path) -> None:
    text = (f"{rule}\ngpu-07\n{rule}\n step 100 loss 0.5\n rank 3 died from signal 9\n"
            f"{rule}\ngpu-[08,11]\n{rule}\n rank 5 died from signal 15\n")
    code, out = report_log(text.replace("\n", eol), tmp_path)
    assert code == 1 and out["verdict"]["culprit_ranks"] == [3] and "(gpu-07)" in out["verdict"]["summary"]
    assert _hosts(out) == {3: "gpu-07", 5: None}


@pytest.mark.parametrize("head", ["Summary", "gpu-[07-08] (2)", "12345"])
def test_a_head_that_names_no_one_node_gives_no_host(head: str, tmp_path: Path) -> None:
    code, out = report_log(f"{RULE15}\n{head}\n{RULE15}\nrank 3 died from signal 9\n", tmp_path)
    assert code == 1 and out["verdict"]["culprit_ranks"] == [3] and _hosts(out) == {3: None}


def test_real_pals_records_through_dshbak(tmp_path: Path) -> None:
    # pmodels/mpich#7605's PALS records ("host: rank N died from signal S"), grouped by node as dshbak prints them
    log = (REPO / "tests/realworld/cases/pmodels__mpich__7605/log.txt").read_text(encoding="utf-8")
    records = [line.split(": ", 1) for line in log.splitlines() if "died from signal" in line]
    assert len(records) == 2
    text = "".join(f"{RULE16}\n{host}\n{RULE16}\n {said}\n" for host, said in records)
    code, out = report_log(text, tmp_path)
    assert code == 1 and out["verdict"]["culprit_ranks"] == [27421], out["verdict"]
    assert _hosts(out)[27421] == "x4213c4s7b0n0.hsn.cm.aurora.alcf.anl.gov"
