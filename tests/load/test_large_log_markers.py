"""A failure line is read the same in a log of more than 16 MB (the marker pass, triage.load.logs.large) as in a
pasted one: the pass's needles are made from what the line-by-line reader's own gate passes, not kept apart."""

from __future__ import annotations

import mmap
import random
import re
from pathlib import Path

import pytest

from tests.helpers.report import bytes_find_all
from triage.analysis.analyze import analyze
from triage.errors import InputError
from triage.load.inputs import load_inputs
from triage.load.logs import large
from triage.load.logs.text import GATE_LITERALS
from triage.parsing import needles, pages
from triage.parsing.unread_failure import GLOG_HEAD, UNREAD_WORDS
from triage.parsing.whole_text import MARKERS as WHOLE_TEXT_MARKERS

# one line of each class the small-log reader reads, none of them holding an older marker of the large-log pass
# alone: plain words (CRITICAL, PANIC, SEVERE, could not / cannot / unable to and an action, in any of the cases a
# line writes them), glog's error and fatal heads, a launcher that could not start the program (Hydra, Slurm,
# Python), a broken pipe, the shell's record of a killed child in another language, and lines under torchrun's
# "[defaultN]:" prefix
LINES = (
    "CRITICAL: the data loader process stopped answering, giving up",
    "PANIC: unrecoverable state in the job controller",
    "SEVERE: worker 2 lost its connection to the coordinator",
    "Could not open shared memory segment /dev/shm/nccl-4f2a",
    "COULD NOT map the checkpoint file /ckpt/step_900.pt",
    "Unable to allocate the pinned host buffer of 2 GiB",
    "cannot connect to the parameter server at 10.0.0.7:5555",
    "E1127 10:00:01.123456  4242 job.cc:88] The worker on host gpu-3 went away",
    "F1127 10:00:01.123456  4242 job.cc:88] Check this worker on host gpu-3",
    ("[proxy:0:0@gpu-node-1] HYDU_create_process (utils/launch/launch.c:74): execvp error on file train.py "
     "(No such file or directory)"),
    "rank 3: write to the peer: Broken pipe",
    "python: can't open file '/work/train.py': [Errno 2] No such file or directory",
    "slurmstepd: execve(): train.sh: Permission denied",
    "./run.sh: 第 13 行： 114146 已杀死 python3 train.py",
    "[default1]:Segmentation fault (core dumped)",
    "[default1]:page fault at address 0x0 in the data loader",
    # YARN's NodeManager kill of a container (ContainersMonitorImpl), mid-log: the NodeManager goes on after it (rev50 F8)
    ("2024-05-01 11:00:00,000 WARN org.apache.hadoop.yarn.server.nodemanager.containermanager.monitor."
     "ContainersMonitorImpl: Container [pid=4242,containerID=container_1714550000000_0001_01_000002] is running beyond "
     "physical memory limits. Current usage: 2.1 GB of 2 GB physical memory used; 3.0 GB of 4.2 GB virtual memory "
     "used. Killing container."),
    # slurmstepd's cgroup OOM record and a rank's OOM in plain words ("oom": a needle where no letter is before it)
    "slurmstepd: error: Detected 1 oom-kill event(s) in step 4242.0 cgroup. Some of your processes may have been killed",
    "rank 3 hit oom while loading the checkpoint, exiting",
    # torch's glog FATAL head ("[F": a needle where no lower-case letter follows it)
    "[F429 14:03:49.386451 ProcessGroupNCCL.cpp:1554] [Rank 2] NCCL watchdog thread terminated",
    # a rank's timeout in words alone (named_failure's "timed out" words: one needle, not "time")
    "worker 3 Timed Out waiting for the parameter server",
)


def _filler(count: int, start: int = 0, prefix: str = "") -> str:
    """Lines that hold no needle of the pass (checked) and say nothing of progress."""
    return "".join(f"{prefix}data shard {i:05d} loaded from /datasets/part-{i % 97:02d}\n"
                   for i in range(start, start + count))


def _verdict(path: Path) -> tuple[object, ...]:
    try:
        verdict = analyze(load_inputs([path])).verdict
    except InputError:
        return ("refused",)
    return verdict.kind.value, verdict.culprit_ranks, verdict.summary


@pytest.fixture(scope="module")
def filler_block() -> str:
    block = _filler(100_000)
    data = block.encode()
    assert not any(bytes_find_all(data, needle, 0, len(data)) for needle in large.NEEDLES)
    return block


@pytest.mark.parametrize("line", LINES)
def test_a_line_far_from_the_end_of_a_large_log_is_read_as_in_a_small_one(tmp_path: Path, line: str,
                                                                          filler_block: str) -> None:
    small = tmp_path / "small.log"
    small.write_text(_filler(20) + line + "\n" + _filler(20, 20), encoding="utf-8")
    big = tmp_path / "big.log"
    with open(big, "w", encoding="utf-8") as handle:
        while handle.tell() < large.LARGE_LOG_BYTES // 2:
            handle.write(filler_block)
        handle.write(line + "\n")           # far from the end: only the marker pass finds it
        while handle.tell() < large.LARGE_LOG_BYTES + (1 << 20):
            handle.write(filler_block)
    assert big.stat().st_size > large.LARGE_LOG_BYTES
    read = _verdict(small)
    assert read[0] != "refused", line
    assert _verdict(big) == read


def test_every_word_the_line_gate_passes_is_found_by_a_needle() -> None:
    literals = [*GATE_LITERALS, *WHOLE_TEXT_MARKERS]
    forms = [form for word in UNREAD_WORDS for form in (word, word.capitalize(), word.upper(), word.title())]
    patterns = [re.compile(pattern) for pattern in large.PATTERNS]
    for word in (*literals, *forms):
        line = b" " + word.encode() + b" "
        assert any(marker in line for marker in large.MARKERS) or any(p.search(line) for p in patterns), word
    assert re.compile(large.PATTERNS[0]).search(b"[rank3]:E1127 10:00:01.123 42 x.cc:1] y")
    assert large.PATTERNS[0] == GLOG_HEAD.encode()


def test_every_reader_that_declares_markers_is_a_whole_text_reader() -> None:
    """A module of triage.parsing with a MARKERS pre-check reads a whole text: its words are needles of the large-log
    pass (triage.parsing.whole_text), or its lines would not be in a large log's excerpt."""
    import importlib
    import pkgutil

    import triage.parsing
    from triage.parsing import whole_text
    declaring = set()
    for info in pkgutil.walk_packages(triage.parsing.__path__, "triage.parsing."):
        module = importlib.import_module(info.name)
        if isinstance(getattr(module, "MARKERS", None), tuple) and module is not whole_text:
            declaring.add(info.name)
    assert declaring == {module.__name__ for module in (*whole_text.READERS, *whole_text.TAIL_READERS)}


def test_markers_leave_out_a_needle_that_holds_another() -> None:
    assert large.markers(("Error", "rror", "Socket Timeout", "Broken pipe", "pipe"), ("time",)) == \
        (b"TIME", b"Time", b"pipe", b"rror", b"time")


def test_torchruns_default_prefix_marks_no_line(tmp_path: Path) -> None:
    """'fault' (a gate literal) is in every "[default0]:" prefix: the pass looks for it outside that word."""
    data = _filler(20_000, prefix="[default0]:").encode()
    assert large._spans(data, len(data)) == []
    line = b"[default0]:page fault at address 0x0\n"
    whole = data + line
    assert [whole[a:b] + b"\n" for a, b in large._spans(whole, len(whole))] == [line]


def _backend(monkeypatch: pytest.MonkeyPatch, scanner: str) -> None:
    """find_all's backend as a platform has it: Hyperscan, the Aho-Corasick automaton alone, or neither."""
    if scanner == "hyperscan" and needles.module() is None:
        pytest.skip("the hyperscan package is not installed here")
    if scanner == "automaton" and needles._ac is None:
        pytest.skip("the ahocorasick-rs package is not installed here")
    if scanner != "hyperscan":
        monkeypatch.setattr(needles, "_hs", None)
    if scanner == "plain":
        monkeypatch.setattr(needles, "_ac", None)


@pytest.mark.parametrize("scanner", ["hyperscan", "automaton", "plain"])
def test_a_pattern_needle_is_found_where_re_finds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     scanner: str) -> None:
    """A pattern's matches (the glog head, "fault" outside "default", "oom" after no letter, "[F" before no lower-case
    letter), across windows' edges, by the scanner
    (find_all: Hyperscan, or the automaton finding the pattern's keys) and by the plain path (large._find)."""
    _backend(monkeypatch, scanner)
    monkeypatch.setattr(pages, "WINDOW", 4096)
    monkeypatch.setattr(needles, "AUTOMATON_CHUNK", 1000)
    rnd = random.Random(7)
    lines = []
    for i in range(3000):
        head = rnd.choice(["E", "F", "W", "I"]) + f"{rnd.randrange(1300):04d} {i % 24:02d}:{i % 60:02d}:07.1"
        lines.append(rnd.choice(["", "[rank1]:", "0: ", "xx"]) + head + f" {i} file.cc:9] fault{i % 3} default"
                     + rnd.choice([" dead", " 0x7fdead4c", " DEAD.", " Dead", " beefdead", "dead", ""])
                     + rnd.choice([" timed out", " TimedOut", " TIMEOUT", " Time: 0.5", " times out", ""])
                     + rnd.choice([" sigsegv", " Sigkill", " SIGBUS", " sigma", ""])
                     + rnd.choice([" oom-kill", " zoom", " Oom", " bloom", "_oom", ""])
                     + rnd.choice([" [F429 x", " [Fri", " [F]", "[Frame", ""])
                     + rnd.choice([" store based barrier", " Waiting for workers", " RENDEZVOUS", " rendezvous", ""])
                     + "\n")
    data = "".join(lines).encode()
    path = tmp_path / "glog.log"
    path.write_bytes(data)
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        for needle in large.PATTERNS:
            want = bytes_find_all(data, needle, 0, len(data))
            assert want
            if scanner != "plain":
                found = needles.find_all(mapped, large.NEEDLES, 0, len(data))
                assert found is not None and found[needle] == want
            else:
                hits, pos = [], 0
                while (hit := large._find(mapped, needle, pos, len(data))) >= 0:
                    hits.append(hit)
                    pos = hit + 1
                assert hits == want


def test_a_hex_word_marks_no_line_inside_a_hex_number() -> None:
    """'dead' (a gate word spelled in hex digits) in NCCL's pointers marks no line; as a word, at a line's start or
    end, next to a hex number, in any case the pass looks for, it does."""
    filler = _filler(2_000).encode()
    assert large._spans(filler, len(filler)) == []
    pointers = b"".join(b"x NCCL INFO AllReduce: sendbuff 0x7f%ddead4c recvbuff 0x%dDEADbeef\n" % (i, i)
                        for i in range(2_000))
    assert large._spans(pointers, len(pointers)) == []
    for line in (b"the node is dead", b"dead worker 3", b"DEAD", b"Dead: 0x7f00", b"0x7f00 dead", b"rank 2: dead.",
                 b"worker_dead_3", b"deadlock"):
        data = filler + line + b"\n" + filler
        assert line in [data[a:b] for a, b in large._spans(data, len(data))], line


def test_the_glog_heads_keys_open_every_match_of_it() -> None:
    """The automaton finds the glog head by its keys (its level letter and the month's digits): they are every
    string its first three characters' classes take."""
    keys = {key for key, offset in needles._KEYS[GLOG_HEAD.encode()] if offset == 0}
    head = re.compile(GLOG_HEAD[:GLOG_HEAD.index("[0-3]")])
    assert keys == {bytes([a, b, c]) for a in range(256) for b in range(256) for c in b"0123456789"
                    if head.fullmatch(bytes([a, b, c]).decode("latin-1"))}


@pytest.mark.parametrize("scanner", ["automaton", "plain"])
def test_the_marked_lines_are_the_same_by_every_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        scanner: str) -> None:
    """The excerpt's lines (each marked line and the two after it) where Hyperscan is not there: the same."""
    if needles.module() is None:
        pytest.skip("the hyperscan package is not installed here")
    rnd = random.Random(11)
    lines = [_filler(1, i, "[default0]:") for i in range(3000)]
    for at in rnd.sample(range(3000), 60):
        lines[at] = rnd.choice(LINES) + "\n"
    path = tmp_path / "mixed.log"
    path.write_text("".join(lines) + "NCCL WARN x\nNCCL WARN y", encoding="utf-8")
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        want = large._spans(mapped, len(mapped))
        needles._KEPT.clear()
        _backend(monkeypatch, scanner)
        monkeypatch.setattr(needles, "AUTOMATON_CHUNK", 4099)
        assert large._spans(mapped, len(mapped)) == want
    assert len(want) > 60


def test_the_needles_stay_under_the_scanners_step() -> None:
    """The multi-needle pass's cost steps up past 238 needles (Hyperscan's literal matcher, measured in session 48:
    74 MB of short lines 0.020 s of CPU with 238, 0.033 s with 239; the 1 GB NCCL log 2.7x grep's time against 3.1x):
    a reader's words that would take it past are words of the job's end (triage.parsing.whole_text.TAIL_READERS), or
    other needles must be merged first."""
    assert len(large.NEEDLES) <= 238, len(large.NEEDLES)


# progress lines that hold "time" in a word other than a timeout's, each printed on every step of a long run: GADGET-2's
# step line (run.c), Megatron's iteration line (training.py's training_log), mmcv's text logger's line (mmdetection),
# OpenFOAM's solver's "Time = ", a timestamp's field
PROGRESS_WITH_TIME = (
    "Begin Step 1234, Time: 0.0625123, Redshift: 14.9968, Systemstep: 6.25123e-06, Dloga: 0.0001",
    (" iteration      100/  500000 | consumed samples:        51200 | elapsed time per iteration (ms): 512.3 | "
     "learning rate: 1.000E-04 | global batch size:   512 | lm loss: 5.123E+00 | loss scale: 1.0 | grad norm: 1.234 |"),
    ("2023-01-01 10:00:00,123 - mmdet - INFO - Epoch [1][50/7330]\tlr: 1.000e-03, eta: 1 day, 2:03:04, time: 0.512, "
     "data_time: 0.021, memory: 3012, loss_cls: 0.5123, loss_bbox: 0.1234, loss: 0.6357"),
    "Time = 0.0123",
    "ExecutionTime = 12.34 s  ClockTime = 13 s",
    '{"timestamp": "2024-05-01T10:00:00", "step": 12, "TIME_LEFT": "1:00:00"}',
    # an actor-critic's step line (unread_failure's "crit" is its level in capitals, CRIT: no longer a caseless word)
    "step 1000 | actor_loss 0.12 | critic_loss 0.53 | entropy 1.2 | Critic LR 3e-4 | criterion mse",
    "|    critic_loss          | 0.0123   |",       # stable-baselines3's table logger, every log interval
    # "sig" in other words (named_failure's signal names are in capitals, unread_failure's the fault signals' names):
    # glue-factory's iteration line (cvg/glue-factory#19), kubectl's event of a pod assigned to a node, a noise level
    (" [10/17/2023 04:26:12 gluefactory INFO] [E 4 | it 1000] loss {total 1.731E+00, last 7.856E-01, assignment_nll "
     "7.856E-01, nll_pos 1.262E+00, nll_neg 3.087E-01, num_matchable 4.165E+02, num_unmatchable 7.160E+02, confidence "
     "2.601E-01, row_norm 8.259E-01} ."),
    "4m7s        Normal    Scheduled             pod/egg-1    Successfully assigned fate-10000/egg-1 to aks-nodepool1-2",
    "step 120 loss 0.52 sigma 14.6 design_ratio 0.3 signature ok",
    # "oom" in other words (named_failure's \bOOM\b, slurmstepd's oom-kill: no letter before it) and "[F" before a
    # lower-case letter (torch's glog FATAL head is "[F429 ...": a digit), a date's or a frame's bracket
    "[Fri Nov 29 12:00:00 2024] epoch 3 step 120: zoom 2.0x, room temperature 21.5, bloom_filter hits 1024, Boom ok",
    "[Frame 1200] rendered 3 views, Zoom 1.5, Bloom pass done",
)


def test_a_progress_line_with_time_in_it_is_no_needles_hit() -> None:
    """A step's line that holds "time" other than in a timeout's words, or "crit" other than a level in capitals, marks
    nothing: a log of millions of them is read as fast as one without (bench_report_logs.py --step-lines; it marked
    every line before session 52)."""
    for line in PROGRESS_WITH_TIME:
        data = (line + "\n").encode() * 50
        assert large._spans(data, len(data)) == [], line


@pytest.mark.parametrize("words", [("timeout", "timed out"), ("time out",)])
def test_one_needle_marks_every_case_a_line_writes_its_words_in(words: tuple[str, ...]) -> None:
    """Each word of a group, lower case, Capitalised, UPPER, Title and CamelCase, at a line's start, middle or end, is
    found by the group's one pattern, by re and by its keys (the automaton's); the width is the shortest form's."""
    pattern = large.one_needle(words)
    width = min(len(word.replace(" ", "")) for word in words)
    assert needles.width(pattern) == width
    regex = re.compile(pattern)
    for word in words:
        for form in (word, word.capitalize(), word.upper(), word.title(), word.title().replace(" ", "")):
            for line in (form, f"rank 2 {form} after 600 s", f"x:{form}"):
                data = line.encode()
                assert regex.search(data), line
                assert {key for key, _ in needles.keys(pattern)} & {data[i:i + width] for i in range(len(data))}
    assert not regex.search(b"Time: 0.5 timestamp TIMESTEP time_out tim eout")


def test_the_timeout_words_are_one_needle_and_no_literal_holds_them() -> None:
    """named_failure's "timed out" words are one pattern of the pass, and no literal needle that holds one of its
    matches is left beside it (a line holding it is marked by the pattern)."""
    from triage.parsing.named_failure import TIMEOUT_WORDS

    one = large.one_needle(TIMEOUT_WORDS)
    assert one in large.PATTERNS
    assert not any(re.search(one, marker) for marker in large.MARKERS)
    assert not any(b"time" in marker.lower() for marker in large.MARKERS)


def test_crit_is_a_level_in_capitals_for_both_gates() -> None:
    """unread_failure reads CRIT and CRITICAL in capitals (its _LEVEL): the large log's needle and the line gate pass
    those, not "critic" nor "criterion"; the reader's own answer is the same with the gate or without."""
    from triage.parsing.unread_failure import UNREAD_LITERALS, unread_failure

    assert b"CRIT" in large.MARKERS and not any(m.lower().startswith(b"crit") and m != b"CRIT" for m in large.MARKERS)
    assert "CRIT" in UNREAD_LITERALS and "CRIT" in GATE_LITERALS
    for line in ("CRITICAL: the job controller lost the node", "[CRIT] transport: qp entered error state"):
        assert unread_failure(line) is not None, line
    for line in ("critic_loss 0.53 step 1000", "criterion: mse", "Critical batch size reached: 4096"):
        assert unread_failure(line) is None, line


@pytest.mark.parametrize("line", ["rank 3 got sigsegv", "Sigkill sent to worker 2", "terminated by SIGBUS",
                                  "process 4 received signal 11", "Signal: Segmentation fault (11)"])
def test_a_signal_in_any_case_a_reader_reads_is_marked(line: str) -> None:
    """The signals' names in any case (unread_failure's, one needle), "SIG" as written, and the word "signal"."""
    data = (_filler(50) + line + "\n" + _filler(50)).encode()
    assert [data[a:b] for a, b in large._spans(data, len(data))][:1] == [line.encode()], line
