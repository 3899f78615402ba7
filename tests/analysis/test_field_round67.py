"""Classes of real pasted logs found by round 67 of the real-world corpus, each tested on a variant written here
(other programs, sizes, devices and surrounding lines than the cases' own), with their negatives."""

from __future__ import annotations

import json

from triage.parsing.textclean import clean_text


# A terminal that pads each line to its width (tmux, screen), its lines then coloured or carried in a container
# runtime's JSON records: the padding stands before the colour's closing code, or inside the record's text. The paste
# was joined into one line, its raylet record lost (WM-PO/WMPO#3 under tests/realworld/test_decorated.py's ANSI and
# JSON decorations)
def test_a_padded_coloured_paste_is_joined_as_the_plain_one() -> None:
    width = 64
    record = ("[2025-03-02 11:20:41,907 E 8812 8812] node_manager.cc:3064: 3 Workers (tasks / actors) killed due to "
              "memory pressure (OOM), 0 Workers crashed due to other reasons at node (IP: 10.4.0.17)")
    wrapped = [record[i:i + width] for i in range(0, len(record), width)]
    plain = ["Loading weights took 4.1 s".ljust(width), *wrapped[:-1], wrapped[-1].ljust(width),
             "(raylet)".ljust(width)]
    coloured = [f"\x1b[33m{line}\x1b[0m" for line in plain]
    carried = [json.dumps({"log": line + "\n", "stream": "stdout", "time": "2025-03-02T11:20:42Z"}) for line in plain]
    assert clean_text("\n".join(coloured)).lines == clean_text("\n".join(plain)).lines
    assert clean_text("\n".join(carried)).lines == clean_text("\n".join(plain)).lines
    lines = clean_text("\n".join(coloured)).lines
    assert lines[0] == "Loading weights took 4.1 s"
    assert any("node_manager.cc:3064" in line and "(IP: 10.4.0.17)" in line for line in lines)
