"""The budgets the paper is explored with, typed: runs per scope of a pass (:class:`RunBudget`)
and the lag-bounded third pass (:class:`LagBudget`).  Apart from the results so that the
settings can name them without importing what the results hold."""

from __future__ import annotations

from dataclasses import dataclass

from zerorename_model.engine.json_values import json_int, json_object
from zerorename_model.experiments.explored import JsonObject


def json_number(value: object) -> float:
    """A JSON number as the file has it (an integer stays one, so it is written back the same)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a JSON number, got {type(value).__name__}")
    return value


def _optional_number(value: object) -> float | None:
    return None if value is None else json_number(value)


@dataclass(frozen=True)
class RunBudget:
    """Runs per scope of a pass (``seconds`` None: no wall-clock limit, so the results do not
    depend on the machine's speed; ``hypothesis_examples`` 0: no sampling)."""

    max_runs: int
    seconds: float | None = None
    hypothesis_examples: int = 0

    def to_json(self) -> JsonObject:
        return {"max_runs": self.max_runs, "seconds": self.seconds,
                "hypothesis_examples": self.hypothesis_examples}

    @classmethod
    def from_json(cls, raw: object) -> RunBudget:
        obj = json_object(raw)
        return cls(json_int(obj["max_runs"]), _optional_number(obj["seconds"]),
                   json_int(obj["hypothesis_examples"]))


@dataclass(frozen=True)
class LagBudget:
    """The third pass: scopes enumerated with at most ``max_lag`` visibility events pending."""

    max_lag: int
    max_runs: int

    def to_json(self) -> JsonObject:
        return {"max_lag": self.max_lag, "max_runs": self.max_runs}

    @classmethod
    def from_json(cls, raw: object) -> LagBudget:
        obj = json_object(raw)
        return cls(json_int(obj["max_lag"]), json_int(obj["max_runs"]))
