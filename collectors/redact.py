"""Redact secret values from anything a collector writes.

A name is secret when it contains TOKEN, KEY, SECRET, PASSWORD, PASSWD, CREDENTIAL, AUTH or
COOKIE (case-insensitive). Redacted forms: ``NAME=value`` (environment, argv, logs),
``--password=value`` / ``--api-key value`` (command lines), ``"api_key": "value"`` (JSON).
The name is kept so a reader knows the variable was set; the value becomes ``<redacted>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

REDACTED = "<redacted>"
_SECRET_WORD = r"(?:TOKEN|KEY|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|COOKIE)"
_NAME = rf"[A-Za-z0-9_.\-]*{_SECRET_WORD}[A-Za-z0-9_.\-]*"
_SECRET_NAME = re.compile(rf"^{_NAME}$", re.IGNORECASE)
# NAME=value (value up to whitespace or a quote/comma/semicolon/ampersand)
_ASSIGN = re.compile(rf"(?<![A-Za-z0-9_])({_NAME})=([^\s\"',;&]+)", re.IGNORECASE)
# --name value  (flag form with a space)
_FLAG_SPACE = re.compile(rf"(--?{_NAME})(\s+)(?!-)([^\s\"',;&]+)", re.IGNORECASE)
# "name": "value"  (JSON/dict form)
_JSON_PAIR = re.compile(rf"([\"']{_NAME}[\"']\s*:\s*[\"'])([^\"']*)([\"'])", re.IGNORECASE)
_MONKEY_KEYS = ("KEYBOARD",)      # harmless names that contain KEY


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    if any(word in upper for word in _MONKEY_KEYS) and not re.search(r"TOKEN|SECRET|PASS", upper):
        return False
    return bool(_SECRET_NAME.match(name))


def redact_text(text: str) -> str:
    if not text:
        return text
    text = _ASSIGN.sub(_assign_sub, text)
    text = _FLAG_SPACE.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}"
                           if is_secret_name(m.group(1).lstrip("-")) else m.group(0), text)
    return _JSON_PAIR.sub(lambda m: f"{m.group(1)}{REDACTED}{m.group(3)}"
                          if is_secret_name(m.group(1).strip("\"' :")) else m.group(0), text)


def _assign_sub(match: re.Match[str]) -> str:
    name = match.group(1)
    if not is_secret_name(name.lstrip("-")) or match.group(2) == REDACTED:
        return match.group(0)
    return f"{name}={REDACTED}"


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    return {name: (REDACTED if is_secret_name(name) else redact_text(value)) for name, value in env.items()}


def redact_argv(argv: Sequence[str]) -> list[str]:
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        if arg.startswith("-") and "=" not in arg and is_secret_name(arg.lstrip("-")):
            hide_next = True
            out.append(arg)
            continue
        out.append(redact_text(arg))
    return out
