"""The redaction rules, their one home (docs/security.md): by name, by value and by form. They live
here, in the stdlib-only in-worker package, because the in-worker agent (worker.json's argv,
exit.json's exception message) may import nothing else of triage; :mod:`triage.redact` re-exports
them for the rest of triage (the collectors, the run directory's files, every report format).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

REDACTED = "<redacted>"
_SECRET_WORD = r"(?:PASS|PWD|TOKEN|KEY|SECRET|CREDENTIAL|AUTH|COOKIE|WEBHOOK)"  # noqa: S105 (a pattern, not a secret)
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
# key = value (config files: ~/.aws/credentials, .pypirc), spaces around "=" (NAME=value is _ASSIGN)
_CONFIG_LINE = re.compile(rf"(?<![A-Za-z0-9_])({_NAME})([ \t]+=[ \t]*|=[ \t]+)([^\s\"',;&\\]+)", re.IGNORECASE)
# PEM: the body of any -----BEGIN X----- block (to its END line, or as far as base64 goes when cut)
_PEM = re.compile(r"(-----BEGIN [A-Z0-9 ]{1,64}-----)((?:[A-Za-z0-9+/=:,\- \t\r\n]|\\[rn])+?)"
                  r"(?=-----END |[^A-Za-z0-9+/=:,\- \t\r\n\\]|$)")
# netrc: "machine h login u password X", or a "password X" line
_NETRC = re.compile(r"((?:(?:machine|login|account|default)\s+\S+\s+|^[ \t]*|\\n[ \t]*)password[ \t]+)"
                    r"(?![=:])([^\s\"'\\]+)",
                    re.IGNORECASE | re.MULTILINE)
# HTTP headers that carry a credential: X-Api-Key:, X-Auth-Token:, Authorization:, Cookie:
_HEADER = re.compile(r"(?:(?<![A-Za-z0-9_\-])|(?<=\\[rn]))"
                     r"((?:X-[A-Za-z0-9\-]*(?:KEY|TOKEN|AUTH|SECRET|PASS|SIGNATURE)[A-Za-z0-9\-]*"
                     r"|(?:Proxy-)?Authorization|Set-Cookie|Cookie)[ \t]*:[ \t]*"
                     r"(?:(?:Bearer|Basic|Token|Digest)[ \t]+)?)([^\"'\r\n\\]+)", re.IGNORECASE)
_SCHEME_CREDENTIAL = re.compile(r"(?<![A-Za-z0-9])((?:Bearer|Basic|Token)\s+)([A-Za-z0-9._~+/=\-]{8,})", re.IGNORECASE)
# webhook URLs carry their credential in the path: Slack's https://hooks.slack.com/services/..., and
# any URL with a /webhooks/, /webhook/ or /webhookb2/ path segment (Discord, Teams, generic); only in
# a URL (``://`` earlier in the same word), never in a file path such as a frame's /app/webhooks/views.py
_WEBHOOK_PATH = re.compile(r"(hooks\.slack\.com/(?:services|workflows|triggers)/|/(?:webhooks?|webhookb2)/)"
                           r"([^\s\"'<>]+)", re.IGNORECASE)
_WORD_END = re.compile(r"[\s\"'<>]")
_URL_LOOKBACK = 2048
# the scheme is matched from the start of its run of scheme characters only (the lookbehind): tried from
# every letter of a long run before "://", the search was quadratic (200 KB of letters: minutes)
_URL_PASSWORD = re.compile(r"(?<![A-Za-z0-9+.\-])([A-Za-z0-9+.\-]+://[^/\s:@\"'<>]*):([^@\s/\"'<>]+)@")

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
    if "hook" in text.lower():
        text = _WEBHOOK_PATH.sub(_webhook_sub, text)
    return _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{REDACTED}@" if m.group(2) != REDACTED else m.group(0), text)


def _webhook_sub(match: re.Match[str]) -> str:
    """The path after the webhook marker, when the word it is in is a URL (bounded look-back)."""
    text, start = match.string, match.start()
    before = text[max(0, start - _URL_LOOKBACK):start]
    ends = [m.end() for m in _WORD_END.finditer(before)]
    word = before[ends[-1]:] if ends else before
    return match.group(1) + REDACTED if "://" in word else match.group(0)


def redact_text(text: str) -> str:
    if not text or not redaction_enabled():
        return text
    text = _PEM.sub(lambda m: m.group(1) + REDACTED, text) if "-----BEGIN " in text else text
    text = _HEADER.sub(lambda m: m.group(1) + REDACTED, text) if ":" in text else text
    text = _NETRC.sub(lambda m: m.group(1) + REDACTED, text)
    text = _CONFIG_LINE.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}"
                            if is_secret_name(m.group(1)) and m.group(3) != REDACTED else m.group(0), text)
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

