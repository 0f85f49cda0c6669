"""The malformed and oversized requests of the hostile campaign, and how each is judged.

Every case is data: method, target, headers, raw body bytes (so duplicate keys, NaN, lone
surrogates and broken UTF-8 reach the server as a hostile client would send them) and what a
correct service answers: a 4xx (never a 5xx, never a reset), within 1 s when the request is
over a documented size. A few cases expect a 2xx (a lowercase `bearer` scheme is valid).
Case ids are stable: the smoke test and the report name cases by id.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Case", "Limits", "judge", "malformed_cases"]

FAST_S = 1.0  # a request over a documented limit is refused within this


@dataclass(frozen=True)
class Limits:
    """The service's documented sizes the cases go over (PLACER_* defaults)."""

    max_body_bytes: int = 10_000_000
    max_json_depth: int = 32
    max_ops: int = 5000
    max_edges: int = 50_000
    max_devices: int = 256
    max_time_limit_s: float = 600.0
    max_threads: int = 4

    @classmethod
    def of_service(cls) -> Limits:
        """The defaults of `api.settings.Settings` (what an unconfigured `placer serve` uses)."""
        from api.settings import Settings

        fields = Settings.model_fields
        return cls(**{name: fields[name].default for name in cls.__dataclass_fields__ if name in fields})


@dataclass(frozen=True)
class Case:
    """One request and its expectation. `expect`: "4xx", "2xx" or "not5xx"."""

    id: str
    endpoint: str  # "POST /v1/placements", as the OpenAPI document names it
    what: str
    method: str
    target: str
    body: bytes = b""
    headers: dict[str, str | None] = field(default_factory=dict)
    expect: str = "4xx"
    fast: bool = False  # over a documented size: the answer must come within FAST_S
    code_not: tuple[str, ...] = ()  # error codes that would be wrong
    detail_has: tuple[str, ...] = ()  # words the detail must contain (case-insensitive), any of them
    chunked: bool = False
    raw: bytes | None = None  # the whole request as bytes (bad request line, no Host)
    auth: bool = True  # send the campaign's API key
    needs_key: bool = False  # only meaningful when the service has an API key
    alt_valid_false: str | None = None  # also accept 200 valid:false with a violation naming this
    keepalive: bool = True  # check the connection after the answer (not when the body was never sent in full)


def judge(case: Case, status: int | None, error: str | None, elapsed_s: float, body: Any,
          keepalive: str | None) -> list[str]:
    """Why the answer is wrong (empty: it is right)."""
    if error is not None:
        return [f"no answer: {error}"]
    assert status is not None
    problems = []
    detail = str(body.get("detail", "")) if isinstance(body, dict) else ""
    code = body.get("code") if isinstance(body, dict) else None
    alt = (case.alt_valid_false is not None and status == 200 and isinstance(body, dict)
           and body.get("valid") is False
           and any(case.alt_valid_false in v and "overlap" not in v for v in body.get("violations", [])))
    ok = {"4xx": 400 <= status < 500, "2xx": 200 <= status < 300, "not5xx": status < 500}[case.expect]
    if status >= 500:
        problems.append(f"server error {status}")
    elif not ok and not alt:
        problems.append(f"expected {case.expect}, got {status}")
    if case.fast and elapsed_s > FAST_S:
        problems.append(f"over a documented limit but answered after {elapsed_s:.2f} s (> {FAST_S:g} s)")
    if code in case.code_not:
        problems.append(f"wrong code {code!r}")
    if case.detail_has and 400 <= status < 500 and not any(w.lower() in detail.lower() for w in case.detail_has):
        problems.append(f"detail does not mention {' or '.join(map(repr, case.detail_has))}")
    if keepalive == "broken":
        problems.append("the keep-alive connection broke after the answer")
    return problems


# --------------------------------------------------------------------------- documents

GRAPH: dict[str, Any] = {
    "format": "placer.graph/v1", "name": "diamond",
    "ops": [{"id": "a", "time_ms": 1.0}, {"id": "b", "time_ms": 4.0}, {"id": "c", "time_ms": 4.0},
            {"id": "d", "time_ms": 1.0}],
    "edges": [{"src": "a", "dst": "b", "bytes": 25_000_000}, {"src": "a", "dst": "c", "bytes": 25_000_000},
              {"src": "b", "dst": "d", "bytes": 25_000_000}, {"src": "c", "dst": "d", "bytes": 25_000_000}],
}
HARDWARE: dict[str, Any] = {
    "format": "placer.hardware/v1", "name": "two-gpus",
    "devices": [{"id": "gpu0", "memory_bytes": 16_000_000_000}, {"id": "gpu1", "memory_bytes": 16_000_000_000}],
    "links": [{"a": "gpu0", "b": "gpu1", "bandwidth_gb_per_s": 25.0, "latency_us": 5.0}],
}
RESULT: dict[str, Any] = {  # the diamond on gpu0 alone: valid
    "format": "placer.result/v1", "status": "feasible", "solver": "manual", "makespan_ms": 10.0,
    "placement": {"a": "gpu0", "b": "gpu0", "c": "gpu0", "d": "gpu0"},
    "schedule": [{"op": "a", "device": "gpu0", "start_ms": 0.0, "end_ms": 1.0},
                 {"op": "b", "device": "gpu0", "start_ms": 1.0, "end_ms": 5.0},
                 {"op": "c", "device": "gpu0", "start_ms": 5.0, "end_ms": 9.0},
                 {"op": "d", "device": "gpu0", "start_ms": 9.0, "end_ms": 10.0}],
}
PLACEMENT = {"graph": GRAPH, "hardware": HARDWARE, "options": {"solver": "heft", "time_limit_s": 1}}
SIMULATION = {"graph": GRAPH, "hardware": HARDWARE, "placement": {"a": "gpu0", "b": "gpu0", "c": "gpu1", "d": "gpu0"}}
VALIDATION = {"graph": GRAPH, "hardware": HARDWARE, "result": RESULT}
CROSSOVER = {"format": "placer.crossover/v1", "name": "xo", "devices": [1, 2, 4, 8],
             "epochs": {"by_width": {"1": 1.0, "8": 1.2}}, "mp_speedup": {"2": 1.5}}
ENGINE = {"graph": {"ops": [{"id": "a", "time_ms": 1}, {"id": "b", "time_ms": 4}],
                    "edges": [{"src": "a", "dst": "b", "bytes": 1000}]},
          "hardware": "dgx1_v100", "m": [2], "time_limit_s": 1}

RAW = "__raw_token__"
HUGE_INT = "1" + "0" * 400  # 10^400: a valid JSON integer, no 64-bit type holds it
TWO_MB = "x" * 2_000_000


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def _drop(doc: Any, path: tuple[Any, ...]) -> Any:
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return doc


def _dump(doc: Any) -> bytes:
    return json.dumps(doc).encode()


def _raw(doc: Any, path: tuple[Any, ...], token: str) -> bytes:
    """`doc` with the value at `path` replaced by the literal JSON text `token`."""
    return json.dumps(_set(doc, path, RAW)).replace(json.dumps(RAW), token, 1).encode()


@dataclass(frozen=True)
class _Endpoint:
    name: str
    path: str
    doc: dict[str, Any]
    number: tuple[Any, ...]  # a float field
    integer: tuple[Any, ...]  # an int field
    text: tuple[Any, ...]  # a free string field
    required: tuple[str, ...]
    obj: str  # a required object field


_POSTS = (
    _Endpoint("place", "/v1/placements", PLACEMENT, ("options", "time_limit_s"), ("graph", "edges", 0, "bytes"),
              ("graph", "name"), ("graph", "hardware"), "graph"),
    _Endpoint("sim", "/v1/simulations", SIMULATION, ("graph", "ops", 0, "time_ms"), ("graph", "edges", 0, "bytes"),
              ("graph", "name"), ("graph", "hardware", "placement"), "graph"),
    _Endpoint("val", "/v1/validations", VALIDATION, ("result", "makespan_ms"), ("graph", "edges", 1, "bytes"),
              ("hardware", "name"), ("graph", "hardware", "result"), "result"),
    _Endpoint("xo", "/v1/crossover", CROSSOVER, ("epochs", "by_width", "8"), ("devices", 0), ("name",),
              ("devices", "epochs", "mp_speedup"), "epochs"),
)


def _generic(ep: _Endpoint, limits: Limits) -> list[Case]:
    """The same abuse on every POST endpoint."""
    endpoint = f"POST {ep.path}"
    text = json.dumps(ep.doc)
    over = limits.max_body_bytes + 1000
    padded = b'{"pad": "' + b"x" * over + b'"}'

    def case(tag: str, what: str, body: bytes, **kw: Any) -> Case:
        return Case(f"{ep.name}.{tag}", endpoint, what, "POST", ep.path, body, **kw)

    cases = [
        case("json-truncated", "JSON cut off mid-document", text[:-7].encode()),
        case("json-trailing", "valid JSON followed by garbage", (text + " trailing").encode()),
        case("json-empty", "empty body (Content-Length: 0)", b""),
        case("json-array", "a JSON array instead of an object", f"[{text}]".encode()),
        case("json-null", "the JSON value null", b"null"),
        case("json-string", "a JSON string", b'"graph"'),
        case("json-single-quotes", "single-quoted keys (not JSON)", text.replace('"', "'").encode()),
        case("nan", "NaN as a number", _raw(ep.doc, ep.number, "NaN")),
        case("infinity", "Infinity as a number", _raw(ep.doc, ep.number, "Infinity")),
        case("minus-infinity", "-Infinity as a number", _raw(ep.doc, ep.number, "-Infinity")),
        case("float-1e400", "1e400 (overflows a double)", _raw(ep.doc, ep.number, "1e400")),
        case("int-10e400", "10^400 in an integer field", _raw(ep.doc, ep.integer, HUGE_INT)),
        case("string-for-number", 'a string for a number ("10")', _dump(_set(ep.doc, ep.number, "10"))),
        case("bool-for-number", "true for a number", _dump(_set(ep.doc, ep.number, True))),
        case("deep-100k", "100,000 nested arrays", b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
             fast=True),
        case("deep-40", f"40 nested objects (limit {limits.max_json_depth})",
             ('{"graph": ' + '{"a": ' * 40 + "1" + "}" * 40 + "}").encode(), fast=True),
        case("duplicate-key", f"the key {ep.required[0]!r} twice (JSON parsers disagree on which wins)",
             text.replace("{", "{" + json.dumps(ep.required[0]) + ": "
                          + json.dumps(ep.doc[ep.required[0]]) + ", ", 1).encode()),
        case("unknown-field", "an unknown top-level field", _dump({**ep.doc, "colour": "red"})),
        case("null-object", f"null for {ep.obj!r}", _dump(_set(ep.doc, (ep.obj,), None))),
        case("list-for-object", f"a list for {ep.obj!r}", _dump(_set(ep.doc, (ep.obj,), [1, 2]))),
        case("ctype-text", "Content-Type: text/plain", text.encode(), headers={"content-type": "text/plain"}),
        case("ctype-form", "Content-Type: application/x-www-form-urlencoded", b"graph=1&hardware=2",
             headers={"content-type": "application/x-www-form-urlencoded"}),
        case("ctype-multipart", "Content-Type: multipart/form-data", b"--b\r\n\r\nx\r\n--b--\r\n",
             headers={"content-type": "multipart/form-data; boundary=b"}),
        case("utf8-invalid", "bytes that are not UTF-8", text.encode()[:-2] + b'\xff\xfe"}'),
        case("lone-surrogate", 'a lone surrogate "a\\ud800" in a string',
             _raw(ep.doc, ep.text, '"a\\ud800"')),
        case("name-2mb", "a 2 MB string", _dump(_set(ep.doc, ep.text, TWO_MB)), fast=True),
        case("body-over-limit", f"{over:,} bytes with Content-Length (limit {limits.max_body_bytes:,})", padded,
             fast=True),
        case("body-over-limit-chunked", f"{over:,} bytes, chunked, no Content-Length", padded, chunked=True,
             fast=True),
        case("length-declared-over", "Content-Length over the limit, 2-byte body", b"{}",
             headers={"content-length": str(over)}, fast=True, keepalive=False),
        case("length-not-a-number", "Content-Length: abc", b"{}", headers={"content-length": "abc"},
             keepalive=False),
        case("bad-host", "Host: attacker.example (DNS rebinding)", text.encode(),
             headers={"host": "attacker.example"}),
        case("no-key", "no Authorization header", text.encode(), auth=False, needs_key=True),
    ]
    for name in ep.required:
        cases.append(case(f"missing-{name}", f"required field {name!r} missing", _dump(_drop(ep.doc, (name,)))))
    return cases


def _graph_cases(prefix: str, path: str, base: dict[str, Any], limits: Limits) -> list[Case]:
    """Broken graphs, posted inside `base` (whose "graph" is replaced)."""
    endpoint = f"POST {path}"

    def case(tag: str, what: str, graph: dict[str, Any] | bytes, **kw: Any) -> Case:
        body = graph if isinstance(graph, bytes) else _dump({**base, "graph": graph})
        return Case(f"{prefix}.{tag}", endpoint, what, "POST", path, body, **kw)

    g = GRAPH
    chain = {"ops": [{"id": f"o{i}", "time_ms": 1} for i in range(limits.max_ops + 1)],
             "edges": [{"src": f"o{i}", "dst": f"o{i + 1}"} for i in range(limits.max_ops)]}
    n = 320  # 320 ops, every pair i < j with j - i <= ... : more edges than the limit
    dense_edges = [{"src": f"o{i}", "dst": f"o{j}"} for i in range(n) for j in range(i + 1, n)]
    dense = {"ops": [{"id": f"o{i}", "time_ms": 1} for i in range(n)],
             "edges": dense_edges[:limits.max_edges + 1]}
    return [
        case("edge-unknown-src", "an edge from an unknown op", _set(g, ("edges", 0, "src"), "zz"), detail_has=("zz",)),
        case("edge-unknown-dst", "an edge to an unknown op", _set(g, ("edges", 3, "dst"), "zz"), detail_has=("zz",)),
        case("cycle", "a cycle a -> b -> a", _set(g, ("edges",), [*g["edges"], {"src": "b", "dst": "a"}]),
             detail_has=("cycle",)),
        case("self-loop", "an edge from an op to itself", _set(g, ("edges",), [{"src": "a", "dst": "a"}])),
        case("duplicate-edge", "the same edge twice", _set(g, ("edges",), [*g["edges"], g["edges"][0]])),
        case("duplicate-op", "two ops with id 'a'", _set(g, ("ops",), [*g["ops"], {"id": "a", "time_ms": 1}])),
        case("no-ops", "an empty op list", _set(g, ("ops",), []), ),
        case("op-no-cost", "an op with neither time_ms nor flops", _set(g, ("ops", 0), {"id": "a"})),
        case("op-negative-time", "time_ms -1", _set(g, ("ops", 0, "time_ms"), -1)),
        case("op-time-string", 'time_ms "1"', _set(g, ("ops", 0, "time_ms"), "1")),
        case("op-unknown-field", "an unknown op field", _set(g, ("ops", 0, "colour"), "red")),
        case("op-id-empty", "an empty op id", _set(g, ("ops", 3, "id"), "")),
        case("op-id-257", "a 257-character op id", _set(g, ("ops", 3, "id"), "d" * 257)),
        case("op-id-surrogate", 'op id "a\\ud800" (lone surrogate), edges to it',
             _dump({**base, "graph": g}).replace(b'"a"', b'"a\\ud800"')),
        case("op-memory-negative", "memory_bytes -1", _set(g, ("ops", 0, "memory_bytes"), -1)),
        case("op-memory-10e400", "memory_bytes 10^400", _raw({**base, "graph": g}, ("graph", "ops", 0, "memory_bytes"),
                                                            HUGE_INT)),
        case("op-kind-2mb", "a 2 MB op kind", _set(g, ("ops", 0, "kind"), TWO_MB), fast=True),
        case("edge-bytes-10e400", "edge bytes 10^400", _raw({**base, "graph": g}, ("graph", "edges", 2, "bytes"),
                                                           HUGE_INT), detail_has=("edge", "b -> d", "edges[2]")),
        case("edge-bytes-negative", "edge bytes -5", _set(g, ("edges", 0, "bytes"), -5)),
        case("edge-bytes-fraction", "edge bytes 1.5", _set(g, ("edges", 0, "bytes"), 1.5)),
        case("edge-bytes-string", 'edge bytes "1000"', _set(g, ("edges", 0, "bytes"), "1000")),
        case("pin-unknown-device", "an op pinned to unknown device gpu9", _set(g, ("ops", 0, "device"), "gpu9"),
             detail_has=("gpu9",)),
        case("group-two-pins", "a group pinned to two devices",
             _set(_set(g, ("ops", 0), {"id": "a", "time_ms": 1, "group": "g", "device": "gpu0"}),
                  ("ops", 1), {"id": "b", "time_ms": 4, "group": "g", "device": "gpu1"})),
        case("group-pin-unknown", "a group whose op is pinned to unknown device gpu7",
             _set(_set(g, ("ops", 0), {"id": "a", "time_ms": 1, "group": "g", "device": "gpu7"}),
                  ("ops", 1), {"id": "b", "time_ms": 4, "group": "g"}), detail_has=("gpu7",)),
        case("format-v2", "format placer.graph/v2", _set(g, ("format",), "placer.graph/v2")),
        case("ops-over-limit", f"{limits.max_ops + 1} ops (limit {limits.max_ops})", chain, fast=True),
        case("edges-over-limit", f"{limits.max_edges + 1} edges (limit {limits.max_edges})", dense, fast=True),
    ]


def _hardware_cases(prefix: str, path: str, base: dict[str, Any], limits: Limits) -> list[Case]:
    endpoint = f"POST {path}"

    def case(tag: str, what: str, hardware: Any, **kw: Any) -> Case:
        return Case(f"{prefix}.{tag}", endpoint, what, "POST", path, _dump({**base, "hardware": hardware}), **kw)

    h = HARDWARE
    n = limits.max_devices + 1
    line = {"devices": [{"id": f"g{i}"} for i in range(n)],
            "links": [{"a": f"g{i}", "b": f"g{i + 1}", "bandwidth_gb_per_s": 10} for i in range(n - 1)]}
    return [
        case("preset-unknown", "an unknown hardware preset", "no_such_machine", detail_has=("no_such_machine",)),
        case("preset-traversal", "preset name ../../etc/passwd", "../../etc/passwd"),
        case("preset-2mb", "a 2 MB preset name", TWO_MB, fast=True),
        case("link-unknown-device", "a link to unknown device gpu5", _set(h, ("links", 0, "b"), "gpu5"),
             detail_has=("gpu5",)),
        case("disconnected", "two devices, no link", _set(h, ("links",), [])),
        case("bandwidth-zero", "bandwidth 0", _set(h, ("links", 0, "bandwidth_gb_per_s"), 0)),
        case("latency-negative", "latency -1", _set(h, ("links", 0, "latency_us"), -1)),
        case("no-devices", "no devices", _set(h, ("devices",), [])),
        case("duplicate-device", "device gpu0 twice", _set(h, ("devices", 1, "id"), "gpu0")),
        case("device-kind-2mb", "a 2 MB device kind", _set(h, ("devices", 0, "kind"), TWO_MB), fast=True),
        Case(f"{prefix}.device-memory-10e400", endpoint, "device memory 10^400", "POST", path,
             _raw({**base, "hardware": h}, ("hardware", "devices", 0, "memory_bytes"), HUGE_INT)),
        case("devices-over-limit", f"{n} devices (limit {limits.max_devices})", line, fast=True),
    ]


def _placement_cases() -> list[Case]:
    path, endpoint = "/v1/placements", "POST /v1/placements"

    def case(tag: str, what: str, options: Any, **kw: Any) -> Case:
        body = options if isinstance(options, bytes) else _dump({**PLACEMENT, "options": options})
        return Case(f"place.{tag}", endpoint, what, "POST", path, body, **kw)

    o = PLACEMENT["options"]
    return [
        case("time-limit-string", 'time_limit_s "10"', {**o, "time_limit_s": "10"}),
        case("async-yes", 'async "yes"', {**o, "async": "yes"}),
        case("threads-string", 'threads "2"', {**o, "threads": "2"}),
        case("time-limit-zero", "time_limit_s 0", {**o, "time_limit_s": 0}),
        case("time-limit-negative", "time_limit_s -1", {**o, "time_limit_s": -1}),
        case("time-limit-over", "time_limit_s 1e9 (over PLACER_MAX_TIME_LIMIT_S)", {**o, "time_limit_s": 1e9},
             fast=True),
        case("threads-over", "threads 1000 (over PLACER_MAX_THREADS)", {**o, "threads": 1000}, fast=True),
        case("threads-zero", "threads 0", {**o, "threads": 0}),
        case("solver-unknown", "solver gurobi", {**o, "solver": "gurobi"}),
        case("routing-unknown", "routing magic", {**o, "routing": "magic"}),
        case("seed-10e400", "seed 10^400", _raw(PLACEMENT, ("options", "seed"), HUGE_INT)),
        case("relative-gap-nan", "relative_gap NaN", _raw(PLACEMENT, ("options", "relative_gap"), "NaN")),
        case("options-unknown", "an unknown option", {**o, "turbo": True}),
        case("memory-too-big", "an op larger than every device",
             _dump({**PLACEMENT, "graph": _set(GRAPH, ("ops", 0, "memory_bytes"), 10**12 * 64)}),
             detail_has=("needs", "memory", "holds")),
        case("flops-no-rate", "an op costed in flops on devices without peak_tflops",
             _dump({**PLACEMENT, "graph": _set(GRAPH, ("ops", 0), {"id": "a", "flops": 1e9})})),
    ]


def _simulation_cases() -> list[Case]:
    path, endpoint = "/v1/simulations", "POST /v1/simulations"

    def case(tag: str, what: str, doc: dict[str, Any], **kw: Any) -> Case:
        return Case(f"sim.{tag}", endpoint, what, "POST", path, _dump(doc), **kw)

    s, p = SIMULATION, SIMULATION["placement"]
    return [
        case("placement-unknown-op", "placement names unknown op zz", {**s, "placement": {**p, "zz": "gpu0"}},
             detail_has=("zz",)),
        case("placement-unknown-device", "placement names unknown device gpu9", {**s, "placement": {**p, "a": "gpu9"}},
             detail_has=("gpu9",)),
        case("placement-missing-op", "placement leaves op d out", {**s, "placement": {k: v for k, v in p.items()
                                                                                     if k != "d"}}),
        case("placement-list", "placement as a list", {**s, "placement": ["gpu0"]}),
        case("placement-and-result", "both placement and result", {**s, "result": RESULT}),
        case("order-unknown-op", "order names unknown op zz", {**s, "order": {"gpu0": ["a", "b", "d", "zz"],
                                                                               "gpu1": ["c"]}}, detail_has=("zz",)),
        case("order-unknown-device", "order names unknown device gpu9",
             {**s, "order": {"gpu0": ["a", "b", "d"], "gpu9": ["c"]}}, detail_has=("gpu9",)),
        case("order-twice", "order lists op a twice", {**s, "order": {"gpu0": ["a", "a", "b", "d"], "gpu1": ["c"]}}),
        case("order-wrong-device", "order puts c on gpu0 where it is not placed",
             {**s, "order": {"gpu0": ["a", "b", "c", "d"]}}),
        case("result-infeasible", "a result with status infeasible", {**{k: v for k, v in s.items() if k != "placement"},
                                                                      "result": {**RESULT, "status": "infeasible"}}),
        case("contention-yes", 'contention "yes"', {**s, "contention": "yes"}),
    ]


def _validation_cases() -> list[Case]:
    path, endpoint = "/v1/validations", "POST /v1/validations"

    def case(tag: str, what: str, result: Any, **kw: Any) -> Case:
        return Case(f"val.{tag}", endpoint, what, "POST", path, _dump({**VALIDATION, "result": result}), **kw)

    r = RESULT
    return [
        case("schedule-unknown-op", "the schedule names unknown op zz (not an 'overlap')",
             _set(r, ("schedule", 3, "op"), "zz"), detail_has=("zz",), alt_valid_false="zz"),
        case("schedule-unknown-device", "the schedule names unknown device gpu9",
             _set(r, ("schedule", 0, "device"), "gpu9"), detail_has=("gpu9",), alt_valid_false="gpu9"),
        case("placement-unknown-device", "the placement names unknown device gpu9",
             _set(r, ("placement", "a"), "gpu9"), detail_has=("gpu9",), alt_valid_false="gpu9"),
        case("status-unknown", "status 'great'", _set(r, ("status",), "great")),
        case("format-wrong", "format placer.result/v9", _set(r, ("format",), "placer.result/v9")),
        case("no-solver", "no solver", _drop(r, ("solver",))),
        case("start-string", 'start_ms "0"', _set(r, ("schedule", 0, "start_ms"), "0")),
        case("schedule-string", "a schedule entry that is a string", _set(r, ("schedule", 0), "a@gpu0")),
        case("solver-2mb", "a 2 MB solver name", _set(r, ("solver",), TWO_MB), fast=True),
    ]


def _crossover_cases() -> list[Case]:
    path, endpoint = "/v1/crossover", "POST /v1/crossover"

    def case(tag: str, what: str, doc: dict[str, Any] | bytes, **kw: Any) -> Case:
        return Case(f"xo.{tag}", endpoint, what, "POST", path, doc if isinstance(doc, bytes) else _dump(doc), **kw)

    x = CROSSOVER
    engine = {**x, "epochs": {"by_width": {"1": 1.0, "8": 1.2}}, "mp_speedup": {"engine": ENGINE}}
    return [
        case("devices-decreasing", "devices not increasing", {**x, "devices": [4, 2]}),
        case("devices-zero", "a device count of 0", {**x, "devices": [0, 1]}),
        case("devices-string", 'a device count "2"', {**x, "devices": [1, "2", 4, 8]}),
        case("devices-empty", "no device counts", {**x, "devices": []}),
        case("epochs-flat", "a flat epochs map (should say by_width or by_global_batch)",
             {**x, "epochs": {"1": 1.0, "8": 1.2}}, detail_has=("by_width",)),
        case("scaling-1.5", "scaling efficiency 1.5", {**x, "scaling_efficiency": 1.5}),
        case("mp-empty", "mp_speedup {}", {**x, "mp_speedup": {}}),
        case("mp-m1", "SU^M for M = 1", {**x, "mp_speedup": {"1": 2.0}}),
        case("advice-fraction", "advice.fraction_of_best 2", {**x, "advice": {"fraction_of_best": 2}}),
        case("ring-bytes-10e400", "ring all-reduce gradient_bytes 10^400",
             _raw({**x, "scaling_efficiency": {"ring_allreduce": {"gradient_bytes": 1, "step_time_ms": 10,
                                                                  "bandwidth_gb_per_s": 10}}},
                  ("scaling_efficiency", "ring_allreduce", "gradient_bytes"), HUGE_INT)),
        case("engine-model-unknown", "engine model no_such_model (a zoo model, not a preset)",
             _set(engine, ("mp_speedup", "engine"), {**{k: v for k, v in ENGINE.items() if k != "graph"},
                                                     "model": "no_such_model"}),
             code_not=("unknown_preset",), detail_has=("no_such_model",)),
        case("engine-preset-unknown", "engine hardware no_such_machine",
             _set(engine, ("mp_speedup", "engine", "hardware"), "no_such_machine"), detail_has=("no_such_machine",)),
        case("engine-file-path", "engine graph given as a server file path",
             _set(engine, ("mp_speedup", "engine", "graph"), "/etc/passwd")),
        case("engine-nine-widths", "engine asked for 9 widths",
             _set(_set(engine, ("mp_speedup", "engine", "m"), list(range(2, 11))), ("devices",),
                  [1, 2, 4, 8]) | {"allow_extrapolation": True}),
        case("engine-time-limit-over", "engine time_limit_s 1e6", _set(engine, ("mp_speedup", "engine", "time_limit_s"),
                                                                       1e6), fast=True),
        case("engine-graph-cycle", "engine graph with a cycle",
             _set(engine, ("mp_speedup", "engine", "graph", "edges"),
                  [{"src": "a", "dst": "b"}, {"src": "b", "dst": "a"}])),
        case("engine-device-ids-unknown", "engine device_ids naming unknown devices",
             _set(engine, ("mp_speedup", "engine", "device_ids"), {"2": ["gpu0", "nope"]}), detail_has=("nope",)),
        case("engine-m-too-wide", "engine M = 16 on an 8-GPU machine",
             _set(_set(engine, ("mp_speedup", "engine", "m"), [16]), ("devices",), [1, 16])
             | {"epochs": {"by_width": {"1": 1.0, "16": 1.2}}}),
    ]


def _get_cases() -> list[Case]:
    def case(cid: str, endpoint: str, what: str, method: str, target: str, **kw: Any) -> Case:
        return Case(cid, endpoint, what, method, target, **kw)

    job, hw, model = "GET /v1/jobs/{job_id}", "GET /v1/hardware-graphs/{name}", "GET /v1/models/{name}"
    return [
        case("job.not-hex", job, "job id 'zzz'", "GET", "/v1/jobs/zzz"),
        case("job.too-long", job, "a 65-digit job id", "GET", "/v1/jobs/" + "a" * 65),
        case("job.unknown", job, "an unknown job id", "GET", "/v1/jobs/deadbeef"),
        case("job.traversal", job, "job id ..%2F..%2Fetc", "GET", "/v1/jobs/..%2F..%2Fetc"),
        case("job.nul", job, "job id with %00", "GET", "/v1/jobs/ab%00cd"),
        case("job.path-10kb", job, "a 10 KB path", "GET", "/v1/jobs/" + "b" * 10_000),
        case("job.delete-unknown", "DELETE /v1/jobs/{job_id}", "cancel an unknown job", "DELETE", "/v1/jobs/deadbeef"),
        case("job.delete-not-hex", "DELETE /v1/jobs/{job_id}", "cancel job 'xyz!'", "DELETE", "/v1/jobs/xyz!"),
        case("job.delete-with-body", "DELETE /v1/jobs/{job_id}", "cancel an unknown job with a broken JSON body",
             "DELETE", "/v1/jobs/deadbeef", body=b"{oops", headers={"content-type": "application/json"}),
        case("job.patch", "DELETE /v1/jobs/{job_id}", "PATCH on a job", "PATCH", "/v1/jobs/deadbeef", body=b"{}"),
        case("hw.unknown", hw, "an unknown preset", "GET", "/v1/hardware-graphs/no_such_machine"),
        case("hw.traversal", hw, "preset ..%2F..%2Fetc%2Fpasswd", "GET", "/v1/hardware-graphs/..%2F..%2Fetc%2Fpasswd"),
        case("hw.long-name", hw, "a 129-character preset name", "GET", "/v1/hardware-graphs/" + "h" * 129),
        case("hw.nul", hw, "preset name with %00", "GET", "/v1/hardware-graphs/dgx1%00"),
        case("hw.list-post", "GET /v1/hardware-graphs", "POST on the preset list", "POST", "/v1/hardware-graphs",
             body=b"{}"),
        case("hw.list-bad-host", "GET /v1/hardware-graphs", "Host: attacker.example (DNS rebinding)", "GET",
             "/v1/hardware-graphs", headers={"host": "attacker.example"}),
        case("hw.list-bad-host-port", "GET /v1/hardware-graphs", "Host: 127.0.0.1.nip.io:8000", "GET",
             "/v1/hardware-graphs", headers={"host": "127.0.0.1.nip.io:8000"}),
        case("models.batch-zero", "GET /v1/models", "batch=0", "GET", "/v1/models?batch=0"),
        case("models.batch-negative", "GET /v1/models", "batch=-1", "GET", "/v1/models?batch=-1"),
        case("models.batch-text", "GET /v1/models", "batch=abc", "GET", "/v1/models?batch=abc"),
        case("models.batch-10e400", "GET /v1/models", "batch=10^400", "GET", f"/v1/models?batch={HUGE_INT}"),
        case("models.batch-float", "GET /v1/models", "batch=1e400", "GET", "/v1/models?batch=1e400"),
        case("models.batch-over", "GET /v1/models", "batch=65537 (limit 65536)", "GET", "/v1/models?batch=65537"),
        case("models.batch-empty", "GET /v1/models", "batch= (empty)", "GET", "/v1/models?batch="),
        case("model.unknown", model, "an unknown zoo model (code must not be unknown_preset)", "GET",
             "/v1/models/no_such_model", code_not=("unknown_preset",), detail_has=("no_such_model",)),
        case("model.batch-zero", model, "resnet50 with batch=0", "GET", "/v1/models/resnet50?batch=0"),
        case("model.long-name", model, "a 129-character model name", "GET", "/v1/models/" + "m" * 129),
        case("model.batch-10e400", model, "resnet50 with batch=10^400", "GET", f"/v1/models/resnet50?batch={HUGE_INT}"),
        case("health.post", "GET /healthz", "POST /healthz", "POST", "/healthz", body=b"{}"),
        case("health.delete", "GET /healthz", "DELETE /healthz", "DELETE", "/healthz"),
        case("metrics.post", "GET /metrics", "POST /metrics", "POST", "/metrics", body=b"{}"),
        case("metrics.no-key", "GET /metrics", "no Authorization header", "GET", "/metrics", auth=False,
             needs_key=True),
        case("openapi.no-key", "GET /openapi.json", "no Authorization header (open by design, as /docs: any "
             "non-5xx)", "GET", "/openapi.json", auth=False, needs_key=True, expect="not5xx"),
        case("openapi.post", "GET /openapi.json", "POST /openapi.json", "POST", "/openapi.json", body=b"{}"),
        case("place.get", "POST /v1/placements", "GET on /v1/placements", "GET", "/v1/placements"),
        case("place.put", "POST /v1/placements", "PUT on /v1/placements", "PUT", "/v1/placements", body=b"{}"),
        case("unknown-path", "(none)", "an unknown path", "GET", "/v1/nothing-here"),
        case("http.garbage", "(none)", "a request line that is not HTTP", "GET", "/",
             raw=b"HELLO THERE\r\n\r\n"),
        case("http.no-host", "(none)", "HTTP/1.1 without a Host header", "GET", "/healthz",
             raw=b"GET /v1/hardware-graphs HTTP/1.1\r\n\r\n"),
        case("http.header-100kb", "GET /v1/hardware-graphs", "a 100 KB header (no documented limit: any non-5xx)",
             "GET", "/v1/hardware-graphs", headers={"x-padding": "p" * 100_000}, expect="not5xx"),
    ]


def _auth_cases() -> list[Case]:
    endpoint, target = "GET /v1/hardware-graphs", "/v1/hardware-graphs"

    def case(tag: str, what: str, value: str | None, expect: str = "4xx") -> Case:
        return Case(f"auth.{tag}", endpoint, what, "GET", target, headers={"authorization": value}, expect=expect,
                    needs_key=True)

    return [
        case("missing", "no Authorization header", None),
        case("wrong-key", "a wrong key", "Bearer not-the-key"),
        case("scheme-only", "'Bearer' and no key", "Bearer"),
        case("basic", "Basic credentials", "Basic dXNlcjpwYXNz"),
        case("non-ascii", "a key with non-ASCII bytes", "Bearer k\xe9y"),
        case("huge", "a 60 KB Authorization header", "Bearer " + "k" * 60_000),
        case("lowercase-scheme", "the scheme as 'bearer' (schemes are case-insensitive: must be accepted)",
             "bearer {key}", expect="2xx"),
        case("uppercase-scheme", "the scheme as 'BEARER' (must be accepted)", "BEARER {key}", expect="2xx"),
    ]


def malformed_cases(limits: Limits | None = None, api_key: str | None = None) -> list[Case]:
    """Every malformed or oversized case; `api_key` fills `{key}` and drops the cases that need
    a key when there is none."""
    limits = limits or Limits()
    cases: list[Case] = []
    for ep in _POSTS:
        cases += _generic(ep, limits)
    cases += _graph_cases("place.graph", "/v1/placements", PLACEMENT, limits)
    cases += _graph_cases("sim.graph", "/v1/simulations", SIMULATION, limits)[:8]
    cases += _hardware_cases("place.hw", "/v1/placements", PLACEMENT, limits)
    cases += _hardware_cases("sim.hw", "/v1/simulations", SIMULATION, limits)[:4]
    cases += _placement_cases() + _simulation_cases() + _validation_cases() + _crossover_cases()
    cases += _get_cases() + _auth_cases()
    out = []
    for c in cases:
        if c.needs_key and api_key is None:
            continue
        if api_key is not None and "{key}" in str(c.headers.get("authorization")):
            c = Case(**{**c.__dict__, "headers": {**c.headers, "authorization":
                                                   str(c.headers["authorization"]).replace("{key}", api_key)}})
        out.append(c)
    out.sort(key=lambda c: c.expect != "2xx")  # valid keys first: before any rate limit on failed keys
    ids = [c.id for c in out]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    return out


def control_cases() -> list[Case]:
    """Valid requests: the service must answer these 2xx (else the campaign's bodies are wrong)."""
    return [Case(f"ok.{ep.name}", f"POST {ep.path}", "the valid base document", "POST", ep.path, _dump(ep.doc),
                 expect="2xx") for ep in _POSTS]

