"""The docs are held to the code: every package of triage is placed in the import-linter layers and
in docs/development.md's layout (its sub-packages too), every registered command is in
docs/index.md's command table and has its example in the README, and the public API's docstrings
name every report format."""

from __future__ import annotations

import re
import sys

import pytest

from tests.helpers.paths import REPO
from triage import api
from triage.cli import _REGISTRY
from triage.report import FORMATS

PACKAGE = REPO / "triage"

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, from PyPI
    tomllib = pytest.importorskip("tomli")


def _subpackages() -> list[str]:
    return sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))


def _contract_modules() -> set[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    named: set[str] = set()
    for contract in config["tool"]["importlinter"]["contracts"]:
        for key in ("layers", "source_modules"):
            for entry in contract.get(key, []):
                named.update(part.strip() for part in entry.split("|"))
    return named


@pytest.mark.parametrize("package", _subpackages())
def test_every_package_is_in_an_import_linter_contract(package: str) -> None:
    assert f"triage.{package}" in _contract_modules(), (
        f"triage/{package}/ is in no import-linter contract in pyproject.toml: place it in the layers")


@pytest.mark.parametrize("package", _subpackages())
def test_every_package_is_in_the_development_layout(package: str) -> None:
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    layout = text.split("## Layout and layers", 1)[1].split("\n## ", 1)[0]
    assert f"`triage/{package}/`" in layout, (
        f"docs/development.md's layout table does not name triage/{package}/")


def _nested_packages() -> list[str]:
    return sorted(str(p.parent.relative_to(PACKAGE)) for p in PACKAGE.glob("*/*/__init__.py"))


@pytest.mark.parametrize("package", _nested_packages())
def test_every_nested_package_is_in_the_development_layout(package: str) -> None:
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    layout = text.split("## Layout and layers", 1)[1].split("\n## ", 1)[0]
    assert f"`{package}/`" in layout or f"`triage/{package}/`" in layout, (
        f"docs/development.md's layout table does not name triage/{package}/")


@pytest.mark.parametrize("command", sorted(_REGISTRY))
def test_every_command_is_in_the_docs_command_table(command: str) -> None:
    text = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    table = text.split("## Commands", 1)[1].split("\n## ", 1)[0]
    assert re.search(rf"^\| `triage {command}\b", table, re.MULTILINE), (
        f"docs/index.md's command table has no row for `triage {command}`")


@pytest.mark.parametrize("command", sorted(_REGISTRY))
def test_every_command_has_a_readme_example(command: str) -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert re.search(rf"^### `triage {command}`", text, re.MULTILINE) or f"`triage {command}" in text, (
        f"README.md does not mention `triage {command}`")


def test_render_docstring_names_every_format() -> None:
    doc = api.render.__doc__ or ""
    for fmt in FORMATS:
        assert f"``{fmt}``" in doc, f"triage.api.render's docstring does not name the {fmt!r} format"
