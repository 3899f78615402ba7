"""Normalise op, dtype and reduction-op names from every source to torch names."""

from __future__ import annotations

from triage.lazy_regex import lazy_regex

# ncclDataType_t codes (formats.md); 9 from 2.10, 10/11 from 2.24.
_NCCL_DTYPE_CODES: dict[int, str] = {
    0: "int8", 1: "uint8", 2: "int32", 3: "uint32", 4: "int64", 5: "uint64",
    6: "float16", 7: "float32", 8: "float64", 9: "bfloat16",
    10: "float8_e4m3fn", 11: "float8_e5m2",
}

_DTYPE_ALIASES: dict[str, str] = {
    # Flight Recorder / c10 ScalarType names
    "float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
    "long": "int64", "int": "int32", "short": "int16", "char": "int8", "byte": "uint8",
    "bool": "bool", "complexfloat": "complex64", "complexdouble": "complex128",
    "complexhalf": "complex32", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
    "float8_e4m3fnuz": "float8_e4m3fnuz", "float8_e5m2fnuz": "float8_e5m2fnuz",
    # NCCL names (ncclInt8, ncclFloat, ...), lowercased without the prefix
    "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64",
    "float16": "float16", "float32": "float32", "float64": "float64",
    "float8e4m3": "float8_e4m3fn", "float8e5m2": "float8_e5m2",
    # torch aliases
    "bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64",
    "int16": "int16", "complex64": "complex64", "complex128": "complex128",
    "cfloat": "complex64", "cdouble": "complex128",
}


def torch_dtype(x: str | int) -> str:
    """The torch name of a dtype given as an FR name, an NCCL code or name, or a torch name.

    >>> torch_dtype("Float"), torch_dtype(9), torch_dtype("ncclBfloat16"), torch_dtype("torch.int64")
    ('float32', 'bfloat16', 'bfloat16', 'int64')

    Unknown values come back lowercased as they were.
    """
    if isinstance(x, int) and not isinstance(x, bool):
        return _NCCL_DTYPE_CODES.get(x, str(x))
    text = str(x).strip()
    if text.isascii() and text.isdigit():
        return _NCCL_DTYPE_CODES.get(int(text), text)
    low = text.lower()
    low = low.removeprefix("torch.")
    if low.startswith("nccl") and len(low) > 4:
        low = low[4:]
    return _DTYPE_ALIASES.get(low, low)


# Keys are lowercased with "_" and spaces removed.
_OP_ALIASES: dict[str, str] = {
    "allreduce": "all_reduce", "allreducecoalesced": "all_reduce",
    "allgather": "all_gather", "allgatherbase": "all_gather", "allgatherintotensor": "all_gather",
    "allgatherintotensorcoalesced": "all_gather", "allgathercoalesced": "all_gather",
    "allgatherv": "all_gather",
    "reducescatter": "reduce_scatter", "reducescatterbase": "reduce_scatter",
    "reducescattertensor": "reduce_scatter", "reducescattertensorcoalesced": "reduce_scatter",
    "broadcast": "broadcast", "bcast": "broadcast", "reduce": "reduce",
    "send": "send", "recv": "recv", "receive": "recv", "recvanysource": "recv",
    "barrier": "barrier", "alltoall": "all_to_all", "alltoallbase": "all_to_all",
    "alltoallv": "all_to_all", "alltoallsingle": "all_to_all",
    "gather": "gather", "scatter": "scatter", "coalesced": "coalesced",
    "allreducebarrier": "barrier", "sendrecv": "send_recv",
}

_SPLIT = lazy_regex(r"[_\s-]+")


def torch_op(x: str) -> str:
    """The torch name of a collective from FR ("gloo:all_reduce", "nccl:_allgather_base"),
    NCCL ("AllReduce", "ReduceScatter", "Send") or the watchdog ("_ALLGATHER_BASE", "COALESCED").

    Unknown names come back lowercased, stripped of a "backend:" prefix.
    """
    text = str(x).strip()
    if ":" in text:
        text = text.split(":", 1)[1]
    text = text.split(" ", 1)[0] if text else text  # "nccl:send 0->1": the peer is not part of the name
    key = _SPLIT.sub("", text.lower())
    if key in _OP_ALIASES:
        return _OP_ALIASES[key]
    return text.lower().strip("_") or text


_REDOPS: dict[int, str] = {0: "sum", 1: "prod", 2: "max", 3: "min", 4: "avg"}
_REDOP_ALIASES: dict[str, str] = {
    "sum": "sum", "prod": "prod", "product": "prod", "max": "max", "min": "min",
    "avg": "avg", "average": "avg", "premulsum": "premul_sum", "premul_sum": "premul_sum",
    "band": "band", "bor": "bor", "bxor": "bxor",
}


def redop_name(x: str | int) -> str:
    """The name of an NCCL ncclRedOp_t code (0 sum .. 4 avg) or a reduction name.

    Codes from ncclRedOpCreatePreMulSum (5 and up) are user-defined: "premul_sum".
    """
    if isinstance(x, int) and not isinstance(x, bool):
        return _REDOPS.get(x, "premul_sum" if x >= 5 else str(x))
    text = str(x).strip()
    if text.isascii() and text.isdigit():
        return redop_name(int(text))
    low = text.lower()
    low = low.removeprefix("nccl")
    low = low.removeprefix("redop.")
    return _REDOP_ALIASES.get(low, low)
