"""Unit tests of the option table: precedence, bad values, unknown keys, help."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from triage.cli import build_parser
from triage.config import Option, add_arguments, launch_options, resolve
from triage.errors import ConfigError

OPTIONS = launch_options()


def _flags(*argv: str) -> dict[str, object]:
    parser = argparse.ArgumentParser()
    add_arguments(parser, OPTIONS)
    ns = parser.parse_args(list(argv))
    return {o.name: getattr(ns, o.name) for o in OPTIONS}


def test_defaults(tmp_path: Path) -> None:
    values = resolve(OPTIONS, _flags(), None, environ={}, cwd=tmp_path)
    assert values["heartbeat_interval"] == 1.0
    assert values["cores"] is False
    assert values["line_buffered"] == "auto"


def test_precedence_flag_over_yaml_over_env(tmp_path: Path) -> None:
    (tmp_path / "triage.yaml").write_text("heartbeat_interval: 2.5\nkill-grace: 7\ncores: true\n")
    env = {"TRIAGE_HEARTBEAT_INTERVAL": "9", "TRIAGE_KILL_GRACE": "8", "TRIAGE_TICK_INTERVAL": "0.25",
           "TRIAGE_NCCL_DEBUG": "yes"}
    values = resolve(OPTIONS, _flags("--heartbeat-interval", "0.3", "--no-cores"), None, environ=env, cwd=tmp_path)
    assert values["heartbeat_interval"] == 0.3      # flag beats yaml and env
    assert values["kill_grace"] == 7.0              # yaml beats env
    assert values["tick_interval"] == 0.25          # env beats default
    assert values["nccl_debug"] is True
    assert values["cores"] is False                 # --no-cores beats yaml true


def test_explicit_config_file(tmp_path: Path) -> None:
    conf = tmp_path / "other.yaml"
    conf.write_text("console: none\n")
    assert resolve(OPTIONS, _flags(), str(conf), environ={}, cwd=tmp_path)["console"] == "none"
    with pytest.raises(ConfigError, match="not found"):
        resolve(OPTIONS, _flags(), str(tmp_path / "missing.yaml"), environ={}, cwd=tmp_path)


@pytest.mark.parametrize("text, needle", [
    ("bogus_key: 1\n", "unknown key 'bogus_key'"),
    ("heartbeat_interval: fast\n", "heartbeat_interval: 'fast' is not a valid float"),
    ("cores: 3\n", "cores: 3 is not a valid bool"),
    ("console: loud\n", "is not one of all, launcher, none"),
    ("kill_grace: -1\n", "must not be negative"),
    ("- a\n- b\n", "expected a mapping"),
    ("a: [\n", "not valid YAML"),
])
def test_bad_yaml_is_one_line_error_naming_the_file(tmp_path: Path, text: str, needle: str) -> None:
    (tmp_path / "triage.yaml").write_text(text)
    with pytest.raises(ConfigError) as info:
        resolve(OPTIONS, _flags(), None, environ={}, cwd=tmp_path)
    message = info.value.one_line()
    assert needle in message
    assert "triage.yaml" in message and "\n" not in message


def test_bad_env_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="TRIAGE_CORES: 'maybe' is not a valid bool"):
        resolve(OPTIONS, _flags(), None, environ={"TRIAGE_CORES": "maybe"}, cwd=tmp_path)


def test_bad_flag_value_is_a_usage_error() -> None:
    with pytest.raises(SystemExit):
        _flags("--heartbeat-interval", "abc")


def test_hang_options_are_in_the_table() -> None:
    from triage.options import HANG_OPTIONS

    names = {o.name for o in OPTIONS}
    assert {d["name"] for d in HANG_OPTIONS} <= names


def test_option_from_dict_accepts_type_names_and_types() -> None:
    assert Option.from_dict({"name": "x", "type": "int", "default": 1, "help": ""}).type == "int"
    assert Option.from_dict({"name": "x", "type": float, "default": 1.0, "help": ""}).type == "float"
    with pytest.raises(ValueError):
        Option.from_dict({"name": "x", "type": "list", "default": [], "help": ""})


def test_help_documents_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    parser, _ = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["launch", "--help"])
    text = capsys.readouterr().out
    for opt in OPTIONS:
        assert opt.flag in text
        assert opt.env in text
