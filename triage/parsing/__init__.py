"""Parsers for every raw text/JSON format triage reads (each kind is parsed here, once).

Modules: names (op/dtype names), flight_recorder/ (parse, entries, compact), nccl/ (lines,
tracker, bulk, ras), watchdog, dmesg, log_prefix, stacks, torchelastic (and gdb, owned
by the postmortem area). All functions are pure and never raise on bad text; only the explicit
file loaders raise triage.errors.InputError.
"""
