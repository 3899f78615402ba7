"""triage.lazy_regex: module-level patterns compiled on first use, with re.Pattern's answers.

A plain log's report imported ~270 patterns at import and used ~60 of them (docs/performance.md, Large
logs): the module-level ones are made with ``lazy_regex``. The last test keeps it so for patterns added
later (the in-rank worker keeps ``re.compile``: it imports nothing of triage)."""

from __future__ import annotations

import ast
import copy
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

from triage.lazy_regex import lazy_regex

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["", "rank 3 died", "RANK 12 DIED\nrank 4 died", "no rank here", "rank  7 died rank 8 died", "ränk 9 died"]


@pytest.mark.parametrize("flags", [0, re.IGNORECASE, re.MULTILINE | re.IGNORECASE])
def test_every_method_answers_as_the_compiled_pattern(flags: int) -> None:
    source = r"^rank\s+(?P<rank>\d+) (died)"
    real = re.compile(source, flags)
    for text in TEXTS:
        lazy = lazy_regex(source, flags)   # a fresh one per text: each method is the first use of some
        assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
        assert lazy.findall(text) == real.findall(text)
        assert lazy.sub(r"<\g<rank>>", text) == real.sub(r"<\g<rank>>", text)
        assert lazy.subn("x", text) == real.subn("x", text)
        assert lazy.split(text) == real.split(text)
        for method in ("search", "match", "fullmatch"):
            got, want = getattr(lazy, method)(text), getattr(real, method)(text)
            assert (got and got.groupdict()) == (want and want.groupdict())
        got_in, want_in = lazy.search(text, 1, 8), real.search(text, 1, 8)
        assert (got_in and got_in.span()) == (want_in and want_in.span())
        assert (lazy.flags, lazy.groups, dict(lazy.groupindex)) == (real.flags, real.groups, dict(real.groupindex))


def test_bytes_patterns_and_the_source_without_compiling() -> None:
    lazy = lazy_regex(rb" comm (\S+)")
    assert lazy.pattern == rb" comm (\S+)"
    assert "search" not in vars(lazy)            # reading .pattern compiled nothing
    data = b"x comm 0xab rank 1\ny comm 0xcd"
    assert lazy.search(data, 1).group(1) == b"0xab"  # type: ignore[union-attr]
    assert "search" in vars(lazy)                # compiled once: the bound methods now answer directly
    assert [m.group(1) for m in lazy.finditer(data)] == [b"0xab", b"0xcd"]


def test_an_invalid_pattern_fails_at_first_use_with_re_error() -> None:
    lazy = lazy_regex(r"(unclosed")
    with pytest.raises(re.error):
        lazy.search("text")


def test_copied_and_pickled_as_a_compiled_pattern() -> None:
    lazy = lazy_regex(r"a(b+)", re.IGNORECASE)
    for other in (pickle.loads(pickle.dumps(lazy)), copy.deepcopy(lazy), copy.copy(lazy)):  # noqa: S301  (its own)
        assert other.search("xABB").group(1) == "BB"  # type: ignore[union-attr]
        assert other.flags & re.IGNORECASE


def test_dunder_lookups_do_not_compile() -> None:
    lazy = lazy_regex(r"x")
    assert not hasattr(lazy, "__array__")
    assert "search" not in vars(lazy)


def _module_level_compiles(path: Path) -> list[int]:
    found: list[int] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr == "compile" \
                    and isinstance(child.func.value, ast.Name) and child.func.value.id == "re" and not in_function:
                found.append(child.lineno)
            visit(child, inside)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


def test_no_module_level_re_compile_outside_the_worker() -> None:
    """A pattern at a module's top level (or in a class body, a table...) is made with lazy_regex, not
    re.compile: else every run pays its compile at import (in a function, re.compile is fine)."""
    offenders = []
    for path in sorted((ROOT / "triage").rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[1] == "worker" or relative.name == "lazy_regex.py":
            continue
        offenders += [f"{relative}:{line}" for line in _module_level_compiles(path)]
    assert not offenders, "use triage.lazy_regex.lazy_regex for module-level patterns: " + ", ".join(offenders)


def test_a_plain_logs_report_compiles_few_of_its_patterns(tmp_path: Path) -> None:
    """In a fresh interpreter: the report of a two-line log leaves most of the patterns it imported
    uncompiled (the fixed cost; ~60 of ~260 when this was written)."""
    log = tmp_path / "job.log"
    log.write_text("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
                   "[rank1]: RuntimeError: NCCL error: remote process exited\n", encoding="utf-8")
    probe = ("import gc, sys; from triage.cli import main; code = main(sys.argv[1:]); "
             "from triage.lazy_regex import _LazyPattern; "
             "made = [o for o in gc.get_objects() if isinstance(o, _LazyPattern)]; "
             "sys.stderr.write(f'\\nPATTERNS {len(made)} {sum(\"search\" in vars(o) for o in made)}\\n')")
    out = subprocess.run([sys.executable, "-c", probe, "report", str(log), "--format", "json"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300, check=False)
    made, compiled = map(int, out.stderr.rsplit("PATTERNS ", 1)[1].split())
    assert made > 100, out.stderr
    assert compiled < made / 2, (compiled, made)
