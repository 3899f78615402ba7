"""Options for hang detection and collection (owned by the hang-detection side).

``triage.config`` includes these in the option table of ``triage launch``.
Placeholder: the hang-detection work fills this list.
"""

from __future__ import annotations

from typing import Any

# Each entry is a dict understood by triage.config (see Option there): name, type, default, help, choices.
HANG_OPTIONS: list[dict[str, Any]] = []
