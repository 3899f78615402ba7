"""Process-group membership, rebuilt when the dumps do not say (gloo in torch 2.13)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from triage.model.evidence import RankEvidence

DEFAULT_PG = "0"


@dataclass(frozen=True)
class Group:
    """A process group's members, as recorded or rebuilt."""
    pg: str
    name: str | None
    members: tuple[int, ...]               # global ranks, sorted
    rebuilt: bool = False                  # membership inferred from who recorded entries in it

    @property
    def label(self) -> str:
        return f"pg {self.pg} ({self.name})" if self.name and self.name != "undefined" else f"pg {self.pg}"


def pg_sort_key(pg: str) -> tuple[int, int, str]:
    return (0, int(pg), "") if pg.isascii() and pg.isdigit() else (1, 0, pg)


def resolve_groups(ranks: tuple[RankEvidence, ...], world_size: int | None) -> tuple[Group, ...]:
    """Every process group seen in any rank's trace or config, with its global members.

    Membership comes from pg_config (the most common non-empty answer across ranks), else the
    default group is every rank, else the ranks that recorded an entry in that group.
    """
    by_identity: dict[str, Counter[int]] = {}   # pg -> id(member list) -> ranks that gave it
    sorted_members: dict[int, tuple[int, ...]] = {}
    names: dict[str, Counter[str]] = {}
    recorded: dict[str, set[int]] = {}
    for item in ranks:
        for group in item.groups:
            if group.pg == "":
                continue
            if group.ranks:
                # The loader shares one member tuple between ranks: sort and hash it once, not once
                # per rank (65,536 ranks of the default group would be 65,536 x 65,536 steps).
                key = id(group.ranks)
                if key not in sorted_members:
                    sorted_members[key] = tuple(sorted(group.ranks))
                by_identity.setdefault(group.pg, Counter())[key] += 1
            if group.name and group.name != group.pg:
                names.setdefault(group.pg, Counter())[group.name] += 1
        for pg, pg_name in {(c.pg, c.pg_name) for c in item.collectives}:
            recorded.setdefault(pg, set()).add(item.rank)
            if pg_name:
                names.setdefault(pg, Counter())[pg_name] += 1
    configured: dict[str, Counter[tuple[int, ...]]] = {}
    for pg, counts in by_identity.items():
        for key, count in counts.items():
            configured.setdefault(pg, Counter())[sorted_members[key]] += count
    everyone = _everyone(ranks, world_size)
    groups: list[Group] = []
    for pg in sorted(set(configured) | set(recorded), key=pg_sort_key):
        name = _most_common(names.get(pg))
        if pg in configured:
            members = _most_common_tuple(configured[pg])
            groups.append(Group(pg, name, members))
        elif pg == DEFAULT_PG or name == "default_pg":
            groups.append(Group(pg, name or "default_pg", everyone, rebuilt=True))
        else:
            groups.append(Group(pg, name, tuple(sorted(recorded.get(pg, ()))), rebuilt=True))
    return tuple(groups)


def _everyone(ranks: tuple[RankEvidence, ...], world_size: int | None) -> tuple[int, ...]:
    seen = {item.rank for item in ranks}
    if world_size:
        seen.update(range(world_size))
    return tuple(sorted(seen))


def _most_common(counter: Counter[str] | None) -> str | None:
    if not counter:
        return None
    return min(counter.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def _most_common_tuple(counter: Counter[tuple[int, ...]]) -> tuple[int, ...]:
    return min(counter.items(), key=lambda kv: (-kv[1], kv[0]))[0]
