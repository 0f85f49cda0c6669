"""The one error tree of placer, its solver back ends and its service.

Statuses (optimal, feasible, infeasible, no_solution) are answers, not errors.
Exceptions mean failure: bad input, a missing or failing back end, a solver answer that
our own checks reject, or a service that cannot take the request. Every class has a
stable `code` (the `code` of an HTTP error body, the CLI's message): `placer.cli` maps the
tree to exit codes and `api.errors` to HTTP statuses, one table each.

    PlacerError
    ├── InputError (ValueError) ── InvalidGraphError, InvalidHardwareError, UnknownPresetError, ...
    ├── SolutionCheckError
    ├── SolverError (RuntimeError) ── SolverUnavailableError ── ExecutorUnavailableError
    ├── ServiceError ── the service's own (api.errors, api.pool, api.store)
    └── ServiceCallError ── ServiceInputError: a service's error answer, in `placer.client`
"""
from __future__ import annotations

__all__ = [
    "DuplicateKeyError",
    "ExecutorUnavailableError",
    "InputError",
    "InvalidGraphError",
    "InvalidHardwareError",
    "InvalidJsonError",
    "InvalidTextError",
    "JsonTooDeepError",
    "PlacerError",
    "ServiceCallError",
    "ServiceError",
    "ServiceInputError",
    "SolutionCheckError",
    "SolverError",
    "SolverUnavailableError",
    "UnknownModelError",
    "UnknownPresetError",
    "error_classes",
]


class PlacerError(Exception):
    """Root of every error the placer raises on purpose."""

    code = "placer_error"


class InputError(PlacerError, ValueError):
    """The input is malformed or contradictory; the message names the field and the object."""

    code = "invalid_input"


class InvalidGraphError(InputError):
    """A dataflow graph breaks a rule of placer.graph/v1 (ids, edges, cycles, numbers)."""

    code = "invalid_graph"


class InvalidHardwareError(InputError):
    """A hardware graph breaks a rule of placer.hardware/v1 (ids, links, connectivity)."""

    code = "invalid_hardware"


class UnknownPresetError(InputError):
    """A hardware preset name that does not exist."""

    code = "unknown_preset"


class UnknownModelError(InputError):
    """A zoo model name that does not exist."""

    code = "unknown_model"


class InvalidJsonError(InputError):
    """A document is not JSON, or JSON that Python would read wrongly (placer.jsondoc)."""

    code = "invalid_json"


class JsonTooDeepError(InvalidJsonError):
    """JSON nested deeper than the reader accepts."""

    code = "json_too_deep"


class DuplicateKeyError(InvalidJsonError):
    """A JSON object repeats a key: which value was meant is ambiguous, so neither is kept."""

    code = "duplicate_key"


class InvalidTextError(InvalidJsonError):
    """A JSON string (or key) is not valid Unicode text (a lone surrogate such as \\ud800)."""

    code = "invalid_text"


class SolutionCheckError(PlacerError):
    """A solver answer failed validation: a bug in a formulation or back end, never shipped."""

    code = "solution_check"


class ServiceCallError(PlacerError):
    """A placer service refused or failed a request of `placer.client`: `status` is the HTTP
    status (None when the service could not be reached or a wait ran out), `code` and `detail`
    the service's own, `body` its whole error answer."""

    code = "service_call_failed"  # the class's; an instance carries the service's code

    def __init__(self, detail: str, status: int | None = None, code: str | None = None,
                 body: dict | None = None):
        super().__init__(detail)
        self.detail = detail
        self.status = status
        if code is not None:
            self.code = code
        self.body = body or {}


class ServiceInputError(ServiceCallError, InputError):
    """The service refused the request's input (4xx; a failed job whose error is the input's)."""

    code = "service_input_refused"  # the class's; an instance carries the service's code


class SolverError(PlacerError, RuntimeError):
    """A back end failed (crash, invalid model, status we cannot map): a bug, not an answer."""

    code = "backend_error"


class SolverUnavailableError(SolverError):
    """The solver back end is unknown, or its library or binary is not installed here."""

    code = "backend_unavailable"


class ExecutorUnavailableError(SolverUnavailableError):
    """Where solves were asked to run cannot be used: the `ray` extra is not installed, or
    the Ray cluster cannot be reached."""

    code = "executor_unavailable"


class ServiceError(PlacerError):
    """Root of the errors the service itself raises (queue full, job not found, ...)."""

    code = "service_error"


def error_classes() -> dict[str, type[PlacerError]]:
    """Every class of the tree loaded so far, by code (the service's classes once `api.errors`
    is imported): how an error that crossed a process boundary gets its class back."""
    found: dict[str, type[PlacerError]] = {}
    todo: list[type[PlacerError]] = [PlacerError]
    while todo:
        cls = todo.pop(0)
        found.setdefault(cls.code, cls)
        todo.extend(cls.__subclasses__())
    return found
