"""How the watch gets a rank's Flight Recorder, against real processes on the worker's socket
protocol: ``fr PATH`` when the worker knows it, else the full ``dump`` request; nothing (and no
exception) from a worker that is gone or answers an error."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.helpers.processes import running_program
from triage.agent.straggler_watch import fetch_fr
from triage.layout import RankPaths

# A worker-like server: one JSON line per connection, as triage/worker/heartbeat.py answers.
SERVER = r"""
import json, os, socket, sys
name, knows_fr = sys.argv[1], sys.argv[2] == "yes"
log = open(sys.argv[3], "a")
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.bind("\0" + name[1:])
sock.listen(4)
print("READY", flush=True)
while True:
    conn, _ = sock.accept()
    line = conn.recv(65536).decode().strip()
    verb, _, arg = line.partition(" ")
    log.write(verb + "\n"); log.flush()
    if verb == "fr" and knows_fr:
        open(arg, "w").write('{"version": "2.10", "entries": []}')
        reply = {"ok": True}
    elif verb == "dump":
        open(os.path.join(arg, "fr.json"), "w").write('{"version": "2.10", "entries": []}')
        reply = {"ok": True, "files": {n: {"status": "ok", "bytes": 2, "error": None}
                                       for n in ("fr.json", "fr.pickle", "stacks.txt")}}
    else:
        reply = {"ok": False, "error": f"unknown command {line[:80]!r}"}
    conn.sendall(json.dumps(reply).encode() + b"\n")
    conn.close()
"""


def worker(tmp_path: Path, name: str) -> RankPaths:
    paths = RankPaths(tmp_path / name)
    paths.root.mkdir()
    paths.worker.write_text(json.dumps({"pid": os.getpid(), "control_socket": f"@{name}-{os.getpid()}"}))
    return paths


def test_a_worker_that_knows_fr_writes_the_dump_alone(tmp_path: Path) -> None:
    paths, log = worker(tmp_path, "triage-test-fr-new"), tmp_path / "commands"
    name = json.loads(paths.worker.read_text())["control_socket"]
    with running_program([sys.executable, "-c", SERVER, name, "yes", str(log)]):
        got = fetch_fr(paths, tmp_path / "out" / "fr.json")
    assert got == tmp_path / "out" / "fr.json" and json.loads(got.read_text())["entries"] == []
    assert log.read_text().split() == ["fr"]


def test_an_older_worker_gets_the_dump_request(tmp_path: Path) -> None:
    paths, log = worker(tmp_path, "triage-test-fr-old"), tmp_path / "commands"
    name = json.loads(paths.worker.read_text())["control_socket"]
    with running_program([sys.executable, "-c", SERVER, name, "no", str(log)]):
        got = fetch_fr(paths, tmp_path / "out" / "fr.json")
    assert got == tmp_path / "out" / "fr.json" and got.is_file()
    assert log.read_text().split() == ["fr", "dump"]


def test_a_gone_worker_gives_nothing(tmp_path: Path) -> None:
    paths = worker(tmp_path, "triage-test-fr-gone")
    assert fetch_fr(paths, tmp_path / "out" / "fr.json") is None
    assert fetch_fr(RankPaths(tmp_path / "no-such-rank"), tmp_path / "out2" / "fr.json") is None
