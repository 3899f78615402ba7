"""Classes of real pasted logs found by round 70 of the real-world corpus, each tested on a variant written here
(other programs, addresses, status codes and surrounding lines than the cases' own), with their negatives."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report


# XLA's remote TPU driver (the tpu_driver backend of JAX, TensorFlow and torch_xla) that could not open its gRPC
# session to the TPU host, as grpc_tpu_driver.cc words it: read as the RuntimeError's exception of no rank
# (googlecolab/colabtools#3009)
@pytest.mark.parametrize("lines", [
    # JAX's backend initialisation, a status code of UNAVAILABLE and another host than the case's
    ("WARNING:absl:No GPU/TPU found, falling back to CPU.",
     ("RuntimeError: Backend 'tpu_driver' failed to initialize: UNAVAILABLE: Failed to connect to remote server at "
      "address: grpc://10.240.1.2:8470. Error from gRPC: Connection refused. Details: ")),
    # the older JAX's words (the status name in its own case), a hostname instead of an address
    (("RuntimeError: Deadline exceeded: Failed to connect to remote server at address: grpc://tpu-node-7:8470. "
      "Error from gRPC: Deadline Exceeded. Details: "),),
    # the driver's own log line of it, before Python's
    ("E1103 09:14:02.118203  4242 grpc_tpu_driver.cc:1079] Failed to open the gRPC driver: 4: Deadline Exceeded: ",
     "Traceback (most recent call last):",
     '  File "train.py", line 12, in <module>',
     "    jax.devices()",
     ("RuntimeError: Backend 'tpu_driver' failed to initialize: DEADLINE_EXCEEDED: Failed to connect to remote "
      "server at address: grpc://10.0.3.9:8470. Error from gRPC: Deadline Exceeded. Details: ")),
])
def test_tpu_driver_that_cannot_reach_its_tpu_is_a_network_error(lines: tuple[str, ...]) -> None:
    result = report(*lines)
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "TPU" in result.verdict.summary, result.verdict.summary
    steps = result.next_steps
    assert any("gcloud compute tpus describe" in step for step in steps), steps
    assert not any("NCCL_DEBUG=INFO" in step for step in steps), steps


@pytest.mark.parametrize("line", [
    # another program's words for its own server: no TPU driver (a Go forwarder, with the address quoted)
    'Failed to connect to remote server at address "10.0.0.5:9000" on attempt 3 because: dial tcp: i/o timeout',
    # the TPU backend that is still starting: a wait, no failure
    "UserWarning: TPU backend initialization is taking more than 60.0 seconds. Did you run your code on all TPU hosts?",
])
def test_other_words_are_no_tpu_driver_network_error(line: str) -> None:
    result = report(line)
    steps = result.next_steps
    assert not any("gcloud compute tpus describe" in step for step in steps), (result.verdict.summary, steps)
