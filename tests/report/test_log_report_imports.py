"""The fixed cost of `triage report LOG`: what a plain log's report imports.

On a 1 GB log the interpreter's start and the imports are a fifth of the report's CPU, and on a
short-line log most of it (docs/performance.md, Large logs). A plain log's report (JSON out) loads
neither rich nor YAML, nor the other commands and the launch side's settings, nor what only a run directory (its
layout, bundles, GPU facts and agent records), many Flight Recorder dumps (a process pool, and logging with it), a
kernel log or an output file needs, nor crash classification (cores and crash records), nor what ``inspect``
imports (``ast``, ``dis``, ``tokenize``: the dataclasses module imports it, and the CLI's start defers it to its first
use, triage.cli.start), nor the scanners (hyperscan, the automaton) that only a large log's passes or a block past
the per-word budget use. Each is imported where it is used: the second test runs those paths on real inputs."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import triage

NOT_FOR_A_PLAIN_LOG = (
    "rich", "yaml", "importlib.metadata", "socket", "secrets", "logging", "concurrent.futures",
    "multiprocessing", "triage.cli.launch", "triage.cli.collect", "triage.cli.postmortem", "triage.cli.dump",
    "triage.cli.check", "triage.cli.top", "triage.agent", "triage.collectors", "triage.report.text",
    "triage.report.html", "triage.load.run_dir", "triage.bundle", "triage.load.kernel", "triage.parsing.dmesg",
    "triage.parsing.flight_recorder", "triage.parsing.flight_recorder.compact", "pickle", "tempfile", "shutil",
    "statistics", "hyperscan", "ahocorasick_rs", "triage.analysis.crash", "triage.layout", "triage.model.gpu",
    "triage.options", "ast", "dis", "tokenize",
    # read only where their input is there (session 58): a directory of per-rank logs, triage's own stop record in a
    # log, c10d's connect warnings, a `triage check` record, the agent's dumped children, --explain; and the verdict
    # rules below the first failure's (op counts, init waits, NCCL processes, a full disk, stacks alone, a rankless
    # timeout, the unlocated guard), each imported in its rule
    "triage.load.log_tree", "triage.load.stop_record", "triage.load.logs.connect_noise", "triage.analysis.cluster_check",
    "triage.analysis.child_wait", "triage.parsing.stacks", "triage.report.explain", "triage.analysis.op_counts",
    "triage.analysis.init_hang", "triage.analysis.nccl_processes", "triage.analysis.disk_full",
    "triage.analysis.stacks_only", "triage.analysis.rankless", "triage.analysis.verdict.unlocated",
)

FAILURE = ("[rank1]:[E1001 10:00:00.1 901 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
           "timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600010 "
           "milliseconds before timing out.\n"
           "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")

PROBE = ("import json, sys; from triage.cli import main; code = main(sys.argv[1:]); "
         "large = sys.modules.get('triage.load.logs.large'); "
         "built = large._needles.cache_info().currsize if large else -1; "
         "sys.stderr.write(f'\\nNEEDLES {built}\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n'); "
         "sys.exit(code)")


def _report(tmp_path: Path, *args: str) -> tuple[dict[str, object], set[str], int]:
    # (this checkout's triage, wherever the installed one is)
    env = dict(os.environ, PYTHONPATH=str(Path(triage.__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", PROBE, "report", *args, "--format", "json"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 1, out.stderr
    modules = out.stderr.rsplit("MODULES ", 1)[1]
    built = int(out.stderr.rsplit("NEEDLES ", 1)[1].split("\n", 1)[0])
    return json.loads(out.stdout), set(json.loads(modules)), built


def test_a_plain_log_report_imports_only_what_it_uses(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("[rank0]: step 1 loss 2.0\n" * 50 + FAILURE, encoding="utf-8")
    report, loaded, built = _report(tmp_path, str(log))
    verdict = report["verdict"]
    assert isinstance(verdict, dict) and verdict["culprit_ranks"] == [0], verdict
    assert "triage.load.logs.large" in loaded and "triage.analysis.analyze" in loaded
    early = sorted(name for name in NOT_FOR_A_PLAIN_LOG if name in loaded)
    assert not early, f"imported by a plain log's report: {early}"
    # the large-log pass's needles (~15 ms to make) are made for a large log only, never by an import's checks
    assert built == 0, "a plain log's report made the large-log needles"


def test_what_a_plain_log_leaves_out_is_imported_where_it_is_used(tmp_path: Path) -> None:
    log = tmp_path / "node.log"
    log.write_text(FAILURE + "[Thu Oct  1 10:00:01 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, "
                   "GPU has fallen off the bus.\n", encoding="utf-8")
    report, loaded, _ = _report(tmp_path, str(log))
    assert {"triage.load.kernel", "triage.parsing.dmesg"} <= loaded
    assert "Xid 79" in json.dumps(report)
    out = tmp_path / "report.json"
    subprocess.run([sys.executable, "-m", "triage", "report", str(log), "--format", "json", "-o", str(out)],
                   cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert json.loads(out.read_text(encoding="utf-8"))["schema"] == "triage.report/1"


def test_the_dataclasses_a_plain_log_report_creates_have_their_own_docstrings(tmp_path: Path) -> None:
    # without one, the dataclasses module writes one from inspect.signature at each import (~3 ms for 63 classes)
    log = tmp_path / "job.log"
    log.write_text(FAILURE, encoding="utf-8")
    _, loaded, _ = _report(tmp_path, str(log))
    made = []
    for name in sorted(n for n in loaded if n == "triage" or n.startswith("triage.")):
        module = importlib.import_module(name)
        made += [kind for kind in vars(module).values() if isinstance(kind, type) and dataclasses.is_dataclass(kind)
                 and kind.__module__ == name]
    assert len(made) > 50
    written = sorted(kind.__qualname__ for kind in made if (kind.__doc__ or "").startswith(kind.__name__ + "("))
    assert not written, f"dataclasses without a docstring of their own: {written}"


def test_the_inputs_that_need_the_deferred_modules_load_them(tmp_path: Path) -> None:
    # a directory of per-rank logs (triage.load.log_tree) reported with --explain (triage.report.explain)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "rank_0.log").write_text("step 1 loss 2.0\ntorch.OutOfMemoryError: CUDA out of memory.\n", encoding="utf-8")
    (logs / "rank_1.log").write_text("step 1 loss 2.0\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(Path(triage.__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", PROBE, "report", str(logs), "--format", "json", "--explain"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 1, out.stderr
    loaded = set(json.loads(out.stderr.rsplit("MODULES ", 1)[1]))
    # --explain asks every rule, the deferred ones included (each imports its module at its call)
    assert {"triage.load.log_tree", "triage.report.explain", "triage.analysis.init_hang",
            "triage.analysis.verdict.unlocated"} <= loaded
    assert json.loads(out.stdout)["verdict"]["culprit_ranks"] == [0]
    told = out.stderr.split("\nNEEDLES", 1)[0]     # the explanation, on stderr after a JSON report
    assert "how the verdict was decided" in told and "unlocated" in told, told
