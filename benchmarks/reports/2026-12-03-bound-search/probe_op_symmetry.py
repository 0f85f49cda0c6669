"""Interchangeable branches: parts of the graph that a relabelling of ops swaps.

Per-head attention repeats one branch per head (a head's scores, softmax and context, and
their gradients, between the layer's shared projections); a NASNet cell pools one tensor
twice into the same add. Swapping two such branches wholesale (every op, tensor and group of
one with its counterpart in the other) maps every placement and schedule to one exactly as
good, so a CP-SAT model with k interchangeable branches holds every answer k! times over and
its proof has to refute each copy. Ordering the branches by the start of their first op
keeps at least one copy of every answer (sort any answer's branches by that start) and
removes the rest.

The branches are found by colour refinement (ops alike in duration, memory, pins, depth and
neighbourhood get one colour; ops with a colour of their own are fixed points) and every
swap is then checked against the problem itself: the ordering is added only for swaps that
map ops, tensors and groups onto ops, tensors and groups with the same data.

The ordering is on start times only: relabelling interchangeable devices (the device
symmetry breaking of placer.formulations.cpsat_model) leaves start times as they are, so
both orderings hold together in some copy of every answer.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from placer.model import Problem

__all__ = ["BranchClass", "interchangeable_branches", "ordered_pairs", "sorted_by_start"]

_MAX_ROUNDS = 40   # colour refinement rounds (depth and height in the first colour make few needed)
_MAX_SPLITS = 10   # rounds of ops given a colour of their own to split tied branches


@dataclass(frozen=True)
class BranchClass:
    """Branches that any permutation may swap: `branches[i][j]` is the counterpart of
    `branches[0][j]`; `branches[i][0]` is branch i's key op (the first op of branch 0 and its
    counterparts); branches are listed by their key op's index."""

    branches: tuple[tuple[int, ...], ...]

    def keys(self) -> list[int]:
        return [b[0] for b in self.branches]


def interchangeable_branches(problem: Problem) -> list[BranchClass]:
    """Every class of at least two interchangeable branches of `problem` (disjoint op sets).

    Where a candidate branch holds two ops of one colour (the query and key projections of a
    head are alike: swapping the two whole projections is a symmetry too), its first such op
    is given a colour of its own and the colours refined again (`_MAX_SPLITS` rounds)."""
    colour = _refined_colours(problem, _first_colours(problem))
    parts, tied = _candidate_branches(problem, colour)
    for _ in range(_MAX_SPLITS):
        if not tied:
            break
        for k in tied:
            colour[k] = max(colour) + 1
        colour = _refined_colours(problem, colour)
        parts, tied = _candidate_branches(problem, colour)
    alike: dict[tuple[int, ...], list[list[int]]] = defaultdict(list)
    for ops in parts:
        colours = [colour[k] for k in ops]
        if len(set(colours)) == len(colours):  # each colour once: an op's counterpart is unique
            alike[tuple(sorted(colours))].append(ops)
    classes = []
    for members in alike.values():
        if len(members) < 2:
            continue
        members.sort()
        first = members[0]
        position = {colour[k]: j for j, k in enumerate(first)}
        branches = [first]
        for other in members[1:]:
            aligned = [0] * len(first)
            for k in other:
                aligned[position[colour[k]]] = k
            if _swap_is_automorphism(problem, first, aligned):
                branches.append(aligned)
        if len(branches) > 1:
            branches.sort(key=lambda b: b[0])
            classes.append(BranchClass(tuple(tuple(b) for b in branches)))
    return classes


def _candidate_branches(problem: Problem, colour: list[int]) -> tuple[list[list[int]], list[int]]:
    """The connected parts of the ops that share their colour with another op (joined by
    tensors, and by groups that another group shares a colour with), each part's ops sorted;
    and per part whose ops repeat a colour, the first op of such a colour."""
    group_colour = _group_colours(problem, colour)
    count = Counter(colour)
    group_count = Counter(group_colour)
    free = [count[colour[k]] > 1 for k in range(problem.n_ops)]
    parent = list(range(problem.n_ops))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for e in problem.edges:
        if free[e.src] and free[e.dst]:
            parent[find(e.src)] = find(e.dst)
    for g, members in enumerate(problem.groups):
        # a group that a swap maps onto another moves its ops together (where one of them is a
        # fixed point no swap moves the group: `_swap_is_automorphism` rejects it)
        if group_count[group_colour[g]] > 1 and all(free[k] for k in members):
            for k in members[1:]:
                parent[find(members[0])] = find(k)
    parts: dict[int, list[int]] = defaultdict(list)
    for k in range(problem.n_ops):
        if free[k]:
            parts[find(k)].append(k)
    tied = []
    for ops in parts.values():
        seen: set[int] = set()
        for k in ops:
            if colour[k] in seen:
                tied.append(min(x for x in ops if colour[x] == colour[k]))
                break
            seen.add(colour[k])
    return list(parts.values()), tied


def ordered_pairs(classes: Iterable[BranchClass], ops: set[int]) -> list[tuple[int, int]]:
    """(a, b): key ops whose starts may be ordered a <= b in a model over `ops` (the branches
    of a class that lie wholly inside `ops`; swapping them fixes everything else)."""
    pairs = []
    for cls in classes:
        keys = [b[0] for b in cls.branches if all(k in ops for k in b)]
        pairs += list(zip(keys, keys[1:]))
    return pairs


def sorted_by_start(classes: Iterable[BranchClass], start: dict[int, float]) -> dict[int, int]:
    """An op relabelling (op -> the op whose place and times it takes) that puts the branches of
    an answer with starts `start` in key order: with it a hint obeys `ordered_pairs`. Only
    branches whose ops all have a start are moved; ops left out map to themselves."""
    relabel: dict[int, int] = {}
    for cls in classes:
        inside = [b for b in cls.branches if all(k in start for k in b)]
        by_start = sorted(inside, key=lambda b: (start[b[0]], b[0]))
        for slot, taken in zip(inside, by_start):
            for k, src in zip(slot, taken):
                relabel[k] = src
    return relabel


def _first_colours(problem: Problem) -> list[int]:
    """Ops alike in what the model sees of them alone: durations, memory, pins, group size,
    and their depth and height in the graph (which any automorphism keeps)."""
    n = problem.n_ops
    depth, height = [0] * n, [0] * n
    for k in range(n):  # ops are in topological order
        for i in problem.preds[k]:
            depth[k] = max(depth[k], depth[problem.edges[i].src] + 1)
    for k in reversed(range(n)):
        for i in problem.succs[k]:
            height[k] = max(height[k], height[problem.edges[i].dst] + 1)
    start = [(tuple(problem.time_ms[k]), problem.memory_bytes[k], tuple(problem.allowed[problem.group[k]]),
              len(problem.groups[problem.group[k]]), depth[k], height[k]) for k in range(n)]
    return _renumber(start)


def _refined_colours(problem: Problem, colour: list[int]) -> list[int]:
    """Colour refinement from `colour`: ops that some automorphism fixing the colours maps onto
    each other end with one colour (the converse is checked by `_swap_is_automorphism`)."""
    n = problem.n_ops
    for _ in range(_MAX_ROUNDS):
        group_colour = _group_colours(problem, colour)
        signature = [(colour[k], group_colour[problem.group[k]],
                      tuple(sorted((problem.edges[i].size_bytes, colour[problem.edges[i].src]) for i in problem.preds[k])),
                      tuple(sorted((problem.edges[i].size_bytes, colour[problem.edges[i].dst]) for i in problem.succs[k])))
                     for k in range(n)]
        refined = _renumber(signature)
        if max(refined, default=0) == max(_renumber(colour), default=0):
            return refined
        colour = refined
    return colour


def _group_colours(problem: Problem, colour: list[int]) -> list[int]:
    return _renumber([tuple(sorted(colour[k] for k in members)) for members in problem.groups])


def _renumber(signatures: list) -> list[int]:
    ids: dict = {}
    return [ids.setdefault(s, len(ids)) for s in signatures]


def _swap_is_automorphism(problem: Problem, a: list[int], b: list[int]) -> bool:
    """Whether swapping branches a and b (a[j] <-> b[j]) maps the problem onto itself: the same
    durations, memory and pins, groups onto groups and tensors onto tensors of the same size."""
    swap = dict(zip(a, b)) | dict(zip(b, a))
    if len(swap) != 2 * len(a):
        return False
    for x, y in zip(a, b):
        if (problem.time_ms[x] != problem.time_ms[y] or problem.memory_bytes[x] != problem.memory_bytes[y]
                or problem.allowed[problem.group[x]] != problem.allowed[problem.group[y]]):
            return False
    for g in {problem.group[k] for k in swap}:
        image = sorted(swap.get(k, k) for k in problem.groups[g])
        if image != sorted(problem.groups[problem.group[image[0]]]):
            return False
    touching = {i for k in swap for i in problem.preds[k] + problem.succs[k]}
    edges = Counter((problem.edges[i].src, problem.edges[i].dst, problem.edges[i].size_bytes) for i in touching)
    mapped = Counter((swap.get(s, s), swap.get(d, d), size) for s, d, size in edges.elements())
    return edges == mapped
