"""The hybrid DP x MP crossover calculator: equations, config errors, paper reproductions,
device-count advice, the engine-computed SU^M path end to end, and the CLI."""

from __future__ import annotations

import doctest
import json
import math
from pathlib import Path

import pytest

import placer.crossover.calculate as calculate_module
import placer.crossover.config as config_module
import placer.crossover.engine_speedup as engine_speedup_module
import placer.crossover.model as model_module
from placer.cli import main
from placer.crossover import (
    dp_speedup,
    evaluate,
    hierarchical_allreduce_ms,
    hybrid_speedup,
    hybrid_threshold,
    loglog_interpolate,
    parse_config,
    ring_allreduce_ms,
    run,
    scaling_efficiency_from_comm,
    time_to_converge,
)
from placer.crossover.calculate import epochs_at, scaling_efficiency_at
from placer.crossover.engine_speedup import restrict_hardware
from placer.errors import InputError, InvalidHardwareError
from placer.resolve import resolve_hardware
from placer.schema import load_json, parse_hardware

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "crossover"


def example(name: str):
    return parse_config(load_json(EXAMPLES / f"{name}.json"))


def row_at(report, devices: int):
    return next(r for r in report.rows if r.devices == devices)


def base_config(**changes) -> dict:
    raw = {
        "devices": [1, 2, 4, 8],
        "epochs": {"by_width": {"1": 2.0, "8": 4.0}},
        "mp_speedup": {"2": 1.5},
    }
    raw.update(changes)
    return raw


# --------------------------------------------------------------------------- equations


@pytest.mark.parametrize("module", [model_module, config_module, calculate_module, engine_speedup_module])
def test_doctests(module) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_equations_by_hand() -> None:
    assert time_to_converge(0.2, 5000, 3) == pytest.approx(3000.0)  # eq. 1
    assert dp_speedup(8, 0.9, 2.0, 4.0) == pytest.approx(3.6)  # eq. 3: 0.9 x 8 x 2/4
    assert hybrid_speedup(1.5, 4, 0.95, 2.0, 3.0) == pytest.approx(1.5 * 0.95 * 4 * 2 / 3)  # eq. 5
    # eq. 6: SU^M > M x (SE_MN / SE_N) x (E_N / E_MN)
    assert hybrid_threshold(4, 0.9, 0.8, 3.0, 6.0) == pytest.approx(4 * (0.8 / 0.9) * 0.5)


def test_eq6_threshold_is_exactly_where_hybrid_ties_dp() -> None:
    """SU_N^M with SU^M at the threshold equals SU_{MN}: eqs. 4, 5 and 6 agree."""
    m, n, se_n, se_mn, e1, e_n, e_mn = 4, 16, 0.93, 0.81, 1.5, 2.5, 5.5
    su_m = hybrid_threshold(m, se_n, se_mn, e_n, e_mn)
    assert hybrid_speedup(su_m, n, se_n, e1, e_n) == pytest.approx(dp_speedup(m * n, se_mn, e1, e_mn))


def test_loglog_interpolation() -> None:
    points = {2.0: 3.0, 8.0: 12.0}
    assert loglog_interpolate(points, 2) == 3.0 and loglog_interpolate(points, 8) == 12.0
    # log-log straight line y = 1.5 x: at 4 it is 6
    assert loglog_interpolate(points, 4) == pytest.approx(6.0)
    # geometric mean at the geometric midpoint (not the arithmetic 7.5)
    assert loglog_interpolate({1: 4.0, 4: 16.0}, 2) == pytest.approx(8.0)
    with pytest.raises(InputError, match=r"epochs: no value for 16 \(given 2\.\.8\)"):
        loglog_interpolate(points, 16, what="epochs")
    with pytest.raises(InputError, match="no value for 1"):
        loglog_interpolate(points, 1)
    assert loglog_interpolate(points, 16, allow_extrapolation=True) == pytest.approx(24.0)
    assert loglog_interpolate({4.0: 7.0}, 64, allow_extrapolation=True) == 7.0


def test_ring_allreduce_by_hand() -> None:
    # 8 devices, 100 MB at 10 GB/s, 10 us: 2 x 7/8 x 10 ms + 14 x 0.01 ms
    assert ring_allreduce_ms(8, 100e6, 10.0, 10.0) == pytest.approx(17.5 + 0.14)
    assert ring_allreduce_ms(1, 100e6, 10.0, 10.0) == 0.0
    # 32 devices in 4 nodes of 8: in-node ring at 100 GB/s (1.75 ms), across nodes 2 x 3/4 x 100 MB
    # at 25 GB/s (6 ms), latencies 14 x 1 us + 6 x 5 us
    got = hierarchical_allreduce_ms(32, 100e6, 8, 100.0, 1.0, 25.0, 5.0)
    assert got == pytest.approx(1.75 + 0.014 + 6.0 + 0.030)
    # fewer devices than a node: a plain in-node ring
    assert hierarchical_allreduce_ms(4, 100e6, 8, 100.0, 1.0, 25.0, 5.0) == ring_allreduce_ms(
        4, 100e6, 100.0, 1.0
    )


def test_scaling_efficiency_from_comm() -> None:
    assert scaling_efficiency_from_comm(50.0, 50.0) == pytest.approx(0.5)
    assert scaling_efficiency_from_comm(50.0, 50.0, overlap=0.5) == pytest.approx(50 / 75)
    assert scaling_efficiency_from_comm(50.0, 0.0) == 1.0


def test_ring_model_config_gives_the_hand_computed_efficiency() -> None:
    cfg = parse_config(
        base_config(
            scaling_efficiency={
                "ring_allreduce": {
                    "gradient_bytes": 100_000_000,
                    "step_time_ms": 100.0,
                    "bandwidth_gb_per_s": 10.0,
                    "latency_us": 10.0,
                    "overlap": 0.5,
                }
            }
        )
    )
    # N = 8: all-reduce 17.64 ms, half hidden -> T_8 = 108.82 ms
    assert scaling_efficiency_at(cfg.scaling_efficiency, 8) == pytest.approx(100 / (100 + 17.64 / 2))
    assert scaling_efficiency_at(cfg.scaling_efficiency, 1) == 1.0
    hier = parse_config(
        base_config(
            scaling_efficiency={
                "ring_allreduce": {
                    "gradient_bytes": 100_000_000,
                    "step_time_ms": 100.0,
                    "bandwidth_gb_per_s": 100.0,
                    "latency_us": 1.0,
                    "node_size": 4,
                    "inter_node": {"bandwidth_gb_per_s": 25.0, "latency_us": 5.0},
                }
            }
        )
    )
    # N = 8 in 2 nodes of 4: 1.5 ms + 0.006 in-node, 4 ms + 0.010 across
    assert scaling_efficiency_at(hier.scaling_efficiency, 8) == pytest.approx(100 / (100 + 5.516))


def test_scaling_efficiency_table_interpolates_with_se1_implied() -> None:
    cfg = parse_config(base_config(scaling_efficiency={"table": {"4": 0.81, "8": 0.729}}))
    se = cfg.scaling_efficiency
    assert scaling_efficiency_at(se, 1) == 1.0
    assert scaling_efficiency_at(se, 2) == pytest.approx(0.9)  # log-log between (1, 1) and (4, 0.81)
    assert scaling_efficiency_at(se, 8) == 0.729
    report = evaluate(cfg, {2: 1.5})
    assert row_at(report, 8).dp_only.speedup == pytest.approx(0.729 * 8 * 2.0 / 4.0)


def test_epochs_by_global_batch_use_the_mini_batch() -> None:
    cfg = parse_config(base_config(epochs={"by_global_batch": {"32": 2.0, "256": 4.0}, "mini_batch": 32}))
    assert epochs_at(cfg.epochs, 1) == 2.0
    assert epochs_at(cfg.epochs, 8) == 4.0
    assert epochs_at(cfg.epochs, 2) == pytest.approx(2.0 * 2 ** (1 / 3))  # log-log, a third of the way


# --------------------------------------------------------------------------- paper reproductions


def test_inception_v3_reproduces_section_5() -> None:
    """Table 1 SU^2 = 1.32; +15.5% at 64 GPUs and +26.5% at 256; hybrid wins beyond 32."""
    cfg = example("inception_v3")
    # the epoch table says what Section 5 says: 4 epochs at 32 GPUs, 7 at 64, 23 at 256
    assert [epochs_at(cfg.epochs, n) for n in (32, 64, 256)] == [4.0, 7.0, 23.0]
    report = run(cfg)
    assert round(row_at(report, 64).hybrid_gain * 100, 1) == 15.5
    assert round(row_at(report, 256).hybrid_gain * 100, 1) == 26.5
    assert (row_at(report, 64).best.n, row_at(report, 64).best.m) == (32, 2)
    assert report.crossover_devices == 64
    assert row_at(report, 32).hybrid_gain < 0


def test_gnmt_reproduces_section_5() -> None:
    """SU^2 = 1.15: 128-way DP x 2-way MP beats 256-way DP by 8%; the tipping point is 256."""
    report = run(example("gnmt"))
    row = row_at(report, 256)
    assert (row.best_hybrid.n, row.best_hybrid.m) == (128, 2)
    assert round(row.hybrid_gain * 100) == 8
    assert report.crossover_devices == 256
    # "DP-only speedup ... dramatically slows down when moving from 128 to 256 GPUs"
    dp = {r.devices: r.dp_only.speedup for r in report.rows}
    assert dp[256] / dp[128] < 1.1 < dp[128] / dp[64]


def test_biglstm_reproduces_section_5() -> None:
    """SU^2 = 1.22, E_32 = 3.2 E_16: best DP-only at 16 GPUs, the hybrid 1.22x over it."""
    cfg = example("biglstm")
    assert epochs_at(cfg.epochs, 32) / epochs_at(cfg.epochs, 16) == pytest.approx(3.2)
    report = run(cfg)
    assert report.best_dp.devices == 16
    assert row_at(report, 32).dp_only.speedup < row_at(report, 16).dp_only.speedup
    best = report.best_hybrid
    assert (best.n, best.m, best.devices) == (16, 2, 32)
    assert round(report.best_hybrid_gain_over_best_dp + 1, 2) == 1.22


@pytest.mark.parametrize("name", ["inception_v3", "gnmt", "biglstm"])
def test_gain_is_su_over_threshold(name: str) -> None:
    """hybrid_gain = SU^M / eq.-6 threshold - 1 on every row, and beats_dp agrees with its sign."""
    report = run(example(name))
    for row in report.rows:
        for option in row.hybrids:
            gain = option.speedup / row.dp_only.speedup - 1
            assert gain == pytest.approx(option.mp_speedup / option.threshold - 1)
            assert option.beats_dp == (gain > 0)


# --------------------------------------------------------------------------- output and advice


def test_report_document_shape() -> None:
    doc = run(example("inception_v3")).to_dict()
    assert doc["format"] == "placer.crossover-result/v1"
    assert doc["crossover_devices"] == 64
    assert doc["best_dp"] == {"devices": 256, "speedup": pytest.approx(256 * 4 / 23)}
    assert doc["best_hybrid"] == {
        "devices": 256,
        "n": 128,
        "m": 2,
        "speedup": pytest.approx(1.32 * 128 * 4 / 12),
    }
    row = next(r for r in doc["rows"] if r["devices"] == 64)
    assert row["thresholds"] == {"2": pytest.approx(2 * 4 / 7)}
    assert row["best_hybrid"] == {"n": 32, "m": 2, "speedup": pytest.approx(42.24)}
    assert doc["rows"][0]["best_hybrid"] is None and doc["rows"][0]["hybrid_gain"] is None
    assert doc["mp_speedup"] == {"2": {"source": "given", "speedup": 1.32}}
    # every row has a DP-only energy figure: 300 W given without hours -> kWh per single-device hour
    energy = row["dp_only"]["energy"]
    assert energy["device_time_ratio"] == pytest.approx(64 / (64 * 4 / 7))
    assert energy["energy_kwh_per_single_device_hour"] == pytest.approx(7 / 4 * 300 / 1000)
    json.dumps(doc)  # serialisable


def test_advice_fraction_marginal_and_energy() -> None:
    cfg = parse_config(
        base_config(
            devices=[1, 2, 4, 8, 16],
            epochs={"by_width": {"1": 1.0, "4": 1.0, "8": 1.6, "16": 4.0}},
            advice={
                "fraction_of_best": 0.8,
                "min_marginal_speedup_per_device": 0.6,
                "device_power_w": 250,
                "single_device_hours": 100,
            },
        )
    )
    report = evaluate(cfg, {})
    dp = report.advice[1]
    assert dp.curve == "dp_only"
    # DP speedups 1, 2, 4, 5, 4: best 5 at 8; 80% of it (4) first at 4 devices
    assert (dp.best_devices, dp.best_speedup, dp.fraction_devices) == (8, 5.0, 4)
    # marginal per device: 1, 1, 0.25 (4 -> 8), -0.125: below 0.6 after 4
    assert [v for _, _, v in dp.marginal] == pytest.approx([1.0, 1.0, 0.25, -0.125])
    assert dp.marginal_devices == 4 and dp.recommended_devices == 4
    energy = row_at(report, 8).dp_only.energy
    assert energy["train_hours"] == pytest.approx(20.0)  # 100 h / 5
    assert energy["device_hours"] == pytest.approx(160.0)
    assert energy["energy_kwh"] == pytest.approx(40.0)  # 160 h x 250 W
    assert report.crossover_devices is None and report.best_hybrid is None


def test_devices_not_divisible_by_m_have_no_hybrid() -> None:
    cfg = parse_config(base_config(devices=[1, 3, 4, 6], epochs={"by_width": {"1": 2.0, "6": 2.0}}))
    report = evaluate(cfg, {2: 1.5, 4: 1.8})
    assert [o.m for o in row_at(report, 3).hybrids] == []
    assert [o.m for o in row_at(report, 4).hybrids] == [2, 4]
    assert [o.m for o in row_at(report, 6).hybrids] == [2]


# --------------------------------------------------------------------------- config errors


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"devices": [1, 4, 2]}, r"devices: must be strictly increasing, got 2 after 4 \(devices\[2\]\)"),
        ({"devices": [1, 2, 2]}, r"devices: must be strictly increasing"),
        ({"devices": []}, r"devices: List should have at least 1 item"),
        ({"devices": [0, 2]}, r"devices\[0\]: Input should be greater than or equal to 1"),
        (
            {"devices": [1, 2, 16]},
            r"epochs.by_width: no epochs for width 16 \(needed for DP-only on 16 devices\)",
        ),
        (
            {"devices": [4, 16], "epochs": {"by_width": {"1": 2, "4": 3}}},
            r"no epochs for width 8 \(needed for 8-way DP x 2-way MP on 16 devices\)",
        ),
        ({"epochs": {"by_width": {"2": 2, "8": 4}}}, r"no epochs for width 1 \(needed for E_1"),
        ({"epochs": {}}, r"epochs: give exactly one of by_width or by_global_batch"),
        ({"epochs": {"by_width": {}}}, r"epochs: by_width: give at least one point"),
        ({"epochs": {"by_global_batch": {"64": 2}}}, r"epochs: mini_batch: required with by_global_batch"),
        ({"epochs": {"by_width": {"1": 0, "8": 4}}}, r"epochs.by_width.1: Input should be greater than 0"),
        (
            {"scaling_efficiency": 0},
            r"scaling_efficiency.constant: a scaling efficiency must be in \(0, 1\], got 0",
        ),
        ({"scaling_efficiency": 1.2}, r"scaling efficiency must be in \(0, 1\], got 1.2"),
        (
            {"scaling_efficiency": {"table": {"8": 1.01}}},
            r"scaling_efficiency.table.8: .* \(0, 1\], got 1.01",
        ),
        ({"scaling_efficiency": {"table": {"1": 0.9}}}, r"SE_1 = T_1 / T_1 is 1 by definition"),
        (
            {"scaling_efficiency": {"table": {"4": 0.9}}},
            r"scaling_efficiency.table: no efficiency for width 8",
        ),
        (
            {
                "scaling_efficiency": {
                    "ring_allreduce": {
                        "gradient_bytes": 1,
                        "step_time_ms": 1,
                        "bandwidth_gb_per_s": 1,
                        "node_size": 8,
                    }
                }
            },
            r"scaling_efficiency.ring_allreduce: give node_size and inter_node together",
        ),
        (
            {
                "scaling_efficiency": {
                    "ring_allreduce": {
                        "gradient_bytes": 1,
                        "step_time_ms": 1,
                        "bandwidth_gb_per_s": 1,
                        "overlap": 2,
                    }
                }
            },
            r"scaling_efficiency.ring_allreduce.overlap: Input should be less than or equal to 1",
        ),
        ({"mp_speedup": {"1": 1.2}}, r"M must be >= 2 \(M = 1 is data parallelism alone\)"),
        ({"mp_speedup": {"2": -1}}, r"mp_speedup.given.2: Input should be greater than 0"),
        ({"mp_speedup": {}}, r"mp_speedup: give SU\^M for at least one M >= 2"),
        (
            {"mp_speedup": {"engine": {"hardware": "dgx1_v100", "m": [2]}}},
            r"mp_speedup.engine: give exactly one",
        ),
        (
            {"mp_speedup": {"engine": {"graph": "g.json", "hardware": "dgx1_v100", "m": [4, 2]}}},
            r"mp_speedup.engine: m: must be strictly increasing",
        ),
        (
            {
                "mp_speedup": {
                    "given": {"2": 1.3},
                    "engine": {"graph": "g.json", "hardware": "dgx1_v100", "m": [2]},
                }
            },
            r"M=\[2\] is both given and asked of the engine",
        ),
        (
            {
                "mp_speedup": {
                    "engine": {"graph": "g.json", "hardware": "h", "m": [2], "device_ids": {"2": ["a"]}}
                }
            },
            r"device_ids.2: need 2 distinct device ids",
        ),
        ({"advice": {"fraction_of_best": 0}}, r"advice.fraction_of_best: Input should be greater than 0"),
        ({"colour": "blue"}, r"colour: Extra inputs are not permitted"),
        ({"format": "placer.crossover/v2"}, r"format: Input should be 'placer.crossover/v1'"),
    ],
)
def test_bad_configs_are_rejected_naming_the_field(changes: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_config(base_config(**changes))


def test_missing_required_fields() -> None:
    for field in ("devices", "epochs", "mp_speedup"):
        raw = base_config()
        del raw[field]
        with pytest.raises(InputError, match=rf"crossover: {field}: Field required"):
            parse_config(raw)
    with pytest.raises(InputError, match="expected a JSON object"):
        parse_config([1, 2])


def test_extrapolation_when_allowed() -> None:
    cfg = parse_config(base_config(devices=[1, 2, 4, 8, 16], allow_extrapolation=True))
    # epochs 2 at width 1 and 4 at width 8: log-log slope 1/3 continues to 16
    report = evaluate(cfg, {2: 1.5})
    assert row_at(report, 16).dp_only.epochs == pytest.approx(4.0 * 2 ** (1 / 3))


# --------------------------------------------------------------------------- hardware restriction


def test_restrict_dgx1_to_four_devices() -> None:
    hw = resolve_hardware("dgx1_v100")
    small = restrict_hardware(hw, 4)
    kept = {"gpu0", "gpu1", "gpu2", "gpu3"}
    assert [d.id for d in small.devices] == ["gpu0", "gpu1", "gpu2", "gpu3"]
    assert [s.id for s in small.switches] == [s.id for s in hw.switches]
    nodes = kept | {s.id for s in hw.switches}
    expected = [(lk.a, lk.b) for lk in hw.links if lk.a in nodes and lk.b in nodes]
    assert [(lk.a, lk.b) for lk in small.links] == expected
    assert all(lk.a in nodes and lk.b in nodes for lk in small.links)
    parse_hardware(small.model_dump())  # still a valid placer.hardware/v1 document


def test_restrict_errors() -> None:
    hw = parse_hardware(
        {
            "name": "chain",
            "devices": [{"id": "g0"}, {"id": "g1"}, {"id": "g2"}],
            "links": [
                {"a": "g0", "b": "g1", "bandwidth_gb_per_s": 10},
                {"a": "g1", "b": "g2", "bandwidth_gb_per_s": 10},
            ],
        }
    )
    assert [d.id for d in restrict_hardware(hw, 2, ["g2", "g1"]).devices] == ["g2", "g1"]
    with pytest.raises(InvalidHardwareError, match=r"disconnected: g2 cannot reach g0"):
        restrict_hardware(hw, 2, ["g0", "g2"])
    with pytest.raises(InvalidHardwareError, match=r"M=4 but hardware 'chain' has only 3 devices"):
        restrict_hardware(hw, 4)
    with pytest.raises(InvalidHardwareError, match=r"device_ids.2: hardware 'chain' has no device 'gpu9'"):
        restrict_hardware(hw, 2, ["g0", "gpu9"])


# --------------------------------------------------------------------------- engine-computed SU^M


def fork_join_graph() -> dict:
    """src (1 ms) -> two independent 4 ms branches -> sink (1 ms); tensors of 0 bytes.

    One device: 10 ms. Two devices over a zero-latency link: 1 + 4 + 1 = 6 ms, SU^2 = 5/3.
    """
    return {
        "format": "placer.graph/v1",
        "name": "fork_join",
        "ops": [
            {"id": "src", "time_ms": 1.0},
            {"id": "left", "time_ms": 4.0},
            {"id": "right", "time_ms": 4.0},
            {"id": "sink", "time_ms": 1.0},
        ],
        "edges": [
            {"src": "src", "dst": "left", "bytes": 0},
            {"src": "src", "dst": "right", "bytes": 0},
            {"src": "left", "dst": "sink", "bytes": 0},
            {"src": "right", "dst": "sink", "bytes": 0},
        ],
    }


def star_hardware(devices: int, memory_bytes: int | None = None) -> dict:
    return {
        "format": "placer.hardware/v1",
        "name": "star",
        "devices": [{"id": f"g{i}", "memory_bytes": memory_bytes} for i in range(devices)],
        "switches": [{"id": "sw"}],
        "links": [{"a": f"g{i}", "b": "sw", "bandwidth_gb_per_s": 10.0} for i in range(devices)],
    }


@pytest.mark.parametrize("solver", ["cpsat", "heft"])
def test_engine_computes_su_m_end_to_end(solver: str) -> None:
    cfg = parse_config(
        base_config(
            mp_speedup={
                "engine": {
                    "graph": fork_join_graph(),
                    "hardware": star_hardware(3),
                    "m": [2],
                    "solver": solver,
                    "time_limit_s": 5,
                }
            }
        )
    )
    report = run(cfg)
    source = report.mp_speedup_sources[2]
    assert source["source"] == "engine" and source["solver"] == solver
    assert source["devices"] == ["g0", "g1"]
    assert source["single_device_ms"] == pytest.approx(10.0)
    assert source["makespan_ms"] == pytest.approx(6.0)
    assert source["speedup"] == pytest.approx(10 / 6)
    row = row_at(report, 8)
    assert row.best_hybrid.mp_speedup == pytest.approx(10 / 6)
    # epochs 2 at width 1, 4 at width 8; log-log: E_4 = 2 x 2^(2/3)
    assert row.best_hybrid.speedup == pytest.approx(10 / 6 * 4 * 2.0 / (2.0 * 2 ** (2 / 3)))


def test_engine_with_explicit_devices_and_file_paths(tmp_path: Path) -> None:
    (tmp_path / "graph.json").write_text(json.dumps(fork_join_graph()))
    (tmp_path / "hw.json").write_text(json.dumps(star_hardware(4)))
    raw = base_config(
        mp_speedup={
            "given": {"4": 1.1},
            "engine": {
                "graph": "graph.json",
                "hardware": "hw.json",
                "m": [2],
                "device_ids": {"2": ["g3", "g1"]},
                "solver": "heft",
            },
        }
    )
    report = run(parse_config(raw), base_dir=tmp_path)
    assert report.mp_speedup_sources[2]["devices"] == ["g3", "g1"]
    assert report.mp_speedup_sources[2]["speedup"] == pytest.approx(10 / 6)
    assert report.mp_speedup_sources[4] == {"source": "given", "speedup": 1.1}
    with pytest.raises(InputError, match=r"mp_speedup.engine.graph: no such file 'graph.json'"):
        run(parse_config(raw), base_dir=tmp_path / "elsewhere")


def test_engine_on_a_zoo_model() -> None:
    """AlexNet from the zoo (47 ops) on 2 GPUs of a DGX-1 with CP-SAT: under a second."""
    cfg = parse_config(
        base_config(
            mp_speedup={
                "engine": {
                    "model": "alexnet",
                    "batch": 32,
                    "hardware": "dgx1_v100",
                    "m": [2],
                    "solver": "cpsat",
                    "time_limit_s": 10,
                }
            }
        )
    )
    source = run(cfg).mp_speedup_sources[2]
    assert source["status"] in ("optimal", "feasible") and source["solver"] == "cpsat"
    assert source["speedup"] == pytest.approx(source["single_device_ms"] / source["makespan_ms"])
    assert source["speedup"] > 1.0
    unknown = parse_config(
        base_config(mp_speedup={"engine": {"model": "lenet99", "hardware": "dgx1_v100", "m": [2]}})
    )
    with pytest.raises(InputError, match=r"mp_speedup.engine.model: zoo model 'lenet99' does not exist"):
        run(unknown)


def test_engine_refuses_files_when_asked(tmp_path: Path) -> None:
    """A service passes allow_files=False: inline documents and preset names only."""
    (tmp_path / "graph.json").write_text(json.dumps(fork_join_graph()))
    by_file = parse_config(
        base_config(mp_speedup={"engine": {"graph": "graph.json", "hardware": "dgx1_v100", "m": [2]}})
    )
    with pytest.raises(InputError, match=r"mp_speedup.engine.graph: file paths are not accepted here"):
        run(by_file, base_dir=tmp_path, allow_files=False)
    (tmp_path / "hw.json").write_text(json.dumps(star_hardware(2)))
    hw_file = parse_config(
        base_config(mp_speedup={"engine": {"graph": fork_join_graph(), "hardware": "hw.json", "m": [2]}})
    )
    with pytest.raises(InputError, match=r"mp_speedup.engine.hardware: 'hw.json' is not a preset"):
        run(hw_file, base_dir=tmp_path, allow_files=False)
    inline = parse_config(
        base_config(
            mp_speedup={
                "engine": {"graph": fork_join_graph(), "hardware": "dgx1_v100", "m": [2], "solver": "heft"}
            }
        )
    )
    report = run(inline, allow_files=False)
    assert report.mp_speedup_sources[2]["devices"] == ["gpu0", "gpu1"]


def test_engine_input_errors_name_the_field() -> None:
    unknown = parse_config(
        base_config(
            mp_speedup={"engine": {"graph": fork_join_graph(), "hardware": "no_such_machine", "m": [2]}}
        )
    )
    with pytest.raises(
        InputError, match=r"mp_speedup.engine.hardware: .*'no_such_machine' is neither a file"
    ):
        run(unknown)
    cyclic = fork_join_graph()
    cyclic["edges"].append({"src": "sink", "dst": "src"})
    bad_graph = parse_config(
        base_config(mp_speedup={"engine": {"graph": cyclic, "hardware": "dgx1_v100", "m": [2]}})
    )
    with pytest.raises(InputError, match=r"mp_speedup.engine.graph: graph: the graph has a cycle"):
        run(bad_graph)
    too_many = parse_config(
        base_config(
            mp_speedup={"engine": {"graph": fork_join_graph(), "hardware": star_hardware(2), "m": [2, 4]}}
        )
    )
    with pytest.raises(InputError, match=r"mp_speedup.engine.m: M=4 but hardware 'star' has only 2 devices"):
        run(too_many)


def test_engine_failure_names_m() -> None:
    graph = fork_join_graph()
    graph["ops"][1]["memory_bytes"] = 2_000  # left does not fit a 1 kB device
    cfg = parse_config(
        base_config(
            mp_speedup={
                "engine": {"graph": graph, "hardware": star_hardware(2, 1_000), "m": [2], "solver": "heft"}
            }
        )
    )
    with pytest.raises(InputError, match=r"mp_speedup.engine: M=2: the engine found no usable placement"):
        run(cfg)
    graph = fork_join_graph()
    for op in graph["ops"]:
        op["memory_bytes"] = 600  # 2.4 kB in all: fits two 1.5 kB devices, not one
    cfg = parse_config(
        base_config(
            mp_speedup={
                "engine": {"graph": graph, "hardware": star_hardware(2, 1_500), "m": [2], "solver": "heft"}
            }
        )
    )
    with pytest.raises(InputError, match=r"M=2: 'fork_join' does not fit on one device of 'star'"):
        run(cfg)
    cfg = parse_config(
        base_config(
            mp_speedup={
                "engine": {
                    "graph": fork_join_graph(),
                    "hardware": star_hardware(2),
                    "m": [2],
                    "solver": "gurobi",
                }
            }
        )
    )
    with pytest.raises(InputError, match=r"mp_speedup.engine.solver: Input should be"):
        run(cfg)


def test_engine_example_config_runs() -> None:
    """examples/crossover/engine_dgx1.json: CP-SAT on a DGX-1, ring all-reduce SE (about 3 s)."""
    report = run(example("engine_dgx1"), base_dir=EXAMPLES)
    for m in (2, 4):
        source = report.mp_speedup_sources[m]
        assert source["source"] == "engine" and source["status"] in ("optimal", "feasible")
        assert source["speedup"] == pytest.approx(source["single_device_ms"] / source["makespan_ms"])
        assert source["speedup"] > 1
    assert all(0 < r.dp_only.scaling_efficiency < 1 for r in report.rows[1:])
    assert report.crossover_devices is not None


# --------------------------------------------------------------------------- CLI


def test_cli_prints_table_and_writes_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.json"
    plot = tmp_path / "fig5.png"
    code = main(["crossover", str(EXAMPLES / "inception_v3.json"), "-o", str(out), "--plot", str(plot)])
    assert code == 0
    stdout = capsys.readouterr().out
    assert "+15.5%" in stdout and "+26.5%" in stdout
    assert "a hybrid beats DP alone from 64 devices" in stdout
    assert json.loads(out.read_text())["crossover_devices"] == 64
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "fig5.svg").read_text()
    assert "<svg" in svg


def test_cli_bad_config_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(base_config(devices=[1, 8, 4])))
    assert main(["crossover", str(bad)]) == 2
    assert "devices: must be strictly increasing" in capsys.readouterr().err
    assert main(["crossover", str(tmp_path / "missing.json")]) == 2


def test_every_example_parses() -> None:
    names = sorted(
        p.stem for p in EXAMPLES.glob("*.json") if load_json(p).get("format") == "placer.crossover/v1"
    )
    assert names == ["biglstm", "engine_dgx1", "gnmt", "inception_v3"]
    for name in names:
        assert math.isfinite(example(name).epochs.points[min(example(name).epochs.points)])


def test_a_flat_epochs_map_is_told_to_use_by_width_or_by_global_batch(tmp_path: Path, capsys) -> None:
    with pytest.raises(InputError) as caught:
        parse_config(base_config(epochs={"1": 2.0, "8": 4.0}))
    message = str(caught.value)
    assert message.count("\n") == 0, "one precise message, not one per key"
    assert message.startswith("crossover: epochs: a flat map of epochs")
    assert '{"by_width": {"1": 2.0, "8": 4.0}}' in message and '"by_global_batch"' in message
    # a misspelt table name is not a flat map: pydantic names the unknown key
    with pytest.raises(InputError, match=r"epochs.by_widht: Extra inputs are not permitted"):
        parse_config(base_config(epochs={"by_widht": {"1": 2.0}}))
    # and on the command line: exit 2 with the message on stderr
    config = tmp_path / "c.json"
    config.write_text(json.dumps(base_config(epochs={"1": 2.0, "8": 4.0})))
    assert main(["crossover", str(config)]) == 2
    assert "epochs: a flat map of epochs" in capsys.readouterr().err
