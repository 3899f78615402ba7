"""Redact secret values from anything a collector writes (argv, environment, tool output).

Two kinds of rules, both applied to every text triage writes (proc.json, py-spy, gdb, strace,
pystack, dmesg, core.json) unless ``--no-redact`` turned them off:

- by name: a name is secret when it contains PASS, TOKEN, KEY, SECRET, CREDENTIAL, AUTH or
  COOKIE (case-insensitive). Forms: ``NAME=value`` (environment, argv, logs), ``--password=value``
  / ``--api-key value`` / ``--pass x`` (command lines), ``"api_key": "value"`` (JSON). The name is
  kept so a reader knows it was set; the value becomes ``<redacted>``.
- by value, whatever the name: known token shapes (GitHub ``ghp_``/``gho_``/``github_pat_``,
  Hugging Face ``hf_``, AWS ``AKIA``/``ASIA`` key ids, ``sk-`` API keys, Slack ``xox?-``, JWTs,
  ``Bearer``/``Basic`` credentials) and the password of ``scheme://user:password@host`` URLs.

The ranks' own output.log is never rewritten: it is the user's output.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

REDACTED = "<redacted>"
_SECRET_WORD = r"(?:PASS|PWD|TOKEN|KEY|SECRET|CREDENTIAL|AUTH|COOKIE)"  # noqa: S105 (a pattern, not a secret)
_NAME = rf"[A-Za-z0-9_.\-]*{_SECRET_WORD}[A-Za-z0-9_.\-]*"
_SECRET_NAME = re.compile(rf"^{_NAME}$", re.IGNORECASE)
# NAME=value (value up to whitespace or a quote/comma/semicolon/ampersand)
_ASSIGN = re.compile(rf"(?<![A-Za-z0-9_])({_NAME})=([^\s\"',;&]+)", re.IGNORECASE)
# --name value  (flag form with a space)
_FLAG_SPACE = re.compile(rf"(--?{_NAME})(\s+)(?!-)([^\s\"',;&]+)", re.IGNORECASE)
# "name": "value"  (JSON/dict form)
_JSON_PAIR = re.compile(rf"([\"']{_NAME}[\"']\s*:\s*[\"'])([^\"']*)([\"'])", re.IGNORECASE)
# Names that contain a secret word and are not secrets.
_HARMLESS = re.compile(r"^(?:OLDPWD|PWD|KEYBOARD\w*|\w*AUTHOR\w*|\w*BYPASS\w*|\w*COMPASS\w*|\w*PASSENGER\w*"
                       r"|XAUTHORITY|SSH_AUTH_SOCK|\w*KEYMAP\w*|\w*KEYRING\w*|TORCHELASTIC_\w*|\w*PASS_?THROUGH\w*)$",
                       re.IGNORECASE)
_TOKENS = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"gh[pousr]_[A-Za-z0-9]{16,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|hf_[A-Za-z0-9]{16,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|sk-[A-Za-z0-9_\-]{16,}"
    r"|xox[abposre]-[A-Za-z0-9\-]{10,}"
    r"|eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}"
    r")")
_SCHEME_CREDENTIAL = re.compile(r"(?<![A-Za-z0-9])((?:Bearer|Basic|Token)\s+)([A-Za-z0-9._~+/=\-]{8,})", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@\"'<>]*):([^@\s/\"'<>]+)@")

_state = {"enabled": True}


def set_redaction(enabled: bool) -> None:
    """``--no-redact``: turn every rule off for this process (for debugging)."""
    _state["enabled"] = enabled


def redaction_enabled() -> bool:
    return _state["enabled"]


def is_secret_name(name: str) -> bool:
    if _HARMLESS.match(name):
        return False
    return bool(_SECRET_NAME.match(name))


def redact_values(text: str) -> str:
    """The by-value rules only: token shapes, scheme credentials and URL passwords."""
    text = _TOKENS.sub(REDACTED, text)
    text = _SCHEME_CREDENTIAL.sub(lambda m: m.group(1) + REDACTED, text)
    return _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{REDACTED}@" if m.group(2) != REDACTED else m.group(0), text)


def redact_text(text: str) -> str:
    if not text or not redaction_enabled():
        return text
    text = _ASSIGN.sub(_assign_sub, text)
    text = _FLAG_SPACE.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}"
                           if is_secret_name(m.group(1).lstrip("-")) else m.group(0), text)
    text = _JSON_PAIR.sub(lambda m: f"{m.group(1)}{REDACTED}{m.group(3)}"
                          if is_secret_name(m.group(1).strip("\"' :")) else m.group(0), text)
    return redact_values(text)


def _assign_sub(match: re.Match[str]) -> str:
    name = match.group(1)
    if not is_secret_name(name.lstrip("-")) or match.group(2) == REDACTED:
        return match.group(0)
    return f"{name}={REDACTED}"


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    if not redaction_enabled():
        return dict(env)
    return {name: (REDACTED if is_secret_name(name) else redact_text(value)) for name, value in env.items()}


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line: ``--password x`` hides ``x``; every argument gets the text rules too."""
    if not redaction_enabled():
        return list(argv)
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next and not arg.startswith("-"):
            out.append(REDACTED)
            hide_next = False
            continue
        hide_next = False
        if arg.startswith("-") and "=" not in arg and is_secret_name(arg.lstrip("-")):
            hide_next = True
            out.append(arg)
            continue
        out.append(redact_text(arg))
    return out


def redact_json(value: object) -> object:
    """Every string in a JSON-like value, redacted (keys that name a secret hide their value)."""
    if not redaction_enabled():
        return value
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            return redact_argv(value)
        return [redact_json(v) for v in value]
    if isinstance(value, dict):
        return {k: (REDACTED if isinstance(k, str) and is_secret_name(k) and isinstance(v, str) and v
                    else redact_json(v)) for k, v in value.items()}
    return value
