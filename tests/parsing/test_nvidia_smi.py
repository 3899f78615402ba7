"""nvidia-smi -q -x parsed on real outputs: the test data of influxdata/telegraf's nvidia_smi input
(MIT), captured from real GPUs: an A100 SXM4 80GB on driver 535.54.03 and a GeForce RTX 3080 with
desktop processes on driver 536.40 (data/nvidia-smi-*.xml, unchanged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.errors import InputError
from triage.parsing.nvidia_smi import parse_gpus_json, parse_nvidia_smi_xml

DATA = Path(__file__).parent / "data"


def test_an_a100_reads_memory_clocks_and_ecc() -> None:
    node = parse_nvidia_smi_xml((DATA / "nvidia-smi-a100-sxm4-v12.xml").read_text())
    assert node.source == "nvidia-smi" and node.driver == "535.54.03"
    [gpu] = node.gpus
    assert (gpu.index, gpu.name, gpu.bus_id) == (1, "NVIDIA A100-SXM4-80GB", "00000000:01:00.0")
    assert (gpu.memory_used_mib, gpu.memory_total_mib) == (50, 81920)
    assert (gpu.sm_clock_mhz, gpu.mem_clock_mhz) == (1275, 1593)
    assert (gpu.ecc_volatile_uncorrected, gpu.ecc_volatile_corrected, gpu.ecc_aggregate_uncorrected) == (0, 0, 0)


def test_a_desktop_card_lists_its_processes_and_has_no_ecc() -> None:
    node = parse_nvidia_smi_xml((DATA / "nvidia-smi-rtx-3080-v12.xml").read_text())
    [gpu] = node.gpus
    assert gpu.name == "NVIDIA GeForce RTX 3080" and (gpu.util_gpu, gpu.util_memory) == (0, 37)
    assert gpu.ecc_volatile_uncorrected is None and gpu.retired_pages is None
    assert gpu.processes[0].pid == 835 and gpu.processes[0].name == "/usr/lib/Xorg"
    assert gpu.processes[0].used_mib == 550 and len(gpu.processes) == 5


def test_the_bundle_form_round_trips() -> None:
    node = parse_nvidia_smi_xml((DATA / "nvidia-smi-rtx-3080-v12.xml").read_text())
    again = parse_gpus_json(node.to_json(), "gpus.json")
    assert again.gpus == node.gpus and again.driver == node.driver


@pytest.mark.parametrize("text", ["<not xml", "<other/>", ""])
def test_other_text_is_a_one_line_input_error(text: str) -> None:
    with pytest.raises(InputError, match="not nvidia-smi XML"):
        parse_nvidia_smi_xml(text)


def test_an_h200_from_this_projects_gpu_run_reads_a_busy_gpu_and_its_two_ranks() -> None:
    """data/nvidia-smi-h200-v13-busy.xml: captured by scripts/gpu_run.sh on an H200 (driver
    580.159.04) while rank 1 of a 2-rank job spun a kernel (serial and UUID zeroed)."""
    node = parse_nvidia_smi_xml((DATA / "nvidia-smi-h200-v13-busy.xml").read_text())
    assert node.driver == "580.159.04"
    [gpu] = node.gpus
    assert gpu.name == "NVIDIA H200" and gpu.util_gpu == 100 and gpu.memory_total_mib == 143771
    assert [p.pid for p in gpu.processes] == [561, 562]
    assert {p.name for p in gpu.processes} == {"/opt/torch/.venv/bin/python"}


def test_row_remapping_is_read_where_the_gpu_has_it_and_unknown_where_not() -> None:
    # the H200 (row remapping: 0 rows, nothing pending) and the A100 capture whose driver says N/A
    [h200] = parse_nvidia_smi_xml((DATA / "nvidia-smi-h200-v13-busy.xml").read_text()).gpus
    assert (h200.remapped_rows_uncorrectable, h200.remapped_rows_correctable) == (0, 0)
    assert (h200.remap_pending, h200.remap_failure) == (False, False)
    [a100] = parse_nvidia_smi_xml((DATA / "nvidia-smi-a100-sxm4-v12.xml").read_text()).gpus
    assert (a100.remapped_rows_uncorrectable, a100.remap_pending, a100.remap_failure) == (None, None, None)


def test_a_pending_and_a_failed_row_remapping_are_read_and_round_trip() -> None:
    # the H200 capture with its remapped_rows block as a GPU with a bad row reports it
    text = (DATA / "nvidia-smi-h200-v13-busy.xml").read_text()
    text = text.replace("<remapped_row_unc>0</remapped_row_unc>", "<remapped_row_unc>2</remapped_row_unc>")
    text = text.replace("<remapped_row_pending>No</remapped_row_pending>",
                        "<remapped_row_pending>Yes</remapped_row_pending>")
    text = text.replace("<remapped_row_failure>No</remapped_row_failure>",
                        "<remapped_row_failure>Yes</remapped_row_failure>")
    node = parse_nvidia_smi_xml(text)
    [gpu] = node.gpus
    assert (gpu.remapped_rows_uncorrectable, gpu.remap_pending, gpu.remap_failure) == (2, True, True)
    assert parse_gpus_json(node.to_json(), "gpus.json").gpus == node.gpus
