"""Every rejection names the field and the op, edge or device it is about."""
from __future__ import annotations

import math

import pytest

from placer.errors import InvalidGraphError, InvalidHardwareError
from placer.schema import parse_graph, parse_hardware
from tests.conftest import fully_connected, graph


def rejects_graph(doc: dict, *fragments: str) -> None:
    with pytest.raises(InvalidGraphError) as info:
        parse_graph(doc)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_valid_graph_parses() -> None:
    g = parse_graph(graph([("a", 1.0), ("b", 2.0)], [("a", "b", 8)]))
    assert [op.id for op in g.ops] == ["a", "b"] and g.edges[0].bytes == 8


def test_duplicate_ids() -> None:
    rejects_graph(graph([("a", 1.0), ("a", 2.0)]), "duplicate op ids", "'a'")


def test_unknown_edge_end() -> None:
    rejects_graph(graph([("a", 1.0)], [("a", "zz", 1)]), "edges[0] (a -> zz)", "unknown op 'zz'")


def test_cycle_is_printed() -> None:
    rejects_graph(graph([("a", 1), ("b", 1), ("c", 1)], [("a", "b", 0), ("b", "c", 0), ("c", "a", 0)]),
                  "cycle", "a -> b -> c -> a")


def test_self_loop_and_duplicate_edge() -> None:
    rejects_graph(graph([("a", 1)], [("a", "a", 0)]), "edges[0] (a -> a)")
    rejects_graph(graph([("a", 1), ("b", 1)], [("a", "b", 0), ("a", "b", 1)]), "edges[1] (a -> b)", "duplicate")


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_bad_numbers_name_the_op(bad: float) -> None:
    doc = graph([("a", 1.0), ("conv1", 1.0)])
    doc["ops"][1]["time_ms"] = bad
    rejects_graph(doc, "ops[1] (id 'conv1').time_ms")


def test_negative_bytes_name_the_edge() -> None:
    rejects_graph(graph([("a", 1), ("b", 1)], [("a", "b", -5)]), "edges[0] (edge a -> b).bytes")


def test_op_without_cost() -> None:
    doc = graph([("a", 1.0)])
    del doc["ops"][0]["time_ms"]
    rejects_graph(doc, "ops[0] (id 'a')", "neither time_ms nor flops")


def test_conflicting_group_pins() -> None:
    doc = graph([("f", 1.0), ("b", 1.0)])
    doc["ops"][0].update(group="g", device="gpu0")
    doc["ops"][1].update(group="g", device="gpu1")
    rejects_graph(doc, "group 'g'", "gpu0", "gpu1")


def test_wrong_format_and_unknown_field() -> None:
    doc = graph([("a", 1.0)])
    doc["format"] = "placer.graph/v2"
    rejects_graph(doc, "format")
    doc = graph([("a", 1.0)])
    doc["ops"][0]["tme_ms"] = 1
    rejects_graph(doc, "ops[0] (id 'a').tme_ms")


def test_empty_graph() -> None:
    rejects_graph({"format": "placer.graph/v1", "ops": []}, "ops")


def test_hardware_link_to_unknown_node() -> None:
    hw = fully_connected(2)
    hw["links"].append({"a": "gpu0", "b": "nvswitch", "bandwidth_gb_per_s": 1.0})
    with pytest.raises(InvalidHardwareError, match=r"links\[1\] \(gpu0 - nvswitch\): b names unknown node 'nvswitch'"):
        parse_hardware(hw)


def test_disconnected_hardware_names_devices() -> None:
    hw = fully_connected(2)
    hw["devices"].append({"id": "gpu9"})
    with pytest.raises(InvalidHardwareError, match="'gpu9' have no path of links to device 'gpu0'"):
        parse_hardware(hw)


def test_hardware_bad_bandwidth() -> None:
    hw = fully_connected(2)
    hw["links"][0]["bandwidth_gb_per_s"] = 0
    with pytest.raises(InvalidHardwareError, match=r"links\[0\] \(link gpu0 - gpu1\).bandwidth_gb_per_s"):
        parse_hardware(hw)


def test_pin_to_unknown_device_is_rejected_by_the_engine() -> None:
    from placer.engine import place

    doc = graph([("a", 1.0)])
    doc["ops"][0]["device"] = "tpu7"
    with pytest.raises(InvalidGraphError, match="op 'a': device 'tpu7' is not a device"):
        place(parse_graph(doc), parse_hardware(fully_connected(2)))


def test_analytic_op_needs_device_rates() -> None:
    from placer.engine import place

    doc = {"ops": [{"id": "mm", "flops": 1e9}]}
    with pytest.raises(InvalidGraphError, match="op 'mm' is costed by flops but device 'gpu0' has no peak_tflops"):
        place(parse_graph(doc), parse_hardware(fully_connected(2)))
