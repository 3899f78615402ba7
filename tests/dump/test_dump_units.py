"""triage.dump on real processes of this test: which agents run, asking one for a bundle (a real
process answers the request file), the pid checks `triage dump --pid` and `triage collect`'s node
side share, and the one progress printer (triage.console.say). `triage dump` against a running
`triage launch` is tests/hang/test_dump.py."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.processes import running_program
from triage.console import say
from triage.dump.agents import agent_running, ask_agents, running_agents
from triage.dump.run import DumpRequest, dump
from triage.dump.targets import dead_pids, pid_targets, run_targets
from triage.errors import InputError
from triage.layout import RunPaths, short_hostname

SLEEPER = [sys.executable, "-c", "import time; print('READY', flush=True); time.sleep(600)"]
# a stand-in agent: answers the first request file in its dump-requests/ with a bundle path
ANSWERER = """
import json, os, sys, time
requests = sys.argv[1]
print("READY", flush=True)
while True:
    names = [n for n in os.listdir(requests) if n.endswith(".json")] if os.path.isdir(requests) else []
    if names:
        with open(os.path.join(requests, names[0] + ".done"), "w") as out:
            json.dump({"bundle": "/b/answered"}, out)
        break
    time.sleep(0.05)
time.sleep(600)
"""


def _exited_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True, timeout=60)
    return int(proc.stdout)


def _node(run: RunPaths, host: str, status: str, pid: int | None) -> None:
    run.host(host).root.mkdir(parents=True, exist_ok=True)
    run.host(host).node.write_text(json.dumps({"status": status, "agent_pid": pid, "host": host}))


def test_an_agent_runs_when_node_json_says_so_and_here_its_pid_lives(tmp_path: Path) -> None:
    run = RunPaths(tmp_path)
    here = short_hostname()
    with running_program(SLEEPER) as live:
        _node(run, here, "running", live.pid)
        assert agent_running(run.host(here))
    _node(run, here, "running", _exited_pid())          # killed -9: node.json is stale
    assert not agent_running(run.host(here))
    _node(run, "elsewhere-node", "running", 1)         # another node's agent: taken at its word
    _node(run, "done-node", "ended", 1)
    assert [h.host for h in running_agents(run)] == ["elsewhere-node"]


def test_asking_an_agent_gets_the_bundle_it_names_and_says_who_did_not_answer(tmp_path: Path) -> None:
    run = RunPaths(tmp_path)
    answering, silent = run.host("node-a"), run.host("node-b")
    answering.dump_requests.mkdir(parents=True)
    with running_program([sys.executable, "-c", ANSWERER, str(answering.dump_requests)]):
        answers = ask_agents([answering], "a test", wait_s=120.0, tag="unit")
    assert answers.bundles == {"node-a": "/b/answered"} and answers.missing == ()
    unanswered = ask_agents([silent], "a test", wait_s=0.3, tag="unit")
    assert unanswered.bundles == {} and unanswered.missing == ("node-b",)
    [request] = [p for p in silent.dump_requests.iterdir()]
    assert "-unit-" in request.name and json.loads(request.read_text())["requester_pid"] == os.getpid()


def test_pid_checks_are_one_for_dump_and_collect(tmp_path: Path) -> None:
    gone = _exited_pid()
    assert dead_pids([gone]) == [gone]
    with pytest.raises(InputError) as error:
        pid_targets([gone], all_users=False, where="node7")
    assert error.value.one_line().startswith(f"node7: no such process: {gone}")
    with running_program(SLEEPER) as live:
        [target] = pid_targets([live.pid], all_users=False)
        assert target.pid == live.pid and dead_pids([live.pid]) == []
    if os.getuid() != 0:                                  # pid 1 is root's
        with pytest.raises(InputError, match="belongs to another user"):
            pid_targets([1], all_users=False)


def test_a_run_with_no_agent_and_no_live_rank_is_a_one_line_error(tmp_path: Path) -> None:
    run = RunPaths(tmp_path / "run")
    rank = run.host(short_hostname()).rank(0)
    rank.root.mkdir(parents=True)
    run.run_json.write_text('{"layout": "triage.run/1", "job_id": "x"}')
    rank.worker.write_text(json.dumps({"pid": _exited_pid(), "rank": 0}))
    assert run_targets(run.host(short_hostname())) == []
    said: list[str] = []
    with pytest.raises(InputError, match="no running agent and no live rank on this node"):
        dump(DumpRequest(run_dir=run.root), said.append)
    with pytest.raises(InputError, match="not a triage run directory"):
        dump(DumpRequest(run_dir=tmp_path), said.append)
    assert said == []


def test_say_tags_the_host_and_shows_control_characters() -> None:
    out = io.StringIO()
    say("collecting from rank 0 \x1b[2J", stream=out)
    say("asking the agent", host="node2", stream=out)
    assert out.getvalue() == "triage: collecting from rank 0 \\x1b[2J\ntriage[node2]: asking the agent\n"
