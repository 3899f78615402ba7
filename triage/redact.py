"""Redact secret values from everything triage writes.

Two kinds of rules, both applied to every text triage writes (run.json, node.json, proc.json,
py-spy, gdb, strace, pystack, dmesg, core.json, every report format; the in-worker agent's
worker.json and exit.json included) unless ``--no-redact`` turned them off. The rules themselves live
in :mod:`triage.worker.redact`, their one home: the in-worker agent may import nothing of triage, so
this module re-exports them from there and adds the walk over reports and other dataclasses:

- by name: a name is secret when it contains PASS, TOKEN, KEY, SECRET, CREDENTIAL, AUTH or
  COOKIE (case-insensitive). Forms: ``NAME=value`` (environment, argv, logs), ``--password=value``
  / ``--api-key value`` / ``--pass x`` (command lines), ``"api_key": "value"`` (JSON). The name is
  kept so a reader knows it was set; the value becomes ``<redacted>``.
- by value, whatever the name: known token shapes (GitHub ``ghp_``/``gho_``/``github_pat_``,
  Hugging Face ``hf_``, AWS ``AKIA``/``ASIA`` key ids, ``sk-`` API keys, Slack ``xox?-``, JWTs,
  ``Bearer``/``Basic`` credentials) and the password of ``scheme://user:password@host`` URLs;
- by form: ``key = value`` config-file lines whose key names a secret (``aws_secret_access_key =
  ...``), PEM blocks (``-----BEGIN ... KEY-----`` bodies), netrc ``password X`` and HTTP headers that
  carry credentials (``X-Api-Key:``, ``Authorization:``, ``Cookie:``).

The ranks' own output.log is never rewritten: it is the user's output.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, TypeVar

from triage.worker.redact import (
    REDACTED,
    is_secret_name,
    redact_argv,
    redact_env,
    redact_json,
    redact_text,
    redact_values,
    redaction_enabled,
    set_redaction,
)

__all__ = ["REDACTED", "is_secret_name", "redact_argv", "redact_env", "redact_json", "redact_strings",
           "redact_text", "redact_values", "redaction_enabled", "set_redaction"]

T = TypeVar("T")


def redact_strings(value: T) -> T:
    """A copy of ``value`` (a report, or any frozen dataclass, tuple, list or dict of them) with every
    string through :func:`redact_text`: what the report renderers write."""
    if not redaction_enabled():
        return value
    return _redact_any(value)  # type: ignore[no-any-return]


def _redact_any(value: Any) -> Any:
    if isinstance(value, enum.Enum) or value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return redact_text(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _redact_any(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    if isinstance(value, (tuple, list)):
        return type(value)(_redact_any(item) for item in value)
    if isinstance(value, dict):
        return {key: _redact_any(item) for key, item in value.items()}
    return value
