"""Option tables generated from triage's typed settings (triage.options): flags > triage.yaml > TRIAGE_* > default.

Each field of a settings dataclass declared with ``triage.options.setting`` is one :class:`Option`.
For an option ``hang_timeout`` the flag is ``--hang-timeout`` (``--hang-timeout/--no-hang-timeout``
for bools), the YAML key is ``hang_timeout`` (``hang-timeout`` is accepted too) and the
environment variable is ``TRIAGE_HANG_TIMEOUT``. A YAML file is ``triage.yaml`` in the current
directory, or the one given with ``--config FILE``. An unknown YAML key or a bad value anywhere
raises a one-line :class:`~triage.errors.ConfigError` naming the file or variable. The values
resolved (:func:`resolve`) become the typed settings with :func:`settings_from`.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from triage.errors import ConfigError
from triage.lazy_regex import lazy_regex
from triage.regular_files import NOT_REGULAR, NotRegularFile, open_regular
from triage.settings import SettingField, build_settings, setting_fields

DEFAULT_CONFIG_FILE = "triage.yaml"
ENV_PREFIX = "TRIAGE_"
TYPES = ("int", "float", "str", "bool")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
MAX_CONFIG_BYTES = 1024 * 1024
S = TypeVar("S")
_COMPONENT = lazy_regex(r"[A-Za-z0-9._@\-]{1,128}")


@dataclass(frozen=True)
class Option:
    """One option of a command's table, generated from a settings field (triage.options)."""

    name: str
    type: str
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    metavar: str | None = None
    minimum: float = 0.0
    positive: bool = False
    path_component: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()

    @staticmethod
    def from_setting(item: SettingField) -> Option:
        spec = item.spec
        return Option(name=item.name, type=item.kind, default=item.default, help=spec.help, choices=item.choices,
                      metavar=spec.metavar, minimum=spec.minimum, positive=spec.positive,
                      path_component=spec.path_component)


def options_of(kind: type[Any], names: Iterable[str] | None = None) -> tuple[Option, ...]:
    """The option table of a settings dataclass (only ``names``, in the table's order, when given)."""
    table = tuple(Option.from_setting(item) for item in setting_fields(kind))
    if names is None:
        return table
    wanted = set(names)
    unknown = wanted - {o.name for o in table}
    if unknown:
        raise ValueError(f"{kind.__name__} has no option {sorted(unknown)}")
    return tuple(o for o in table if o.name in wanted)


def launch_options() -> tuple[Option, ...]:
    """The table of ``triage launch``: its own options, the hang side's, collection's and the straggler watch's."""
    from triage.options import LaunchSettings  # (the launch side's settings: `triage report` makes none of them)

    return options_of(LaunchSettings)


def settings_from(kind: type[S], options: Sequence[Option], values: Mapping[str, Any]) -> S:
    """The typed settings from resolved values (a cross-option check failing is a one-line UsageError)."""
    return build_settings(kind, {o.name: values.get(o.name) for o in options})


def add_arguments(parser: argparse.ArgumentParser, options: Iterable[Option], config_file: bool = True) -> None:
    """One flag per option; argparse defaults are None so that unset flags fall through (to the YAML
    file, the variables and the defaults: see :func:`resolve`). ``config_file`` adds ``--config``."""
    if config_file:
        parser.add_argument("--config", metavar="FILE", default=None,
                            help=f"YAML file with option values (default: ./{DEFAULT_CONFIG_FILE} if present)")
    for opt in options:
        env_note = (f" [config: {opt.name}, env: {opt.env}, default: {_show(opt.default)}]" if config_file
                    else f" (default: {_show(opt.default)})")
        if opt.type == "bool":
            parser.add_argument(opt.flag, dest=opt.name, action=argparse.BooleanOptionalAction,
                                default=None, help=opt.help + env_note)
            continue
        metavar = opt.metavar or (None if opt.choices else opt.type.upper())
        parser.add_argument(opt.flag, dest=opt.name, default=None, metavar=metavar,
                            choices=opt.choices, type=_argparse_type(opt), help=opt.help + env_note)


def _show(value: Any) -> str:
    if value is None:
        return "auto"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _argparse_type(opt: Option) -> Any:
    def convert(text: str) -> Any:
        try:
            return parse_text(opt, text, f"{opt.flag}")
        except ConfigError as err:
            raise argparse.ArgumentTypeError(err.message.removeprefix(f"{opt.flag}: ")) from None
    convert.__name__ = opt.type
    return convert


def parse_text(opt: Option, text: str, where: str) -> Any:
    """A value given as text (a flag or an environment variable)."""
    value: Any
    try:
        if opt.type == "int":
            value = int(text)
        elif opt.type == "float":
            value = float(text)
        elif opt.type == "bool":
            lowered = text.strip().lower()
            if lowered not in _TRUE | _FALSE:
                raise ValueError
            value = lowered in _TRUE
        else:
            value = text
    except ValueError:
        raise ConfigError(f"{where}: {text!r} is not a valid {opt.type}") from None
    return check_value(opt, value, where)


def check_value(opt: Option, value: Any, where: str) -> Any:
    """Check a typed value (from YAML or parsed text); return it normalised."""
    if value is None:
        return None
    ok = {
        "int": isinstance(value, int) and not isinstance(value, bool),
        "float": isinstance(value, (int, float)) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "str": isinstance(value, (str, int, float)) and not isinstance(value, bool),
    }[opt.type]
    if not ok:
        raise ConfigError(f"{where}: {value!r} is not a valid {opt.type}")
    if opt.type == "float":
        value = float(value)
    if opt.type == "str":
        value = str(value)
    if opt.type == "float" and not math.isfinite(value):
        raise ConfigError(f"{where}: {value!r} is not a finite number")
    if opt.type in ("int", "float") and value < 0:
        raise ConfigError(f"{where}: {value!r} must not be negative (a finite number >= {opt.minimum:g})")
    if opt.type in ("int", "float") and value < opt.minimum:
        raise ConfigError(f"{where}: {value!r} must be a finite number >= {opt.minimum:g}")
    if opt.type in ("int", "float") and opt.positive and value <= 0:
        raise ConfigError(f"{where}: {value!r} must be greater than 0")
    if opt.path_component:
        value = check_path_component(value, where)
    if opt.choices is not None and value not in opt.choices:
        allowed = ", ".join(str(c) for c in opt.choices)
        raise ConfigError(f"{where}: {value!r} is not one of {allowed}")
    return value


def check_path_component(value: str, where: str) -> str:
    """A name that becomes one directory of the run directory (host, job id): no ``/``, no ``..``."""
    if not _COMPONENT.fullmatch(value) or value in (".", ".."):
        raise ConfigError(f"{where}: {value!r} is not a valid name (letters, digits, . _ - @; at most 128)",
                          hint="it becomes a directory name inside the run directory")
    return value


def _read_config_text(path: Path) -> str:
    try:
        with open_regular(path) as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except NotRegularFile:
        raise ConfigError(f"{path}: {NOT_REGULAR}") from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes: not a triage config file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 text (byte {err.start}): not a triage config file") from None


def load_yaml(path: Path, options: Sequence[Option]) -> dict[str, Any]:
    """Values from a YAML file; unknown keys and bad values raise ConfigError naming the file."""
    import yaml  # only when there is a file: every `triage launch` agent would pay for it otherwise

    try:
        raw = yaml.safe_load(_read_config_text(path))
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply: not a triage config file") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}:{line} not valid YAML: {getattr(err, 'problem', err)}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping of option: value, got {type(raw).__name__}")
    by_name = {o.name: o for o in options}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        name = str(key).replace("-", "_")
        opt = by_name.get(name)
        if opt is None:
            raise ConfigError(f"{path}: unknown key {key!r}")
        values[name] = check_value(opt, value, f"{path}: {key}")
    return values


def load_env(environ: Mapping[str, str], options: Sequence[Option]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for opt in options:
        if opt.env in environ and not (opt.type == "str" and environ[opt.env] == ""):
            values[opt.name] = parse_text(opt, environ[opt.env], opt.env)
    return values


def resolve(
    options: Sequence[Option],
    flags: Mapping[str, Any],
    config_file: str | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> dict[str, Any]:
    """Every option's value: flags > YAML (``config_file`` or ./triage.yaml) > TRIAGE_* env > default."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {o.name: o.default for o in options}
    values.update(load_env(env, options))
    if config_file is not None:
        path = Path(config_file)
        if not path.exists():
            raise ConfigError(f"{path}: config file not found")
        values.update(load_yaml(path, options))
    else:
        default = (cwd or Path.cwd()) / DEFAULT_CONFIG_FILE
        if default.is_file():
            values.update(load_yaml(default, options))
    for opt in options:
        if flags.get(opt.name) is not None:
            values[opt.name] = flags[opt.name]
    return values
