"""Hardware presets: every file parses and is connected, topologies match the published ones,
numbers match the datasheets, and `placer presets` lists and prints them."""
from __future__ import annotations

import argparse
import json
import tomllib
from collections import Counter
from itertools import combinations
from pathlib import Path

import networkx as nx
import pytest

import hardware_graphs
from placer.commands import presets as presets_command
from placer.errors import UnknownPresetError
from placer.schema import HardwareSpec, parse_graph, parse_hardware

EXPECTED = {
    "dgx1_v100",
    "dgx1_v100_quad",
    "dgx2_v100",
    "dgx_a100",
    "dgx_h100",
    "pcie_4gpu_workstation",
    "two_node_v100_ib",
}
NVLINK_GB_PER_S = 25.0

# `nvidia-smi topo -m` on a DGX-1 with V100, GPU block as published (NVn = n NVLinks).
DGX1_TOPO = """
        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7
GPU0     X      NV1     NV1     NV2     NV2     SYS     SYS     SYS
GPU1    NV1      X      NV2     NV1     SYS     NV2     SYS     SYS
GPU2    NV1     NV2      X      NV2     SYS     SYS     NV1     SYS
GPU3    NV2     NV1     NV2      X      SYS     SYS     SYS     NV1
GPU4    NV2     SYS     SYS     SYS      X      NV1     NV1     NV2
GPU5    SYS     NV2     SYS     SYS     NV1      X      NV2     NV1
GPU6    SYS     SYS     NV1     SYS     NV1     NV2      X      NV2
GPU7    SYS     SYS     SYS     NV1     NV2     NV1     NV2      X
"""

# Datasheet figures (hardware_graphs/README.md): memory (decimal), dense FP16 tensor peak, HBM bandwidth.
DATASHEET = {
    "V100-SXM2-16GB": (16_000_000_000, 125.0, 900.0),
    "V100-SXM3-32GB": (32_000_000_000, 125.0, 900.0),
    "V100-PCIe-16GB": (16_000_000_000, 112.0, 900.0),
    "A100-SXM4-40GB": (40_000_000_000, 312.0, 1555.0),
    "H100-SXM5-80GB": (80_000_000_000, 989.4, 3350.0),
}


def preset(name: str) -> HardwareSpec:
    return parse_hardware(hardware_graphs.load_preset_document(name))


def nvlink_lanes(spec: HardwareSpec) -> dict[frozenset[str], int]:
    """Physical NVLinks per GPU pair (direct GPU-GPU links only), from bandwidth / 25 GB/s."""
    devices = {d.id for d in spec.devices}
    lanes = {}
    for link in spec.links:
        if link.a in devices and link.b in devices:
            assert link.kind is not None and link.kind.startswith("nvlink"), link
            count = link.bandwidth_gb_per_s / NVLINK_GB_PER_S
            assert count == int(count), link
            assert link.kind.endswith(f"_x{int(count)}"), link
            lanes[frozenset((link.a, link.b))] = int(count)
    return lanes


def lanes_per_gpu(lanes: dict[frozenset[str], int]) -> Counter[str]:
    total: Counter[str] = Counter()
    for pair, count in lanes.items():
        for gpu in pair:
            total[gpu] += count
    return total


def link_map(spec: HardwareSpec) -> dict[frozenset[str], tuple[float, float, str | None]]:
    return {frozenset((l.a, l.b)): (l.bandwidth_gb_per_s, l.latency_us, l.kind) for l in spec.links}


def published_dgx1_lanes(prefix: str = "") -> dict[frozenset[str], int]:
    rows = [line.split() for line in DGX1_TOPO.strip().splitlines()[1:]]
    lanes = {}
    for i, row in enumerate(rows):
        for j, cell in enumerate(row[1:]):
            if cell.startswith("NV") and i < j:
                lanes[frozenset((f"{prefix}gpu{i}", f"{prefix}gpu{j}"))] = int(cell[2:])
    return lanes


# --------------------------------------------------------------------------- every preset


def test_the_issue_presets_are_all_bundled() -> None:
    assert EXPECTED <= set(hardware_graphs.preset_names())
    assert hardware_graphs.preset_names() == sorted(hardware_graphs.preset_names())


def test_unknown_preset_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        hardware_graphs.load_preset_document("dgx9000")


def test_presets_are_package_data() -> None:
    """pip install copies only what package-data names: the JSON files and this README."""
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert set(pyproject["tool"]["setuptools"]["package-data"]["hardware_graphs"]) >= {"*.json", "README.md"}


@pytest.mark.parametrize("name", hardware_graphs.preset_names())
def test_preset_is_valid_connected_and_complete(name: str) -> None:
    raw = hardware_graphs.load_preset_document(name)
    spec = parse_hardware(raw)
    assert spec.name == name
    assert spec.description and spec.source
    ids = [d.id for d in spec.devices] + [s.id for s in spec.switches]
    assert len(ids) == len(set(ids))
    g = nx.Graph((l.a, l.b) for l in spec.links)
    g.add_nodes_from(ids)
    assert nx.is_connected(g), f"{name}: some node has no path to the others"
    for device in spec.devices:
        assert device.kind in DATASHEET, f"add the datasheet figures of {device.kind!r} to DATASHEET"
        assert DATASHEET[device.kind] == (
            device.memory_bytes,
            device.peak_tflops,
            device.memory_bandwidth_gb_per_s,
        ), device.id
    for link in spec.links:
        assert link.kind, f"{name}: link {link.a} - {link.b} has no kind"
        assert link.latency_us > 0
    # The README table lists every preset.
    readme = (Path(hardware_graphs.__file__).parent / "README.md").read_text()
    assert f"`{name}`" in readme


# --------------------------------------------------------------------------- DGX-1 family


def test_dgx1_nvlinks_are_the_published_hybrid_cube_mesh() -> None:
    spec = preset("dgx1_v100")
    lanes = nvlink_lanes(spec)
    assert lanes == published_dgx1_lanes()
    assert lanes_per_gpu(lanes) == {f"gpu{i}": 6 for i in range(8)}
    assert sum(lanes.values()) == 24  # 8 GPUs x 6 NVLinks / 2 ends
    assert sorted(Counter(lanes.values()).items()) == [(1, 8), (2, 8)]


def test_dgx1_pcie_tree_and_qpi() -> None:
    spec = preset("dgx1_v100")
    links = link_map(spec)
    assert {s.id for s in spec.switches} == {"pcie0", "pcie1", "pcie2", "pcie3", "cpu0", "cpu1"}
    for i in range(8):
        assert links[frozenset((f"gpu{i}", f"pcie{i // 2}"))] == (15.75, 1.5, "pcie3_x16")
    for p in range(4):
        assert links[frozenset((f"pcie{p}", f"cpu{p // 2}"))] == (15.75, 1.5, "pcie3_x16")
    assert links[frozenset(("cpu0", "cpu1"))] == (38.4, 1.5, "qpi_x2")
    assert len(spec.links) == 16 + 8 + 4 + 1


def test_dgx1_quad_is_the_induced_subgraph_of_dgx1() -> None:
    full, quad = preset("dgx1_v100"), preset("dgx1_v100_quad")
    full_nodes = {d.id: d for d in full.devices} | {s.id: s for s in full.switches}
    quad_nodes = {d.id: d for d in quad.devices} | {s.id: s for s in quad.switches}
    assert set(quad_nodes) == {"gpu0", "gpu1", "gpu2", "gpu3", "pcie0", "pcie1", "cpu0"}
    for node_id, node in quad_nodes.items():
        assert full_nodes[node_id] == node
    full_links, quad_links = link_map(full), link_map(quad)
    induced = {pair: v for pair, v in full_links.items() if pair <= set(quad_nodes)}
    assert quad_links == induced
    lanes = nvlink_lanes(quad)
    assert set(lanes) == {frozenset(p) for p in combinations(["gpu0", "gpu1", "gpu2", "gpu3"], 2)}
    assert {tuple(sorted(p)) for p, n in lanes.items() if n == 2} == {
        ("gpu0", "gpu3"),
        ("gpu1", "gpu2"),
        ("gpu2", "gpu3"),
    }
    assert lanes_per_gpu(lanes) == {"gpu0": 4, "gpu1": 4, "gpu2": 5, "gpu3": 5}


def test_two_node_cluster_is_two_dgx1_joined_by_edr() -> None:
    spec = preset("two_node_v100_ib")
    dgx1 = link_map(preset("dgx1_v100"))
    assert len(spec.devices) == 16
    assert len({d.id for d in spec.devices}) == 16
    links = link_map(spec)
    for n in range(2):
        prefix = f"n{n}_"
        lanes = {p: c for p, c in nvlink_lanes(spec).items() if all(x.startswith(prefix) for x in p)}
        assert lanes == published_dgx1_lanes(prefix)
        assert lanes_per_gpu(lanes) == {f"{prefix}gpu{i}": 6 for i in range(8)}
        node_links = {
            frozenset(x.removeprefix(prefix) for x in pair): v
            for pair, v in links.items()
            if all(x.startswith(prefix) for x in pair)
        }
        assert node_links == dgx1
    ib = {pair: v for pair, v in links.items() if "ib_switch" in pair}
    assert ib == {
        frozenset((f"n{n}_pcie{p}", "ib_switch")): (12.5, 1.0, "infiniband_edr_x1")
        for n in range(2)
        for p in range(4)
    }
    assert len(links) == 2 * len(dgx1) + 8
    # No link joins the two nodes except through the InfiniBand switch.
    g = nx.Graph((l.a, l.b) for l in spec.links)
    g.remove_node("ib_switch")
    assert nx.number_connected_components(g) == 2


# --------------------------------------------------------------------------- NVSwitch machines


@pytest.mark.parametrize(
    ("name", "gpus", "links_per_gpu", "kind"),
    [
        ("dgx2_v100", 16, 6, "nvlink2_x6"),
        ("dgx_a100", 8, 12, "nvlink3_x12"),
        ("dgx_h100", 8, 18, "nvlink4_x18"),
    ],
)
def test_nvswitch_fabric_bandwidth_per_gpu(name: str, gpus: int, links_per_gpu: int, kind: str) -> None:
    spec = preset(name)
    assert len(spec.devices) == gpus
    switches = {s.id for s in spec.switches}
    per_gpu = {}
    for link in spec.links:
        ends = {link.a, link.b}
        gpu = ends - switches
        if len(gpu) == 1:
            per_gpu[gpu.pop()] = (link.bandwidth_gb_per_s, link.kind)
    assert per_gpu == {d.id: (links_per_gpu * NVLINK_GB_PER_S, kind) for d in spec.devices}


def test_dgx2_baseboards_joined_by_48_nvlinks() -> None:
    links = link_map(preset("dgx2_v100"))
    assert links[frozenset(("nvswitch_board0", "nvswitch_board1"))] == (1200.0, 1.0, "nvlink2_x48")
    for i in range(16):
        assert frozenset((f"gpu{i}", f"nvswitch_board{i // 8}")) in links


@pytest.mark.parametrize(
    ("name", "total_pflops"),
    [("dgx1_v100", 1.0), ("dgx2_v100", 2.0), ("dgx_a100", 2.496), ("dgx_h100", 7.9152)],
)
def test_system_peak_matches_the_datasheet_total(name: str, total_pflops: float) -> None:
    """DGX-1 '1 petaFLOPS', DGX-2 '2 petaFLOPS'; A100 8 x 312, H100 8 x 989.4 (dense)."""
    assert sum(d.peak_tflops for d in preset(name).devices) / 1000 == pytest.approx(total_pflops, rel=1e-12)


# --------------------------------------------------------------------------- routes the presets give


@pytest.mark.parametrize(
    ("name", "src", "dst", "route", "delay_ms"),
    [
        # doubled NVLink: 1e8 B / 50 GB/s = 2 ms, + 2 us
        ("dgx1_v100", "gpu0", "gpu3", ("gpu0", "gpu3"), 2.002),
        # single NVLink: 1e8 / 25e9 s = 4 ms, + 2 us
        ("dgx1_v100_quad", "gpu0", "gpu1", ("gpu0", "gpu1"), 4.002),
        # through the fabric, store-and-forward: 2 x 1e8 / 300e9 s + 2 x 1.5 us
        ("dgx_a100", "gpu0", "gpu7", ("gpu0", "nvswitch", "gpu7"), 2 * 1e8 / 300e9 * 1e3 + 0.003),
        ("dgx_h100", "gpu2", "gpu5", ("gpu2", "nvswitch", "gpu5"), 2 * 1e8 / 450e9 * 1e3 + 0.003),
        # across DGX-2 baseboards: 1e8 (2 / 150e9 + 1 / 1200e9) s + (1.5 + 1 + 1.5) us
        (
            "dgx2_v100",
            "gpu0",
            "gpu15",
            ("gpu0", "nvswitch_board0", "nvswitch_board1", "gpu15"),
            1e8 * (2 / 150e9 + 1 / 1200e9) * 1e3 + 0.004,
        ),
        # across PCIe switches: 4 hops of 15.75 GB/s and 1.5 us
        (
            "pcie_4gpu_workstation",
            "gpu0",
            "gpu2",
            ("gpu0", "pcie0", "cpu0", "pcie1", "gpu2"),
            4 * 1e8 / 15.75e9 * 1e3 + 0.006,
        ),
    ],
)
def test_minimum_delay_route(name: str, src: str, dst: str, route: tuple[str, ...], delay_ms: float) -> None:
    from placer.routing import Router

    router = Router(preset(name))
    assert router.route(1e8, src, dst) == route
    assert router.delay_ms(1e8, src, dst) == pytest.approx(delay_ms, rel=1e-12)


def test_cross_node_traffic_takes_infiniband() -> None:
    from placer.routing import Router

    router = Router(preset("two_node_v100_ib"))
    route = router.route(1e8, "n0_gpu0", "n1_gpu0")
    assert route == ("n0_gpu0", "n0_pcie0", "ib_switch", "n1_pcie0", "n1_gpu0")
    expected_ms = (2 * 1e8 / 15.75e9 + 2 * 1e8 / 12.5e9) * 1e3 + 0.005
    assert router.delay_ms(1e8, "n0_gpu0", "n1_gpu0") == pytest.approx(expected_ms, rel=1e-12)


# --------------------------------------------------------------------------- `placer presets`


def _run_presets(argv: list[str]) -> int:
    """The sub-command alone, without the rest of the CLI."""
    parser = argparse.ArgumentParser(prog="placer")
    presets_command.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_summary_row_of_dgx1() -> None:
    row = presets_command.summarize("dgx1_v100", preset("dgx1_v100"))
    assert (row.devices, row.kinds, row.memory_bytes, row.peak_tflops, row.switches, row.links) == (
        8,
        ["V100-SXM2-16GB"],
        [16_000_000_000],
        [125.0],
        6,
        29,
    )
    cells = ["dgx1_v100", "8", "V100-SXM2-16GB", "16 GB", "125", "6", "29"]
    assert presets_command.table_row(row)[:7] == cells


def test_summary_joins_mixed_devices() -> None:
    spec = parse_hardware(
        {
            "devices": [
                {"id": "a", "kind": "big", "memory_bytes": 80_000_000_000, "peak_tflops": 989.4},
                {"id": "b", "kind": "small", "memory_bytes": 16_000_000_000},
            ],
            "links": [{"a": "a", "b": "b", "bandwidth_gb_per_s": 10}],
        }
    )
    row = presets_command.summarize("mixed", spec)
    assert presets_command.table_row(row)[2:5] == ["big/small", "80 GB/16 GB", "989.4/?"]


def test_presets_table_lists_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_presets(["presets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["NAME", "DEVICES"]
    names = [line.split()[0] for line in lines[1:]]
    assert names == hardware_graphs.preset_names()
    dgx_h100 = next(line for line in lines if line.startswith("dgx_h100 "))
    assert dgx_h100.split()[1:6] == ["8", "H100-SXM5-80GB", "80", "GB", "989.4"]


def test_presets_json_listing(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_presets(["presets", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_name = {row["name"]: row for row in rows}
    assert set(by_name) == set(hardware_graphs.preset_names())
    assert by_name["two_node_v100_ib"]["devices"] == 16
    assert by_name["two_node_v100_ib"]["links"] == 66
    assert by_name["dgx_h100"]["memory_bytes"] == [80_000_000_000]
    assert by_name["dgx_h100"]["peak_tflops"] == [989.4]


def test_presets_name_prints_the_document(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_presets(["presets", "dgx_a100"]) == 0
    assert json.loads(capsys.readouterr().out) == hardware_graphs.load_preset_document("dgx_a100")


def test_unknown_preset_names_the_known_ones() -> None:
    with pytest.raises(UnknownPresetError, match=r"no preset named 'dgx9000' \(presets: .*dgx1_v100"):
        _run_presets(["presets", "dgx9000"])


def test_placer_cli_presets(capsys: pytest.CaptureFixture[str]) -> None:
    from placer.cli import main

    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    for name in hardware_graphs.preset_names():
        assert name in out
    assert main(["presets", "nope"]) == 2
    assert "no preset named 'nope'" in capsys.readouterr().err


# --------------------------------------------------------------------------- placing on every preset

SMALL_GRAPH = {
    "format": "placer.graph/v1",
    "name": "six_ops",
    "ops": [
        {"id": "in", "time_ms": 0.5, "memory_bytes": 1_000_000},
        {"id": "left", "flops": 2.0e11, "bytes_accessed": 1.0e9, "memory_bytes": 2_000_000_000},
        {"id": "right", "flops": 2.0e11, "bytes_accessed": 1.0e9, "memory_bytes": 2_000_000_000},
        {"id": "left2", "time_ms": 1.0, "memory_bytes": 500_000_000},
        {"id": "right2", "time_ms": 1.0, "memory_bytes": 500_000_000},
        {"id": "out", "time_ms": 0.25, "memory_bytes": 1_000_000},
    ],
    "edges": [
        {"src": "in", "dst": "left", "bytes": 4_000_000},
        {"src": "in", "dst": "right", "bytes": 4_000_000},
        {"src": "left", "dst": "left2", "bytes": 16_000_000},
        {"src": "right", "dst": "right2", "bytes": 16_000_000},
        {"src": "left2", "dst": "out", "bytes": 1_000_000},
        {"src": "right2", "dst": "out", "bytes": 1_000_000},
    ],
}


@pytest.mark.parametrize("name", hardware_graphs.preset_names())
def test_small_graph_places_on_every_preset(name: str) -> None:
    from placer.engine import PlaceOptions, place
    from placer.validate import check_result

    graph, hardware = parse_graph(SMALL_GRAPH), preset(name)
    result = place(graph, hardware, PlaceOptions(solver="heft", time_limit_s=5))
    assert result.status in ("optimal", "feasible")
    assert set(result.placement) == {op.id for op in graph.ops}
    assert set(result.placement.values()) <= {d.id for d in hardware.devices}
    assert check_result(graph, hardware, result) == []
    assert result.makespan_ms is not None and result.single_device_ms is not None
    assert result.makespan_ms <= result.single_device_ms + 1e-9
