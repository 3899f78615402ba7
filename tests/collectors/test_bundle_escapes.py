"""A target's own strings (thread, function and file names, locals) with terminal escapes: the bundle's text
files hold them as visible ``\\xNN`` (a user who ``cat``s pyspy.txt or gdb.txt runs none of them), the JSON
files as JSON escapes; what the report parses from pyspy.json is the target's real name, as before."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.processes import python_program, running_program
from triage.bundle import CollectorStatus, Trigger, read_manifest
from triage.collectors.common import Target, write_private
from triage.collectors.node_bundle import JobInfo, collect_node_bundle
from triage.options import CollectSettings
from triage.parsing.stacks import parse_pyspy_json

CONTROL = [bytes([c]) for c in (*range(0x09), *range(0x0B, 0x20), 0x7F)]


def test_a_targets_escapes_are_visible_text_in_the_bundle(tmp_path: Path) -> None:
    where = tmp_path / "src"
    where.mkdir()
    with running_program(python_program("escape_target.py", str(where))) as proc:
        bundle = collect_node_bundle(JobInfo("job1"), [Target(rank=0, pid=proc.pid)], Trigger.MANUAL, "t",
                                     CollectSettings(gdb="always", strace_seconds=0), tmp_path / "bundles")
    found = {(c.name, c.rank): c.status for c in read_manifest(bundle).collectors}
    assert found[("pyspy", 0)] == CollectorStatus.OK, found
    text = (bundle / "rank-0" / "pyspy.txt").read_text()
    assert "wait\\x1b]0;pwned\\x07here" in text and "evil\\x1b[2Jfile\\x07.py" in text, text
    assert "thread\\x1b[31mred" in text, text
    for path in bundle.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not [c for c in CONTROL if c in data], f"a control byte in {path.relative_to(bundle)}"
    # the report reads pyspy.json: the target's names as they are (it escapes them when it renders)
    threads = parse_pyspy_json(json.loads((bundle / "rank-0" / "pyspy.json").read_text()))
    assert "wait\x1b]0;pwned\x07here" in {f.function for t in threads for f in t.frames}


def test_write_private_escapes_only_when_asked(tmp_path: Path) -> None:
    raw = "a\x1b[31mb\tc\nd\x7f\x9b"
    write_private(tmp_path / "plain", raw, redact=False)
    write_private(tmp_path / "seen", raw.encode(), redact=False, escape=True)
    write_private(tmp_path / "seen-redacted", raw, escape=True)
    assert (tmp_path / "plain").read_text() == raw
    assert (tmp_path / "seen").read_text() == "a\\x1b[31mb\tc\nd\\x7f\\x9b"
    assert (tmp_path / "seen-redacted").read_text() == "a\\x1b[31mb\tc\nd\\x7f\\x9b"
