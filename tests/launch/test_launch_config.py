"""Unit tests of the option table: precedence, bad values, unknown keys, help."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from triage.cli import build_parser
from triage.config import add_arguments, launch_options, resolve, settings_from
from triage.errors import ConfigError, UsageError
from triage.options import (
    CollectSettings,
    ConsoleMode,
    GdbMode,
    HangSettings,
    LaunchSettings,
    OnHang,
    StragglerSettings,
    setting_fields,
    settings_values,
)

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


def test_every_setting_of_the_launch_family_is_in_the_table() -> None:
    names = [o.name for o in OPTIONS]
    assert len(names) == len(set(names))
    for family in (HangSettings, CollectSettings, StragglerSettings):
        assert {item.name for item in setting_fields(family)} <= set(names)
    assert {"hang_timeout", "stop_timeout", "on_hang", "gdb", "strace_seconds", "straggler_watch", "run_dir"} <= set(names)
    # internal bounds are not options
    assert "max_bytes" not in names and "worker_dump" not in names


def test_the_table_is_generated_from_the_typed_settings() -> None:
    by_name = {o.name: o for o in OPTIONS}
    assert (by_name["hang_timeout"].type, by_name["hang_timeout"].default) == ("float", 300.0)
    assert by_name["on_hang"].choices == ("report-and-stop", "report-and-wait", "wait")
    assert by_name["on_hang"].default == "report-and-stop"          # plain values, not Enum members
    assert (by_name["straggler_max_samples"].type, by_name["straggler_max_samples"].positive) == ("int", True)
    assert by_name["collector_timeout"].minimum == 0.1 and by_name["host"].path_component
    assert by_name["run_dir"].default is None and by_name["run_dir"].type == "str"


def test_resolved_values_become_typed_settings(tmp_path: Path) -> None:
    (tmp_path / "triage.yaml").write_text("on_hang: wait\nstraggler_max_samples: 1\ngdb: never\n")
    env = {"TRIAGE_STRAGGLER_CHECK_INTERVAL": "2.5", "TRIAGE_STRAGGLER_WATCH": "off", "TRIAGE_HANG_TIMEOUT": "20"}
    values = resolve(OPTIONS, _flags("--stop-timeout", "40", "--console", "none"), None, environ=env, cwd=tmp_path)
    settings = settings_from(LaunchSettings, OPTIONS, values)
    assert settings.hang == HangSettings(hang_timeout=20.0, stop_timeout=40.0, on_hang=OnHang.WAIT)
    assert settings.collect.gdb is GdbMode.NEVER and settings.console is ConsoleMode.NONE
    assert (settings.stragglers.check_interval_s, settings.stragglers.enabled, settings.stragglers.max_samples) == (
        2.5, False, 1)
    assert settings_from(LaunchSettings, OPTIONS, resolve(OPTIONS, _flags(), None, environ={}, cwd=tmp_path / "x")) \
        == LaunchSettings()
    # node.json records them as plain JSON values, by option name
    recorded = settings_values(settings)
    assert recorded["on_hang"] == "wait" and recorded["straggler_watch"] is False and recorded["gdb"] == "never"
    assert set(recorded) == {o.name for o in OPTIONS}


def test_a_cross_option_check_is_a_one_line_usage_error(tmp_path: Path) -> None:
    values = resolve(OPTIONS, _flags("--hang-timeout", "60", "--stop-timeout", "30"), None, environ={}, cwd=tmp_path)
    with pytest.raises(UsageError) as info:
        settings_from(LaunchSettings, OPTIONS, values)
    assert "--stop-timeout 30 is lower than --hang-timeout 60" in info.value.one_line()
    assert "\n" not in info.value.one_line()


@pytest.mark.parametrize(("env", "needle"), [
    ({"TRIAGE_STRAGGLER_CHECK_INTERVAL": "0"}, "TRIAGE_STRAGGLER_CHECK_INTERVAL: 0.0 must be greater than 0"),
    ({"TRIAGE_STRAGGLER_MAX_SAMPLES": "1.5"}, "TRIAGE_STRAGGLER_MAX_SAMPLES: '1.5' is not a valid int"),
    ({"TRIAGE_COLLECTOR_TIMEOUT": "0.01"}, "TRIAGE_COLLECTOR_TIMEOUT: 0.01 must be a finite number >= 0.1"),
    ({"TRIAGE_ON_HANG": "later"}, "TRIAGE_ON_HANG: 'later' is not one of report-and-stop, report-and-wait, wait"),
])
def test_the_settings_checks_apply_to_every_source(tmp_path: Path, env: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve(OPTIONS, _flags(), None, environ=env, cwd=tmp_path)
    assert needle in info.value.one_line()


def test_choices_print_as_their_values() -> None:
    assert f"--on-hang {OnHang.REPORT_AND_WAIT}" == "--on-hang report-and-wait"
    assert str(GdbMode.ALWAYS) == "always" and GdbMode.ALWAYS == "always"


def test_help_documents_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    parser, _ = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["launch", "--help"])
    text = capsys.readouterr().out
    for opt in OPTIONS:
        assert opt.flag in text
        assert opt.env in text


def test_the_docs_name_every_option_of_the_launch_table() -> None:
    docs = "".join((REPO / "docs" / name).read_text(encoding="utf-8")
                   for name in ("launch.md", "hang-policy.md", "stragglers.md"))
    missing = [o.name for o in OPTIONS if f"`{o.name}`" not in docs and f"`{o.flag}" not in docs]
    assert missing == []
