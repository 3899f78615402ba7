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
import operator
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
    string through :func:`redact_text`: what the report renderers write. Each distinct string is
    redacted once (a report of 8,192 ranks holds millions of strings, mostly the same few thousand),
    and an object none of whose strings changed is returned as it is, not copied."""
    if not redaction_enabled():
        return value
    return _Walk().any(value)  # type: ignore[no-any-return]


_ATOMS = frozenset({type(None), bool, int, float, complex, bytes})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _init_fields(kind: type) -> tuple[str, ...]:
    names = tuple(f.name for f in dataclasses.fields(kind) if f.init)
    _FIELDS[kind] = names
    return names


class _Walk:
    """One redaction walk: its cache of redacted strings lives as long as the walk."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def any(self, value: Any) -> Any:
        kind = type(value)
        if kind is str:
            done = self.texts.get(value)
            if done is None:
                done = self.texts[value] = redact_text(value)
            return done
        if kind in _ATOMS or isinstance(value, enum.Enum):
            return value
        if kind is tuple or kind is list:
            items = [self.any(item) for item in value]
            if all(map(operator.is_, items, value)):
                return value
            return kind(items)
        if kind is dict:
            pairs = {key: self.any(item) for key, item in value.items()}
            return value if all(map(operator.is_, pairs.values(), value.values())) else pairs
        names = _FIELDS.get(kind)
        if names is None:
            if not dataclasses.is_dataclass(value) or isinstance(value, type):
                return self.other(value)
            names = _init_fields(kind)
        changes = {}
        for name in names:
            old = getattr(value, name)
            new = self.any(old)
            if new is not old:
                changes[name] = new
        return dataclasses.replace(value, **changes) if changes else value

    def other(self, value: Any) -> Any:
        """Subclasses of the builtin containers (a NamedTuple...): rebuilt by their own type."""
        if isinstance(value, str):
            return redact_text(value)
        if isinstance(value, (tuple, list)):
            return type(value)(self.any(item) for item in value)
        if isinstance(value, dict):
            return {key: self.any(item) for key, item in value.items()}
        return value
