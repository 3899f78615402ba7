"""mkdocs hook: lists nested with 2 spaces, as GitHub renders them, nest on the site too.

Python-Markdown nests a list item only under 4 spaces; pages written for GitHub (2 spaces) would
come out flat. A page that nests any list item by 2 spaces gets every indentation outside fenced
code doubled before it is rendered. Pages nested by 4 spaces are left alone. Listed in mkdocs.yml.
"""

from __future__ import annotations

import re
from typing import Any

_TWO_SPACE_ITEM = re.compile(r"^  (?:[-*+]|\d+\.) ")


def _outside_fences(lines: list[str]) -> list[bool]:
    outside, fenced = [], False
    for line in lines:
        if line.lstrip().startswith("```"):
            fenced = not fenced
            outside.append(False)
        else:
            outside.append(not fenced)
    return outside


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    lines = markdown.split("\n")
    outside = _outside_fences(lines)
    if not any(ok and _TWO_SPACE_ITEM.match(line) for line, ok in zip(lines, outside)):
        return markdown
    out = []
    for line, ok in zip(lines, outside):
        indent = len(line) - len(line.lstrip(" "))
        out.append(" " * indent + line if ok and indent and line.strip() else line)
    return "\n".join(out)
