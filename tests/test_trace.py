"""The Chrome trace (process and thread names, op args, flow events producer -> transfer ->
consumer) and the Gantt chart (legend, backward ops hatched)."""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from placer.schema import parse_graph, parse_hardware
from placer.simulator import simulate
from placer.trace import DEVICES_PID, LINKS_PID, direction

# a training step on a chain g0 - g1 - g2: x (g0) -> y (g2) crosses two links
GRAPH = parse_graph({
    "name": "step",
    "ops": [{"id": "x", "time_ms": 1.0, "kind": "matmul", "group": "l1", "memory_bytes": 100},
            {"id": "y", "time_ms": 2.0, "kind": "matmul", "group": "l2"},
            {"id": "y.bwd", "time_ms": 3.0, "kind": "matmul_grad", "group": "l2"},
            {"id": "x_grad", "time_ms": 2.0, "kind": "conv2d_backward", "group": "l1"},
            {"id": "x.update", "time_ms": 0.5, "kind": "sgd_momentum", "group": "l1"}],
    "edges": [{"src": "x", "dst": "y", "bytes": 1_000_000}, {"src": "y", "dst": "y.bwd", "bytes": 0},
              {"src": "y.bwd", "dst": "x_grad", "bytes": 2_000_000}, {"src": "x_grad", "dst": "x.update", "bytes": 0}],
})
CHAIN = parse_hardware({
    "devices": [{"id": "g0"}, {"id": "g1"}, {"id": "g2"}],
    "links": [{"a": "g0", "b": "g1", "bandwidth_gb_per_s": 1.0}, {"a": "g1", "b": "g2", "bandwidth_gb_per_s": 1.0}],
})
PLACEMENT = {"x": "g0", "y": "g2", "y.bwd": "g2", "x_grad": "g0", "x.update": "g0"}


@pytest.fixture(scope="module")
def report():
    return simulate(GRAPH, CHAIN, PLACEMENT)


def test_directions_from_ids_and_kinds() -> None:
    assert [direction(o.id, o.kind) for o in GRAPH.ops] == ["forward", "forward", "backward", "backward", "update"]
    assert direction("layer3.backward") == "backward" and direction("fc", "adam") == "update"


def test_trace_names_processes_and_threads(report) -> None:
    trace = json.loads(json.dumps(report.to_chrome_trace(GRAPH)))  # plain JSON
    meta = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    processes = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    assert processes == {DEVICES_PID: "devices", LINKS_PID: "links"}
    threads = {(e["pid"], e["args"]["name"]) for e in meta if e["name"] == "thread_name"}
    assert {(DEVICES_PID, d) for d in ("g0", "g1", "g2")} <= threads
    assert {(LINKS_PID, link) for link in ("g0->g1", "g1->g2", "g2->g1", "g1->g0")} == \
        {t for t in threads if t[0] == LINKS_PID}
    # every slice sits on a named thread
    named = {(e["pid"], e["tid"]) for e in meta if e["name"] == "thread_name"}
    assert all((e["pid"], e["tid"]) in named for e in trace["traceEvents"] if e["ph"] == "X")


def test_ops_and_transfers_carry_args(report) -> None:
    events = report.to_chrome_trace(GRAPH)["traceEvents"]
    ops = {e["name"]: e for e in events if e["ph"] == "X" and e["pid"] == DEVICES_PID}
    assert set(ops) == {o.id for o in GRAPH.ops}
    assert ops["x"]["args"] == {"device": "g0", "direction": "forward", "bytes_in": 0, "bytes_out": 1_000_000,
                                "kind": "matmul", "group": "l1", "memory_bytes": 100}
    assert ops["y.bwd"]["args"]["direction"] == "backward" and ops["y.bwd"]["args"]["kind"] == "matmul_grad"
    assert ops["x_grad"]["args"]["bytes_in"] == 2_000_000
    assert ops["x.update"]["args"]["direction"] == "update"
    hops = [e for e in events if e["ph"] == "X" and e["pid"] == LINKS_PID]
    assert len(hops) == 4  # two tensors, two hops each
    assert all(e["args"]["bytes"] in (1_000_000, 2_000_000) and len(e["args"]["route"]) == 3 for e in hops)
    # without the graph the trace still tells directions apart by id
    bare = {e["name"]: e for e in report.to_chrome_trace()["traceEvents"] if e["ph"] == "X" and e["pid"] == 1}
    assert bare["y.bwd"]["args"]["direction"] == "backward" and "kind" not in bare["y.bwd"]["args"]


def test_flow_events_link_producer_hops_and_consumer(report) -> None:
    events = report.to_chrome_trace(GRAPH)["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]

    def enclosing(e: dict) -> dict:
        found = [s for s in slices if (s["pid"], s["tid"]) == (e["pid"], e["tid"])
                 and s["ts"] <= e["ts"] <= s["ts"] + s["dur"]]
        assert len(found) == 1, e
        return found[0]

    flows: dict[int, dict[str, dict]] = defaultdict(dict)
    for e in events:
        if e["ph"] in ("s", "f"):
            assert e["ph"] not in flows[e["id"]], f"flow {e['id']} has two {e['ph']!r} events"
            flows[e["id"]][e["ph"]] = e
    assert all(set(f) == {"s", "f"} for f in flows.values())
    chains: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for f in sorted(flows.values(), key=lambda f: f["s"]["id"]):
        assert f["s"]["name"] == f["f"]["name"] and f["f"]["bp"] == "e"
        chains[f["s"]["name"]].append((enclosing(f["s"])["name"], enclosing(f["f"])["name"]))
    # producer -> hop 1 -> hop 2 -> consumer, for each of the two transfers
    assert chains == {"x->y": [("x", "x->y"), ("x->y", "x->y"), ("x->y", "y")],
                      "y.bwd->x_grad": [("y.bwd", "y.bwd->x_grad"), ("y.bwd->x_grad", "y.bwd->x_grad"),
                                        ("y.bwd->x_grad", "x_grad")]}


def test_gantt_has_a_legend_and_hatches_backward_ops(report, tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    from placer.plots import STYLE, gantt_figure, write_gantt

    fig = gantt_figure(report, "step", GRAPH)
    try:
        ax = fig.axes[0]
        legend = ax.get_legend()
        assert legend is not None
        labels = [t.get_text() for t in legend.get_texts()]
        assert labels[:4] == ["forward op", "backward op", "weight update", "transfer (per link hop)"]
        assert labels[4].startswith("makespan")
        hatched = [p for p in ax.patches if p.get_hatch() == STYLE["backward"]["hatch"]]
        assert len(hatched) == 2  # y.bwd and x_grad
        assert STYLE["backward"]["color"] != STYLE["forward"]["color"]
    finally:
        plt.close(fig)
    write_gantt(report, tmp_path / "g.png", "step", GRAPH)
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
