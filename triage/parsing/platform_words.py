"""Which platform ran a text's job, as far as its own words show it (pure): the advice for its failure is that
platform's (where to read a container's or a job's end), not a bare host's (`dmesg`) nor torchrun's.

- ``htcondor``: HTCondor's job event log (an event's head, ``007 (781.000.000) 2022-01-30 15:15:37 Shadow
  exception!``; the shadow's ``Error from slot1_2@host: ...``), its tools and daemons named (``condor_submit``,
  ``condor_q``, ``condor_shadow``, ``condor_starter``, ...) or condor_q -hold's row of a held job (``1050981.0  dbrown
  11/7  23:48 Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 3000000.``);
- ``kubernetes``: kubectl's output and a pod's state as Kubernetes words them (``kubectl``, ``OOMKilled``,
  ``CrashLoopBackOff``, ``Last State:  Terminated``, ``containerStatuses``, the kubelet's ``Back-off restarting failed
  container``), Spark's executors on Kubernetes (``ExecutorPodsAllocator``,
  ``ExecutorPodsLifecycleManager``, ``KubernetesClusterSchedulerBackend``, ``spark.kubernetes.``).
"""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex

_CONDOR = lazy_regex(r"^[ \t]*0[0-3]\d \(\d+\.\d+\.\d+\) \S+ \S+ |\bShadow exception!|"
                     r"\bError from slot\d*(?:_\d+)?@[\w.-]+:|"
                     r"\bcondor_(?:submit|q|rm|hold|release|history|ssh_to_job|shadow|starter|schedd|startd|wait)\b|"
                     # condor_q -hold's row: its id, owner, the month/day and time it was held, then its HoldReason
                     r"^[ \t]*\d+\.\d+[ \t]+[\w.@-]+[ \t]+\d{1,2}/\d{1,2}[ \t]+\d{1,2}:\d\d[ \t]+[^\n]*?"
                     r"\bput on hold by\b",
                     re.MULTILINE)
_CONDOR_HOLDS = ("condor_", "Shadow exception", "Error from slot", ") ", "put on hold by")
_K8S = lazy_regex(r"\bkubectl\b|\bOOMKilled\b|\bCrashLoopBackOff\b|^[ \t]*Last State:[ \t]+Terminated\b|"
                  r"\bcontainerStatuses\b|\bBack-off restarting failed container\b|"
                  r"\bExecutorPods(?:Allocator|LifecycleManager)\b|\bKubernetesClusterSchedulerBackend\b|"
                  r"\bspark\.kubernetes\.", re.MULTILINE)
_K8S_HOLDS = ("kubectl", "OOMKilled", "CrashLoopBackOff", "Last State:", "containerStatuses", "Back-off restarting",
              "ExecutorPods", "KubernetesClusterSchedulerBackend", "spark.kubernetes.")


def platform_of(text: str) -> str | None:
    """"htcondor", "kubernetes", or None where the text shows neither."""
    if any(word in text for word in _CONDOR_HOLDS) and _CONDOR.search(text) is not None:
        return "htcondor"
    if any(word in text for word in _K8S_HOLDS) and _K8S.search(text) is not None:
        return "kubernetes"
    return None


def platform_of_all(platforms: list[str | None]) -> str | None:
    """The platform of several texts': the first named."""
    return next((platform for platform in platforms if platform is not None), None)
