from __future__ import annotations

import pytest

from triage.parsing.names import redop_name, torch_dtype, torch_op


@pytest.mark.parametrize(("raw", "expected"), [
    ("Float", "float32"), ("BFloat16", "bfloat16"), ("Long", "int64"), ("Half", "float16"),
    ("Double", "float64"), ("Int", "int32"), ("Byte", "uint8"), ("Char", "int8"), ("Bool", "bool"),
    (0, "int8"), (1, "uint8"), (2, "int32"), (3, "uint32"), (4, "int64"), (5, "uint64"), (6, "float16"),
    (7, "float32"), (8, "float64"), (9, "bfloat16"), (10, "float8_e4m3fn"), (11, "float8_e5m2"),
    ("7", "float32"), ("ncclFloat", "float32"), ("ncclBfloat16", "bfloat16"), ("ncclHalf", "float16"),
    ("ncclInt64", "int64"), ("ncclFloat8e4m3", "float8_e4m3fn"),
    ("torch.float32", "float32"), ("torch.bfloat16", "bfloat16"), ("float32", "float32"),
    ("torch.int64", "int64"), ("bf16", "bfloat16"),
    ("SomethingNew", "somethingnew"), (42, "42"),
])
def test_torch_dtype(raw: str | int, expected: str) -> None:
    assert torch_dtype(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("gloo:all_reduce", "all_reduce"), ("nccl:all_reduce", "all_reduce"), ("nccl:_allgather_base", "all_gather"),
    ("nccl:all_gather_into_tensor_coalesced", "all_gather"), ("nccl:_reduce_scatter_base", "reduce_scatter"),
    ("nccl:reduce_scatter_tensor_coalesced", "reduce_scatter"), ("gloo:broadcast", "broadcast"),
    ("gloo:barrier", "barrier"), ("nccl:all_to_all", "all_to_all"), ("gloo:alltoall_base", "all_to_all"),
    ("nccl:send", "send"), ("nccl:recv", "recv"), ("gloo:gather", "gather"), ("gloo:scatter", "scatter"),
    ("AllReduce", "all_reduce"), ("AllGather", "all_gather"), ("ReduceScatter", "reduce_scatter"),
    ("Broadcast", "broadcast"), ("Reduce", "reduce"), ("Send", "send"), ("Recv", "recv"),
    ("AllToAll", "all_to_all"), ("ALLREDUCE", "all_reduce"), ("_ALLGATHER_BASE", "all_gather"),
    ("_REDUCE_SCATTER_BASE", "reduce_scatter"), ("COALESCED", "coalesced"), ("GATHER", "gather"),
    ("SEND", "send"), ("RECV", "recv"), ("BROADCAST", "broadcast"), ("BARRIER", "barrier"),
    ("ALLTOALL_BASE", "all_to_all"), ("nccl:coalesced", "coalesced"), ("Mystery_Op", "mystery_op"),
])
def test_torch_op(raw: str, expected: str) -> None:
    assert torch_op(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    (0, "sum"), (1, "prod"), (2, "max"), (3, "min"), (4, "avg"), ("0", "sum"), ("4", "avg"), (7, "premul_sum"),
    ("ncclSum", "sum"), ("MAX", "max"), ("RedOp.AVG", "avg"), ("weird", "weird"),
])
def test_redop_name(raw: str | int, expected: str) -> None:
    assert redop_name(raw) == expected
