"""Which global ranks a torchrun agent's local ranks were, when the input tells (pure, never raises).

A torchrun agent names its workers by *local* rank ("failed (exitcode: 1) local_rank: 1 (pid: 4242)"). The
global rank is ``node_rank * nproc_per_node + local_rank`` when every node runs the same number of workers,
and the input may say it in these words:
- the agent's rendezvous result (INFO level): ``group_rank=1``, ``local_ranks=[0, 1]``, ``global_ranks=[2, 3]``
  (the map itself), ``group_world_size=2`` (the number of nodes);
- torchrun's command line or its launch configuration: ``--node_rank=1`` / ``--node-rank 1``, ``--nproc_per_node=2``
  / ``nproc_per_node : 2``, ``--nnodes=2`` / ``min_nodes : 2``.
A reporter's own words may give the node count instead: "on 4 nodes", "across two machines", and in Chinese
"节点总数：4" (total nodes: 4), "4个节点", "两台机器", "2机16卡" (2 machines, 16 GPUs), "双机" (two machines).
An input that shows several nodes and no map leaves the global rank unknown: the caller says "local rank N on
host H" then.

DeepSpeed's launcher prints the whole map, per host: ``global_rank_mapping=defaultdict(<class 'list'>, {'node1':
[0, 1], 'node2': [2, 3]})`` (:func:`deepspeed_rank_map`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triage.lazy_regex import lazy_regex


@dataclass(frozen=True)
class NodeRanks:
    """The global ranks of one node's local ranks, where the input says them."""
    local_to_global: tuple[tuple[int, int], ...] = ()   # (local rank, global rank) of the one node the input shows
    nodes: int | None = None                            # how many nodes the job had, when told

    def global_rank(self, local: int) -> int | None:
        return dict(self.local_to_global).get(local)


_LIST = r"\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]"
_LOCAL_RANKS = lazy_regex(r"\blocal_ranks\s*=\s*" + _LIST)
_GLOBAL_RANKS = lazy_regex(r"\bglobal_ranks\s*=\s*" + _LIST)
_GROUP_RANK = lazy_regex(r"\bgroup_rank\s*=\s*(\d+)")
_GROUP_WORLD = lazy_regex(r"\bgroup_world_size\s*=\s*(\d+)")
_NODE_RANK = lazy_regex(r"--node[_-]rank(?:=|\s+)(\d+)\b|\bNODE_RANK=(\d+)\b")
_NPROC = lazy_regex(r"--nproc[_-]per[_-]node(?:=|\s+)(\d+)\b|\bnproc_per_node\s*:\s*(\d+)\b")
_NNODES = lazy_regex(r"--nnodes(?:=|\s+)(\d+)(?::(\d+))?\b|\bmax_nodes\s*:\s*(\d+)\b")
# the node count in the reporter's own words (not "with 4 nodes": torch's store-based barrier counts its workers so)
_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "eight": 8, "两": 2, "二": 2, "双": 2, "三": 3, "四": 4,
          "八": 8}
_PROSE_NODES = lazy_regex(
    r"\b(?:on|across|using|over)\s+(?P<en>\d+|two|three|four|five|six|eight)\s+(?:nodes|machines|servers)\b|"
    r"(?:节点|机器)总?数量?\s*[：:=为]\s*(?P<zh_n>\d+)|"
    r"(?P<zh_c>\d+|两|二|三|四|八)\s*(?:个|台)\s*(?:节点|机器|服务器)|"
    r"(?P<zh_m>\d+|两|双|二|三|四|八)\s*机\s*(?:\d+|八)\s*卡|(?P<zh_d>双)机(?:训练|多卡)", re.IGNORECASE)


def prose_nodes(text: str) -> int | None:
    """The node count the reporter's words give, when every such phrase gives the same one."""
    values = set()
    for match in _PROSE_NODES.finditer(text):
        word = next(g for g in match.groups() if g is not None)
        values.add(int(word) if word.isdigit() else _WORDS[word.lower()])
    return values.pop() if len(values) == 1 else None


def _ints(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text)]


def _one(pattern: re.Pattern[str], text: str) -> int | None:
    """The value the input gives, when it gives exactly one (several agents' values name no one node)."""
    values = {next(g for g in m.groups() if g is not None) for m in pattern.finditer(text)}
    return int(values.pop()) if len(values) == 1 else None


def nproc_per_node(text: str) -> int | None:
    """The processes per node the input gives (torchrun's --nproc_per_node), when it gives one value."""
    return _one(_NPROC, text) if "nproc" in text else None


_ABOVE_ZERO = lazy_regex(r"--node[_-]rank(?:=|\s+)0*[1-9]\d*\b|\bNODE_RANK=0*[1-9]\d*\b|\bgroup_rank\s*=\s*0*[1-9]\d*")


def other_node_in_sight(text: str) -> bool:
    """Whether the input names a node other than the first: a node rank above zero (``--node_rank=1``, ``NODE_RANK=1``,
    the rendezvous result's ``group_rank=1``)."""
    return ("rank" in text or "RANK" in text) and _ABOVE_ZERO.search(text) is not None


def node_ranks(text: str) -> NodeRanks:
    """What the input says about the node whose agent's records it holds. Never raises."""
    if "rank" not in text and "nproc" not in text and "nnodes" not in text and "nodes" not in text:
        return NodeRanks()
    nodes = _one(_GROUP_WORLD, text)
    if nodes is None and (match := _NNODES.search(text)) is not None:
        nodes = int(match.group(2) or match.group(1) or match.group(3))
    if nodes is None:
        nodes = prose_nodes(text)
    locals_ = {m.group(1) for m in _LOCAL_RANKS.finditer(text)}
    globals_ = {m.group(1) for m in _GLOBAL_RANKS.finditer(text)}
    if len(locals_) == 1 and len(globals_) == 1:
        local, glob = _ints(locals_.pop()), _ints(globals_.pop())
        if len(local) == len(glob):
            return NodeRanks(tuple(zip(local, glob)), nodes)
    node = _one(_GROUP_RANK, text)
    node = _one(_NODE_RANK, text) if node is None else node
    nproc = _one(_NPROC, text)
    if node is not None and nproc:
        return NodeRanks(tuple((i, node * nproc + i) for i in range(nproc)), nodes)
    return NodeRanks((), nodes)


_DS_MAPPING = lazy_regex(r"global_rank_mapping=defaultdict\(<class 'list'>, \{(?P<body>[^{}\n]{0,20000})\}\)")
_DS_HOST = lazy_regex(r"'(?P<host>[^'\n]{1,255})': \[(?P<ranks>[\d, ]*)\]")


def deepspeed_rank_map(text: str) -> dict[str, tuple[int, ...]]:
    """host -> its global ranks, in local-rank order, from DeepSpeed's launcher ("global_rank_mapping=..."); {} when
    the input does not hold it or holds two maps that differ (two launches). Never raises."""
    if "global_rank_mapping=" not in text:
        return {}
    maps = {match.group("body") for match in _DS_MAPPING.finditer(text)}
    if len(maps) != 1:
        return {}
    return {m.group("host"): tuple(_ints(m.group("ranks"))) for m in _DS_HOST.finditer(maps.pop())}
