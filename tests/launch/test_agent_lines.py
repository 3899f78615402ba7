"""The node agent's lines: the host tag on a multi-node job, and nothing a job controls reaches the
terminal as an escape sequence (a host name or a path with ESC/BEL in it is shown escaped)."""

from __future__ import annotations

import io

from triage.agent import lines


def test_a_line_names_its_host_on_several_nodes_and_escapes_control_bytes() -> None:
    out = io.StringIO()
    try:
        lines.configure("node2", multi_node=True)
        lines.say("evidence saved to /run/\x1b]0;pwned\x07\x1b[2Jx", stream=out)
        lines.configure("node2", multi_node=False)
        lines.say("launcher ended", stream=out)
    finally:
        lines.configure("", multi_node=False)
    assert out.getvalue() == ("triage[node2]: evidence saved to /run/\\x1b]0;pwned\\x07\\x1b[2Jx\n"
                              "triage: launcher ended\n")
