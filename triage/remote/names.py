"""Validation of the job ids and host names a user gives us (before they reach any command)."""

from __future__ import annotations

from triage.errors import UsageError
from triage.lazy_regex import lazy_regex

_JOB_ID = lazy_regex(r"[0-9]{1,12}(_[0-9]{1,9})?")
# RFC 1123 labels; an IPv4 address also matches. No leading '-', no shell metacharacters.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = lazy_regex(rf"{_LABEL}(?:\.{_LABEL})*")
_USER = lazy_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}")


def validate_job_id(job: str) -> str:
    if not _JOB_ID.fullmatch(job):
        raise UsageError(f"invalid SLURM job id {job!r}: expected digits such as 1234 (or 1234_5 for an array task)",
                         hint="find the id with `squeue -u $USER`")
    return job


def validate_host(host: str) -> str:
    if len(host) > 253 or not _HOST.fullmatch(host):
        raise UsageError(f"invalid host name {host!r}: letters, digits, '-' and '.' only",
                         hint="give host names as in `ssh HOST`, separated by commas")
    return host


def parse_hosts(text: str) -> list[str]:
    """``h1,h2,[user@]h3`` -> validated names, duplicates removed, order kept."""
    hosts: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        user, _, host = item.rpartition("@")
        if user and not _USER.fullmatch(user):
            raise UsageError(f"invalid user name {user!r} in {item!r}")
        validate_host(host)
        if item not in hosts:
            hosts.append(item)
    if not hosts:
        raise UsageError("--hosts is empty", hint="e.g. --hosts node1,node2")
    return hosts


def parse_pids(text: str) -> list[int]:
    pids: list[int] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if not item.isdigit() or int(item) <= 0:
            raise UsageError(f"invalid pid {item!r} in --pids", hint="e.g. --pids 1234,1235")
        pids.append(int(item))
    return pids
