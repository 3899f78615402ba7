"""The redaction rules live in :mod:`triage.redact` (a contract module, so that the loaders, the
report renderers and the agent use the same ones); this name is kept for the collectors."""

from triage.redact import (
    REDACTED,
    is_secret_name,
    redact_argv,
    redact_env,
    redact_json,
    redact_strings,
    redact_text,
    redact_values,
    redaction_enabled,
    set_redaction,
)

__all__ = ["REDACTED", "is_secret_name", "redact_argv", "redact_env", "redact_json", "redact_strings",
           "redact_text", "redact_values", "redaction_enabled", "set_redaction"]
