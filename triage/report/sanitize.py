"""Text from inputs made safe for a terminal before any report is rendered: the rules live in
:mod:`triage.console` (the one sanitizer of everything triage prints); these names are kept."""

from triage.console import terminal_safe, visible

__all__ = ["terminal_safe", "visible"]
