"""Split operators (DESIGN.md "Split operators", docs/split.md): data and operator parallelism
chosen with the placement.

One job per module: `semantics` (per op kind: splittable dimensions, what each task needs, how
its output lies), `configs` (the configurations a unit may take and every threshold, in
`SplitOptions`), `costs` (task times, redistribution pieces, ring all-reduces, memory), `plan`
(the split problem, plans, re-timing, baselines, result entries), `moves` (configuration moves),
`cpsat` (the exact model), `check` (validator and replay of split results), `report` (the trace
and Gantt view) and `pipeline` (`place` with `split=True`).
"""
from placer.split.configs import SplitOptions
from placer.split.pipeline import place_split

__all__ = ["SplitOptions", "place_split"]
