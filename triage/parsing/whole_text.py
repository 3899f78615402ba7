"""The words of every reader of this package that reads a whole text, in one place: the literals a text must hold
for any of its records to be in it (each module's ``MARKERS``, its cheap pre-check).

A log too large to read line by line (triage.load.logs.large) is read through an excerpt of the lines that hold one of
these (and of the line gate's own words): a reader whose words were not here would not see its lines in a large log,
and a large log would then say less than the same text pasted. ``READERS`` names the modules (``TAIL_READERS`` those
whose words come only at a job's end); tests/load/test_large_log_markers.py fails when a module of this package
declares ``MARKERS`` and is in neither.
"""

from __future__ import annotations

from triage.parsing import (
    crashlog,
    fatal_ending,
    frameworks,
    gloo,
    hpc_codes,
    launch_failure,
    launchers,
    mpi_errors,
    node_heap,
    raise_sites,
    rendezvous,
    solver_errors,
    windows_status,
)

READERS = (crashlog, gloo, hpc_codes, launch_failure, launchers, mpi_errors, raise_sites, rendezvous, solver_errors,
           windows_status)
# Readers of the words a scheduler, an orchestrator or a launcher prints when the job has ended (Slurm's CANCELLED AT,
# Kubernetes' Evicted, LSF's TERM_ mail, Flux's end, seff; a program's own fatal ending, Node's out of memory): printed
# after the job's own lines, in the last 256 KiB a large log is read whole. They are not needles: the multi-needle
# pass's cost steps up past 238 needles (these markers' literals and triage.load.logs.large's own patterns; Hyperscan,
# measured in session 48: 74 MB of short lines 0.020 s of CPU with 238, 0.033 s with 239;
# tests/load/test_large_log_markers.py holds the count), and theirs would take it there (the 1 GB NCCL log from 2.7x to
# 3.1x grep). Their words of a record that comes mid-log (frameworks.MID_LOG_MARKERS: YARN's NodeManager kill) are
# needles all the same.
TAIL_READERS = (frameworks, fatal_ending, node_heap)
MARKERS: tuple[str, ...] = tuple(dict.fromkeys((*(marker for module in READERS for marker in module.MARKERS),
                                                 *frameworks.MID_LOG_MARKERS)))
# the words of records that span the lines around their marked line (a code's box): a large log keeps those lines
BLOCK_MARKERS: tuple[str, ...] = solver_errors.BLOCK_MARKERS
