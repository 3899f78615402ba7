"""Session 57 (fix57c item 3): the kubelet's kill of a container whose liveness (or startup) probe failed its
threshold ("Container pytorch failed liveness probe, will be restarted", its event of reason Killing, after the
probe's "Liveness probe failed: ..." events of reason Unhealthy) was the container's crash by SIGKILL (its exit code
137 in `kubectl describe pod`); the process was stopped by its platform, as an evicted pod is (the corpus labels an
eviction stopped: FederatedAI/KubeFATE#64, openshift/release#57180): now STOPPED, of no rank, with the probe's
failure and what to look at (triage.parsing.frameworks._probe_kill, triage.analysis.stopped's step). The container's
own OOMKilled beside it stays the kill for memory; a kill the work went on after is no end."""

from __future__ import annotations

from tests.helpers.report import report_lines as report

_DESCRIBE = (
    "$ kubectl describe pod ddp-trainer-worker-1",
    "Name:         ddp-trainer-worker-1",
    "Namespace:    research",
    "Containers:",
    "  trainer:",
    "    State:          Running",
    "    Last State:     Terminated",
    "      Reason:       Error",
    "      Exit Code:    137",
    "    Restart Count:  2",
    "    Liveness:       http-get http://:9000/alive delay=60s timeout=5s period=15s #success=1 #failure=4",
    "Events:",
    "  Type     Reason     Age                 From     Message",
    "  ----     ------     ----                ----     -------",
)


def test_a_liveness_kill_is_a_stop_from_outside() -> None:
    result = report(*_DESCRIBE,
                    '  Warning  Unhealthy  3m (x4 over 4m)   kubelet  Liveness probe failed: Get "http://10.8.3.21:9000/'
                    'alive": dial tcp 10.8.3.21:9000: connect: connection refused',
                    "  Normal   Killing    3m                  kubelet  Container trainer failed liveness probe, will be "
                    "restarted")
    verdict = result.verdict
    assert verdict.kind.value == "stopped" and verdict.culprit_ranks == (), verdict.summary
    assert "liveness probe failed" in verdict.summary and "connection refused" in verdict.summary
    assert "ddp-trainer-worker-1" in verdict.summary
    assert "did not answer the kubelet's probe" in verdict.summary      # (its step, not a deadline's)


def test_the_event_line_alone() -> None:
    # (the kubelet's event as `kubectl get events` or an operator's log gives it: knative/serving#5990's line)
    result = report("  Normal   Killing    47s   kubelet, ip-172-20-83-70.ap-southeast-1.compute.internal  Container "
                    "user-container failed liveness probe, will be restarted")
    assert result.verdict.kind.value == "stopped", result.verdict.summary


def test_a_startup_probe_kill() -> None:
    result = report(*_DESCRIBE,
                    "  Warning  Unhealthy  9m (x30 over 14m)  kubelet  Startup probe failed: HTTP probe failed with "
                    "statuscode: 503",
                    "  Normal   Killing    9m                 kubelet  Container trainer failed startup probe, will be "
                    "restarted")
    assert result.verdict.kind.value == "stopped" and "startup probe failed" in result.verdict.summary


def test_the_containers_own_oom_kill_stays_the_kill_for_memory() -> None:
    lines = [line.replace("Reason:       Error", "Reason:       OOMKilled") for line in _DESCRIBE]
    result = report(*lines, "  Normal   Killing    3m   kubelet  Container trainer failed liveness probe, will be "
                    "restarted")
    assert result.verdict.kind.value == "crash" and "SIGKILL" in result.verdict.summary, result.verdict.summary


def test_a_kill_the_training_went_on_after_is_no_stop() -> None:
    result = report("  Normal   Killing    40m   kubelet  Container trainer failed liveness probe, will be restarted",
                    *(f"epoch 3 step {n} loss {2.0 - n / 1000:.3f} lr 1.0e-4" for n in range(100, 1100, 100)),
                    "epoch 3 finished, checkpoint saved")
    assert result.verdict.kind.value != "stopped", result.verdict.summary
