"""torchrun's command line read in one place (triage.parsing.torchrun_args): both option forms,
flags, the program's start, --nnodes ranges and bad values, each answered with one line."""

from __future__ import annotations

import random

import pytest

from triage.parsing.torchrun_args import (
    parse_torchrun_args,
    read_count,
    read_endpoint,
    read_nnodes,
    read_port,
    read_rdzv_conf,
    read_seconds,
    torchrun_index,
)


@pytest.mark.parametrize("argv", [
    ["torchrun", "--nnodes", "2", "--nproc_per_node", "4", "--rdzv-endpoint", "h:29400", "train.py", "--lr", "1"],
    ["torchrun", "--nnodes=2", "--nproc-per-node=4", "--rdzv_endpoint=h:29400", "train.py", "--lr", "1"],
])
def test_both_forms_give_the_same_options_and_stop_at_the_program(argv: list[str]) -> None:
    args = parse_torchrun_args(argv, torchrun_index(argv) or 0)
    assert args.options == (("--nnodes", "2"), ("--nproc-per-node", "4"), ("--rdzv-endpoint", "h:29400"))
    assert args.program_at is not None and argv[args.program_at] == "train.py"
    assert args.get("--lr") is None and args.missing_value is None


def test_flags_take_no_value_and_the_last_occurrence_wins() -> None:
    argv = ["--standalone", "--nproc-per-node", "2", "--nproc-per-node", "3", "--virtual_local_rank", "-m", "pkg.x"]
    args = parse_torchrun_args(argv)
    assert args.has("--standalone") and args.get("--standalone") == ""
    assert args.get("--nproc-per-node") == "3" and args.has("--virtual-local-rank")
    assert args.program_flags == ("-m",) and args.program_at == 7


def test_an_option_without_its_value_at_the_end_is_named() -> None:
    args = parse_torchrun_args(["--nnodes", "2", "--nproc-per-node"])
    assert args.missing_value == "--nproc-per-node" and args.get("--nnodes") == "2" and args.program_at is None


def test_double_dash_ends_the_options() -> None:
    args = parse_torchrun_args(["--nnodes", "1", "--", "--not-an-option"])
    assert args.program_at == 3 and not args.has("--not-an-option")


@pytest.mark.parametrize(("argv", "index"), [
    (["torchrun", "--nnodes", "2"], 1),
    (["/venv/bin/torchrun", "x.py"], 1),
    (["python3", "-m", "torch.distributed.run", "--nnodes", "2"], 3),
    (["python3", "torch.distributed.run"], None),
    (["srun", "python3", "train.py"], None),
])
def test_where_torchruns_options_start(argv: list[str], index: int | None) -> None:
    assert torchrun_index(argv) == index


@pytest.mark.parametrize(("value", "read"), [("1", (1, 1)), ("4", (4, 4)), ("1:2", (1, 2)), ("2:2", (2, 2))])
def test_nnodes_single_and_range(value: str, read: tuple[int, int]) -> None:
    assert read_nnodes(value) == (read, None)


@pytest.mark.parametrize(("value", "problem"), [
    ("two", "--nnodes 'two': expected N or MIN:MAX"), ("", "--nnodes '': expected N or MIN:MAX"),
    ("1:", "--nnodes '1:': expected N or MIN:MAX"), ("1:x", "--nnodes '1:x': expected N or MIN:MAX"),
    ("3:2", "--nnodes '3:2': expected N or MIN:MAX with 1 <= MIN <= MAX"),
    ("0", "--nnodes '0': expected N or MIN:MAX with 1 <= MIN <= MAX"),
    ("-1:2", "--nnodes '-1:2': expected N or MIN:MAX with 1 <= MIN <= MAX"),
])
def test_bad_nnodes_say_what_is_expected(value: str, problem: str) -> None:
    assert read_nnodes(value) == (None, problem)


def test_counts_ports_endpoints_and_conf() -> None:
    assert read_count("--nproc-per-node", "8", 1) == (8, None)
    assert read_count("--nproc-per-node", "gpu", 1) == (None, None)
    assert read_count("--nproc-per-node", "0", 1) == (None, "--nproc-per-node '0': out of range")
    assert read_count("--node-rank", "0", 0) == (0, None)
    assert read_count("--node-rank", "x", 0) == (None, "--node-rank 'x': not a whole number")
    assert read_port("--master-port", "29511") == (29511, None)
    assert read_port("--master-port", "x") == (None, "--master-port 'x': not a number")
    assert read_endpoint("node1:29400") == (("node1", 29400), None)
    assert read_endpoint("node1") == (("node1", 29400), None)
    assert read_endpoint("[fe80::1]:123") == (("fe80::1", 123), None)
    assert read_endpoint("fe80::1") == (("fe80::1", 29400), None)
    assert read_endpoint("h:port") == (None, "--rdzv-endpoint 'h:port': port is not a number")
    assert read_rdzv_conf("join_timeout=90,last_call_timeout=5,bad") == {"join_timeout": "90",
                                                                         "last_call_timeout": "5"}
    assert [read_seconds(v) for v in ("90", "0", "-3", "nan", "inf", "x", None)] == [90.0] + [None] * 6


def test_the_parser_never_raises_on_random_words() -> None:
    rng = random.Random(7)
    words = ["--nnodes", "--nnodes=", "-m", "--", "-", "=", "--standalone", "x.py", "1:2", "--rdzv-conf", "",
             "\x00", "--nproc_per_node=gpu", "-r", "3"]
    for _ in range(2000):
        argv = [rng.choice(words) for _ in range(rng.randint(0, 8))]
        args = parse_torchrun_args(argv, rng.randint(0, 3))
        assert args.program_at is None or 0 <= args.program_at < len(argv)
        for name, value in args.options:
            read_nnodes(value)
            read_count(name, value, 1)
            read_endpoint(value)
            read_rdzv_conf(value)
