"""Ray's ``RayTaskError(OutOfMemoryError)`` wrapper alone (fix55d item 3, triage.parsing.ray_errors).

The wrapper is read as the retelling of its cause (collateral), so that the cause's own line, torch's CUDA
out-of-memory or Ray's memory monitor's, is the failure where the paste has it. Where no other failure line is in the
input (the cause's message cut out of the paste), the wrapper is the failure: Ray's kill of a worker for memory."""

from __future__ import annotations

from dataclasses import replace

from triage.load.logs.scan import LogScan
from triage.parsing.ray_errors import WRAPPED_NOTE


def ray_wrapper_alone(scan: LogScan) -> None:
    """The wrapper's reading, no longer collateral, where no line in the input fails but wrappers (above)."""
    lists = [scan.orphans, *scan.failures.values()]
    items = [item for items in lists for item in items]
    if not any(WRAPPED_NOTE in line.text for _, line, _ in items):
        return
    if any(not line.collateral and WRAPPED_NOTE not in line.text for _, line, _ in items):
        return
    for items in lists:
        for at, (order, line, path) in enumerate(items):
            if WRAPPED_NOTE in line.text:
                items[at] = (order, replace(line, collateral=False), path)
                scan.orphan_hosts.moved(line, items[at][1])     # (its host, Ray's ip=, goes with it)
