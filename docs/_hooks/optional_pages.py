"""mkdocs hook: pages that other work adds (agent.md, check.md, stragglers.md).

While such a page is absent, links to it become plain text, so that `mkdocs build --strict` still
fails on every other broken link; once it exists it is linked as usual and added to the nav after
the page named in OPTIONAL_PAGES. Listed in mkdocs.yml under ``hooks:``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

# page -> (nav title, the nav entry it follows)
OPTIONAL_PAGES: dict[str, tuple[str, str]] = {
    "agent.md": ("The live agent", "hang-policy.md"),
    "stragglers.md": ("Stragglers", "report.md"),
    "check.md": ("Cluster check", "slurm.md"),
}


def _present(docs_dir: str) -> set[str]:
    return {name for name in OPTIONAL_PAGES if (Path(docs_dir) / name).is_file()}


def on_config(config: Any) -> Any:
    nav = config["nav"]
    listed = {str(value) for entry in nav if isinstance(entry, dict) for value in entry.values()}
    for name in sorted(_present(config["docs_dir"]) - listed):
        title, after = OPTIONAL_PAGES[name]
        where = next((i + 1 for i, entry in enumerate(nav)
                      if isinstance(entry, dict) and after in entry.values()), len(nav))
        nav.insert(where, {title: name})
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    for name in set(OPTIONAL_PAGES) - _present(config["docs_dir"]):
        # [text](name) or [text](name#anchor) -> text (`docs/name`, not written yet)
        markdown = re.sub(r"\[([^\]]+)\]\(" + re.escape(name) + r"(#[^)]*)?\)",
                          lambda m, n=name: f"{m.group(1)} (`docs/{n}`, not written yet)", markdown)
    return markdown
