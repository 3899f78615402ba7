"""The redaction rules, their one home (docs/security.md): by name, by value and by form. They live
here, in the stdlib-only in-worker package, because the in-worker agent (worker.json's argv,
exit.json's exception message) may import nothing else of triage; :mod:`triage.redact` re-exports
them for the rest of triage (the collectors, the run directory's files, every report format).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

REDACTED = "<redacted>"
_SECRET_WORD = re.compile(r"PASS|PWD|TOKEN|KEY|SECRET|CREDENTIAL|AUTH|COOKIE|WEBHOOK|DSN", re.IGNORECASE)
# A name is a whole run of name characters, matched from the run's start only (the lookbehind) and judged
# by is_secret_name afterwards: a pattern with the secret word inside the run ([chars]*WORD[chars]*), tried
# from every "-" or "." of a long run, was quadratic (20 KB of "a-" in an argument: two minutes).
_NAME = r"(?<![A-Za-z0-9_.\-])[A-Za-z0-9_.\-]+"
# NAME=value (value up to whitespace or a quote/comma/semicolon/ampersand); the head is matched alone, so
# that a name that is no secret never swallows one after it (--env=HF_TOKEN=x)
_ASSIGN = re.compile(rf"({_NAME})=")
_ASSIGN_VALUE = re.compile(r"[^\s\"',;&]+")
# --name value  (flag form with a space)
_FLAG_SPACE = re.compile(r"(?<![A-Za-z0-9_.\-])(--?[A-Za-z0-9_.][A-Za-z0-9_.\-]*)(\s+)(?!-)([^\s\"',;&]+)")
# "name": "value"  (JSON/dict form)
_JSON_PAIR = re.compile(r"([\"'][A-Za-z0-9_.\-]+[\"']\s*:\s*[\"'])([^\"']*)([\"'])")
# Names that contain a secret word and are not secrets.
_HARMLESS = re.compile(r"^(?:OLDPWD|PWD|KEYBOARD\w*|\w*AUTHOR\w*|\w*BYPASS\w*|\w*COMPASS\w*|\w*PASSENGER\w*"
                       r"|XAUTHORITY|SSH_AUTH_SOCK|\w*KEYMAP\w*|\w*KEYRING\w*|TORCHELASTIC_\w*|\w*PASS_?THROUGH\w*)$",
                       re.IGNORECASE)
# token shapes, each tried only where a run of token characters starts (a JWT tried from every "-" of a
# long run was quadratic)
_TOKENS = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:"
    r"gh[pousr]_[A-Za-z0-9]{16,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|hf_[A-Za-z0-9]{16,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|sk-[A-Za-z0-9_\-]{16,}"
    r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|xox[abposre]-[A-Za-z0-9\-]{10,}"
    r"|xapp-[A-Za-z0-9\-]{16,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"
    r"|npm_[A-Za-z0-9]{36,}"
    r"|pypi-AgE[A-Za-z0-9_\-]{40,}"
    r"|AIza[A-Za-z0-9_\-]{35}"
    r"|r8_[A-Za-z0-9]{20,}"
    r"|dapi[0-9a-f]{32}"
    r"|eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}"
    r")")
# key = value (config files: ~/.aws/credentials, .pypirc), spaces around "=" (NAME=value is _ASSIGN)
_CONFIG_LINE = re.compile(rf"({_NAME})(?:[ \t]+=[ \t]*|=[ \t]+)")
_CONFIG_VALUE = re.compile(r"[^\s\"',;&\\]+")
# PEM: the body of any -----BEGIN X----- block (to its END line, or as far as base64 goes when cut)
_PEM = re.compile(r"(-----BEGIN [A-Z0-9 ]{1,64}-----)((?:[A-Za-z0-9+/=:,\- \t\r\n]|\\[rn])+?)"
                  r"(?=-----END |[^A-Za-z0-9+/=:,\- \t\r\n\\]|$)")
# netrc: "machine h login u password X", or a "password X" line
_NETRC = re.compile(r"((?:(?:machine|login|account|default)\s+\S+\s+|^[ \t]*|\\n[ \t]*)password[ \t]+)"
                    r"(?![=:])([^\s\"'\\]+)",
                    re.IGNORECASE | re.MULTILINE)
# HTTP headers that carry a credential: X-Api-Key:, X-Auth-Token:, Authorization:, Cookie:
# (an X- header's name is judged after the match, by _HEADER_WORD: a word inside the pattern was quadratic)
_HEADER = re.compile(r"(?:(?<![A-Za-z0-9_\-])|(?<=\\[rn]))"
                     r"((X-[A-Za-z0-9\-]*|(?:Proxy-)?Authorization|Set-Cookie|Cookie)[ \t]*:[ \t]*"
                     r"(?:(?:Bearer|Basic|Token|Digest)[ \t]+)?)([^\"'\r\n\\]+)", re.IGNORECASE)
_HEADER_WORD = re.compile(r"KEY|TOKEN|AUTH|SECRET|PASS|SIGNATURE", re.IGNORECASE)
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
# a URL whose userinfo is a bare token, no ":password" (a Sentry DSN https://<key>@o1.ingest.sentry.io/2,
# git's https://<token>@github.com/...): redacted for the web schemes, where a user alone is a basic-auth
# credential, and for any scheme when it looks like a token (16 characters or more, a digit among them);
# ssh://git@host and postgres://postgres@host keep their user
_URL_USER = re.compile(r"(?<![A-Za-z0-9+.\-])([A-Za-z][A-Za-z0-9+.\-]*://)([^/\s:@\"'<>?#]+)@")
_WEB_SCHEMES = frozenset({"http", "https", "ws", "wss", "git+https", "git+http"})
_DIGIT = re.compile(r"[0-9]")
# a signed URL's signature (Azure SAS sig=, S3 X-Amz-Signature=, GCS X-Goog-Signature=, CloudFront Signature=)
_URL_SIGNATURE = re.compile(r"([?&](?:sig|signature|x-amz-signature|x-goog-signature)=)([^&\s\"'<>#]+)",
                            re.IGNORECASE)
# `wandb login KEY` (its key has no shape of its own: 40 hex digits, like a git commit)
_WANDB_LOGIN = re.compile(r"(?<![A-Za-z0-9_\-])(wandb[ \t]+login[ \t]+(?:--?[a-z][a-z\-]*[ \t]+){0,4})"
                          r"([^\s\"'\-][^\s\"']{19,})")

_state = {"enabled": True}


def set_redaction(enabled: bool) -> None:
    """``--no-redact``: turn every rule off for this process (for debugging)."""
    _state["enabled"] = enabled


def redaction_enabled() -> bool:
    return _state["enabled"]


def is_secret_name(name: str) -> bool:
    if len(name) <= 256 and _HARMLESS.match(name):     # (a longer name is no harmless variable: not tried)
        return False
    return _SECRET_WORD.search(name) is not None


def redact_values(text: str) -> str:
    """The by-value rules only: token shapes, scheme credentials and URL passwords."""
    text = _TOKENS.sub(REDACTED, text)
    text = _SCHEME_CREDENTIAL.sub(lambda m: m.group(1) + REDACTED, text)
    lower = text.lower()
    if "hook" in lower:
        text = _WEBHOOK_PATH.sub(_webhook_sub, text)
    if "sig" in lower:
        text = _URL_SIGNATURE.sub(lambda m: m.group(1) + REDACTED, text)
    if "wandb" in lower:
        text = _WANDB_LOGIN.sub(lambda m: m.group(1) + REDACTED, text)
    if "://" not in text:
        return text
    text = _URL_USER.sub(_url_user_sub, text)
    return _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{REDACTED}@" if m.group(2) != REDACTED else m.group(0), text)


def _url_user_sub(match: re.Match[str]) -> str:
    scheme, user = match.group(1), match.group(2)
    if user == REDACTED:
        return match.group(0)
    if scheme[:-3].lower() in _WEB_SCHEMES or (len(user) >= 16 and _DIGIT.search(user)):
        return f"{scheme}{REDACTED}@"
    return match.group(0)


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
    text = _HEADER.sub(_header_sub, text) if ":" in text else text
    text = _NETRC.sub(lambda m: m.group(1) + REDACTED, text)
    text = _named_sub(_CONFIG_LINE, _CONFIG_VALUE, text)
    text = _named_sub(_ASSIGN, _ASSIGN_VALUE, text)
    text = _FLAG_SPACE.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}"
                           if is_secret_name(m.group(1).lstrip("-")) else m.group(0), text)
    text = _JSON_PAIR.sub(lambda m: f"{m.group(1)}{REDACTED}{m.group(3)}"
                          if is_secret_name(m.group(1).strip("\"' :")) else m.group(0), text)
    return redact_values(text)


def _header_sub(match: re.Match[str]) -> str:
    name = match.group(2)
    if name[:2].lower() == "x-" and not _HEADER_WORD.search(name):
        return match.group(0)
    return match.group(1) + REDACTED


def _named_sub(head: re.Pattern[str], value: re.Pattern[str], text: str) -> str:
    """``NAME<separator>value`` with the value redacted where NAME is a secret's: the scan goes on right
    after a head whose name is no secret's, so its value is read again for another name."""
    parts: list[str] = []
    last = pos = 0
    while True:
        match = head.search(text, pos)
        if match is None:
            break
        pos = match.end()
        if is_secret_name(match.group(1).lstrip("-")):
            found = value.match(text, pos)
            if found is not None and found.group() != REDACTED:
                parts += (text[last:pos], REDACTED)
                last = pos = found.end()
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


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
    wandb_login = False                 # `wandb login [--flags] KEY`: the first argument that is no flag
    for index, arg in enumerate(argv):
        if wandb_login and not arg.startswith("-"):
            out.append(REDACTED)
            wandb_login = False
            continue
        if arg == "login" and index and argv[index - 1].rsplit("/", 1)[-1] in ("wandb", "wandb.exe"):
            wandb_login = True
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

