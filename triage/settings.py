"""The machinery of triage's typed settings, and `triage report`'s switches (:class:`ReportSettings`).

:func:`setting` declares a settings dataclass's field as an option (its :class:`Spec`), :func:`group` one that holds
another settings dataclass; :func:`setting_fields` lists a class's options (``triage.config`` generates its flags,
YAML keys and variables from them), :func:`build_settings` makes the typed object from resolved option values. The
launch side's settings (``triage launch``, ``dump``, ``collect``) are in :mod:`triage.options`, which re-exports
these: a log's report (its one switch) makes none of their classes and enums at its start.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, TypeVar

S = TypeVar("S")


@dataclass(frozen=True)
class Spec:
    """What a setting field declares beyond its type and default."""

    help: str
    metavar: str | None = None
    minimum: float = 0.0            # numbers: the smallest value allowed
    positive: bool = False          # numbers: must be greater than 0
    path_component: bool = False    # becomes one directory name of the run directory
    name: str | None = None         # the option's name when it is not the field's


def setting(default: Any, help: str, **spec: Any) -> Any:
    """A field that is an option (see :class:`Spec` for ``spec``)."""
    return field(default=default, metadata={"setting": Spec(help, **spec)})


def group(kind: type[Any]) -> Any:
    """A field holding another settings dataclass, whose options join this one's table."""
    return field(default_factory=kind, metadata={"group": True})


@dataclass(frozen=True)
class SettingField:
    """One option as declared by a settings dataclass (flattened through groups)."""

    name: str                       # option name: flag --NAME, YAML key NAME, env TRIAGE_NAME
    kind: str                       # "int", "float", "str" or "bool"
    default: Any
    spec: Spec
    choices: tuple[str, ...] | None


@dataclass(frozen=True)
class ReportSettings:
    """``triage report``'s switches."""

    explain: bool = setting(False, "after the report, print which verdict rules fired (each one's candidate and "
                            "reasons), why the winner won (the rules' order) and what each final step did")


def setting_fields(kind: type[Any]) -> Iterator[SettingField]:
    """The options a settings dataclass declares, its groups' included, in declaration order."""
    hints = typing.get_type_hints(kind)
    for item in fields(kind):
        if item.metadata.get("group"):
            yield from setting_fields(hints[item.name])
            continue
        spec = item.metadata.get("setting")
        if spec is None:
            continue
        value_type = _value_type(hints[item.name])
        choices = None
        if isinstance(value_type, type) and issubclass(value_type, Enum):
            choices, name = tuple(str(member.value) for member in value_type), "str"
        else:
            name = value_type.__name__
        yield SettingField(spec.name or item.name, name, _plain(item.default), spec, choices)


def build_settings(kind: type[S], values: Mapping[str, Any]) -> S:
    """The typed settings from option values by name (a missing or None value keeps the default).
    Values are expected checked (triage.config checks flags, YAML and variables)."""
    hints = typing.get_type_hints(kind)
    given: dict[str, Any] = {}
    for item in fields(kind):   # type: ignore[arg-type]
        if item.metadata.get("group"):
            given[item.name] = build_settings(hints[item.name], values)
            continue
        spec = item.metadata.get("setting")
        raw = values.get(spec.name or item.name) if spec is not None else None
        if raw is not None:
            given[item.name] = _value_type(hints[item.name])(raw)
    return kind(**given)


def settings_values(settings: Any) -> dict[str, Any]:
    """The options of a settings object by name, as plain JSON values (for node.json)."""
    out: dict[str, Any] = {}
    if not is_dataclass(settings):
        raise TypeError(f"not a settings dataclass: {settings!r}")
    for item in fields(settings):
        value = getattr(settings, item.name)
        if item.metadata.get("group"):
            out.update(settings_values(value))
        elif "setting" in item.metadata:
            out[item.metadata["setting"].name or item.name] = _plain(value)
    return out


def _value_type(hint: Any) -> Any:
    """``float`` for ``float``, ``str`` for ``str | None``, the Enum class for a Choice."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        inner = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return inner[0]
    return hint


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value
