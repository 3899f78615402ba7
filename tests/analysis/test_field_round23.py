"""Classes of real pasted logs found by round 23 of the real-world corpus, each tested on a variant written
here (other hosts, ports, ranks and surrounding lines than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report


# torch_xla's XRT workers that could not reach xmp.spawn's mesh master, followed by spawn's exit record of
# the process that gave up (pytorch/xla#2604's shape, rewritten with another host, port and process)
def test_a_worker_that_cannot_reach_the_xla_mesh_master_is_a_network_error() -> None:
    result = report(
        "*** End stack trace ***",
        "Failed to connect to client mesh master: tpu-vm-7f3a.internal:8477",
        "Traceback (most recent call last):",
        '  File "run_glue.py", line 12, in <module>',
        "    xmp.spawn(_mp_fn, args=(), nprocs=8, start_method='fork')",
        "Exception: process 3 terminated with exit code 17",
    )
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "tpu-vm-7f3a.internal:8477" in result.verdict.summary


def test_the_words_alone_without_an_address_are_not_read_as_the_mesh_master() -> None:
    result = report("Failed to connect to client mesh master", "Exception: process 3 terminated with exit code 17")
    assert result.verdict.kind.value != "network_error" or "mesh master:" not in result.verdict.summary
