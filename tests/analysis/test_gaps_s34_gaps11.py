"""Classes left open by the corpus (issue 23), each tested on a variant written here: a long list of numbers that a
terminal's wrap cut mid-number, a failure or a stop told in the reporter's prose, a hang told only in prose."""

from __future__ import annotations

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.textclean import clean_text


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


def _wrapped(line: str, width: int) -> list[str]:
    return [line[i:i + width] for i in range(0, len(line), width)]


def _cut_mid_number(tasks: list[int], width: int, what: str) -> str:
    """srun's line for these tasks, its host name as long as it takes for a cut at ``width`` to fall inside the
    last task's number (so that the piece after the cut starts with digits, then ": ")."""
    for pad in range(width):
        line = f"srun: error: gpu-{'b' * pad}07: tasks {','.join(map(str, tasks))}: {what}"
        colon = line.index(f": {what}")
        if any(colon - len(str(tasks[-1])) < cut < colon for cut in range(width, len(line), width)):
            return line
    raise AssertionError("no such padding")


# srun's record of the tasks that died on one node lists them all on one line; a terminal's wrap cut the list
# mid-number and the last piece ("20: Segmentation fault") reads like srun's own "20: " label (flux-core#765's
# shape; another node, list, signal and width here)
def test_a_number_list_cut_mid_number_by_the_wrap_is_joined_again() -> None:
    for width in (80, 100, 132):
        line = _cut_mid_number(list(range(3, 1400, 6)), width, "Bus error (core dumped)")
        pieces = _wrapped(line, width)
        assert any(piece[:1].isdigit() and ": Bus" in piece for piece in pieces)
        lines = clean_text("\n".join(["$ srun -N4 -n512 ./train", *pieces, "$ echo done"])).lines
        assert line in lines, (width, lines)


def test_a_labelled_logs_next_label_is_not_the_rest_of_a_number() -> None:
    # srun --label: a line of rank 3 that ends in numbers exactly at the width, then rank 12's own line
    width = 80
    first = ("3: step 10 grads " + ",".join(str(n) for n in range(100, 200, 4)))[:width]
    others = [f"{r}: {'x' * (width - 3 - len(str(r)))}" for r in (4, 5, 6)]   # other lines of the same width
    lines = clean_text("\n".join([first, "12: RuntimeError: boom", *others])).lines
    assert "12: RuntimeError: boom" in lines


def test_a_segfault_listed_over_wrapped_lines_names_every_task() -> None:
    tasks = list(range(1, 700, 8))
    line = _cut_mid_number(tasks, 80, "Segmentation fault")
    result = report("$ srun -N8 -n1024 ./app", *_wrapped(line, 80))
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == tuple(tasks)
