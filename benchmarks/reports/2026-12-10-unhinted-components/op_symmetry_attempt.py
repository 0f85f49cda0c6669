# Not adopted (see notes.md): interchangeable pieces for the decomposition components; with
# op_symmetry_attempt_decompose.diff applied to placer/decompose.py (the module as placer/op_symmetry.py).
"""Interchangeable pieces of a graph: identical branches that any solution may swap.

A transformer layer of per-head ops runs eight copies of one attention head between the
same two ops; an answer with head 3 on gpu1 and head 5 on gpu4 is as good as the one with
them swapped. CP-SAT does not know that, and on a machine whose devices are not
interchangeable (a DGX-1) device symmetry breaking cannot remove it either: proofs then
walk through every order of the heads.

A *piece* is a connected part of a model's ops once its boundary ops (a component's entry
and exit cuts) are taken out, joined by edges and by colocation groups. Two pieces are
interchangeable when listing each one's ops in index order matches them op by op: the same
durations, memory and allowed devices, the same groups and edges between matched ops, and
the same edges to the same ops outside the piece. Then exchanging the two pieces' devices
and times maps every solution to one of equal makespan, so requiring the pieces of a class
to start in order (their first ops' starts non-decreasing) keeps an optimal solution.

That order is unchanged by relabelling devices, so it combines with device symmetry
breaking: sort the pieces of any solution by start, then relabel its devices.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from placer.model import Problem

__all__ = ["interchangeable_pieces"]


def interchangeable_pieces(problem: Problem, ops: Collection[int], boundary: Collection[int]) -> list[list[int]]:
    """Classes of interchangeable pieces among `ops` (a model's ops; `boundary` of them are
    in no piece), each class as the first op of each of its pieces in index order.

    Only edges with both ends in `ops` count (the model's edges). Pieces are joined by
    edges, and by a group whose ops lie in exactly two of them (a layer's forward and
    backward parts where only their group joins them); a group spread over more (the
    query projection that every head of a layer shares) must then hold the matched ops of
    every piece of a class, and stays put when they are swapped."""
    inside = set(ops)
    free = sorted(inside.difference(boundary))
    parent = {k: k for k in free}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(a: int, b: int) -> None:
        parent[find(b)] = find(a)

    for k in free:
        for i in problem.succs[k]:
            if problem.edges[i].dst in parent:
                join(k, problem.edges[i].dst)
    for g in {problem.group[k] for k in free}:
        members = [k for k in problem.groups[g] if k in parent]
        if len({find(k) for k in members}) == 2:
            for k in members[1:]:
                join(members[0], k)
    pieces: dict[int, list[int]] = defaultdict(list)
    for k in free:
        pieces[find(k)].append(k)
    classes: dict[tuple, list[int]] = defaultdict(list)
    for piece in pieces.values():
        classes[_signature(problem, piece, inside)].append(piece[0])
    return [sorted(firsts) for firsts in classes.values() if len(firsts) > 1]


def _signature(problem: Problem, piece: list[int], inside: set[int]) -> tuple:
    """What must match for two pieces to be swapped op by op (ops in index order): per op its
    durations, memory, allowed devices, group (by its first position in the piece when the
    piece holds all of its ops among the model's, else by its index), and its edges (to a
    position in the piece, else to an op outside every piece: no edge joins two pieces)."""
    position = {k: i for i, k in enumerate(piece)}
    group_key: dict[int, tuple[str, int]] = {}
    keys = []
    for k in piece:
        g = problem.group[k]
        if g not in group_key:
            own = all(other in position for other in problem.groups[g] if other in inside)
            group_key[g] = ("own", position[k]) if own else ("shared", g)
        ins = sorted((position.get(e.src, -1), -1 if e.src in position else e.src, e.size_bytes)
                     for e in (problem.edges[i] for i in problem.preds[k]) if e.src in inside)
        outs = sorted((position.get(e.dst, -1), -1 if e.dst in position else e.dst, e.size_bytes)
                      for e in (problem.edges[i] for i in problem.succs[k]) if e.dst in inside)
        keys.append((tuple(problem.time_ms[k]), problem.memory_bytes[k], tuple(problem.allowed[g]), group_key[g],
                     problem.group_memory_bytes(g), tuple(ins), tuple(outs)))
    return tuple(keys)
