"""Classes of real pasted logs found by round 26 of the real-world corpus, each tested on a variant written
here (other ranks, sites, timeouts and surrounding lines than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report


# gloo's timeout whose message was wrapped after its source site: "RuntimeError: [.../unbound_buffer.cc:N]" on one
# line, "Timed out waiting ...ms for send operation to complete" on the next (facebookresearch/optimizers#269's
# shape, rewritten with a send, another site and timeout, under rank prefixes)
def test_gloos_timeout_wrapped_after_its_source_site_is_a_hang_not_an_exception() -> None:
    result = report(
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "train.py", line 88, in <module>',
        "[rank1]:     loss.backward()",
        "[rank1]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:136]",
        "[rank1]: Timed out waiting 600000ms for send operation to complete",
    )
    assert result.verdict.kind.value == "hang", result.verdict.summary
    assert "rank 1 timed out" in result.verdict.summary
    assert result.verdict.culprit_ranks == ()


def test_the_same_timeout_on_one_line_is_read_the_same_way() -> None:
    result = report("RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:136] Timed out waiting "
                    "600000ms for send operation to complete")
    assert result.verdict.kind.value == "hang", result.verdict.summary


def test_an_exception_that_ends_at_its_site_with_a_traceback_after_it_stays_an_exception() -> None:
    result = report(
        "RuntimeError: [/opt/src/my_ext/kernels.cu:412]",
        "Traceback (most recent call last):",
        '  File "eval.py", line 3, in <module>',
        "ValueError: bad shape",
    )
    assert result.verdict.kind.value == "exception", result.verdict.summary


def test_a_site_head_whose_words_say_a_peer_closed_the_connection_is_joined_with_them() -> None:
    result = report(
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598]",
        "Connection closed by peer [10.1.2.3]:41234",
    )
    assert "Connection closed by peer" in result.verdict.summary or any(
        "Connection closed by peer" in f.detail for f in result.findings), result.verdict.summary
