"""What a run cost: requests, retries, cache hits, tokens, latency, error rows and wall time.

Computed from what the store holds (every stored trajectory's emissions, and the ``sessions``
meta row), never from counters kept while running: a run resumed three times is summed from
the cases it stored, each once (a retried error row is replaced by its retry, so its
requests are not counted twice), and the summary of a finished run is the same whether it
is printed at the end of ``run`` or by ``report`` a week later.

Definitions (docs/evidence.md, "Run summary"):

* ``requests``: model calls answered, one per stored emission; text the harness put in the
  model's place (``Emission.injected``) is not a call. Cache hits are included;
* ``cache_hits``: of those, answers from the response cache (``Emission.cached``);
* ``retries``: failed attempts before an answer, by kind (``rate_limit``, ``server``,
  ``timeout``, ``connection``, ``malformed``); attempts behind a case that ended as an error
  row are not stored, so not counted;
* ``input_tokens`` / ``output_tokens``: the provider's usage of the requests not answered from
  the cache (a hit paid nothing this time); ``None`` when no emission reported usage;
* ``latency_median_s`` / ``latency_p95_s``: of the requests not answered from the cache that
  have a latency (linear interpolation between order statistics, as numpy's default);
* ``error_rows``: cases stored as infrastructure errors (retried on resume);
* ``wall_s``: the sum of the sessions' wall times (up to each session's last stored case
  when it was killed); ``sessions``: how many writing invocations were recorded.

Why two readers and one sum: the summary at the end of ``run`` reads every stored case, and
rebuilding each trajectory as pydantic models only to read five fields of each emission cost
about 0.4 ms per request (issue 16, bench/README.md "Fourth pass"). So the store's rows are read
as plain JSON (:meth:`~tooldiag.store.RunStore.iter_stored_trajectories`) and
:func:`stored_emission_figures` takes each emission's figures from the dicts, with the model's
defaults for fields a store written before them lacks; :func:`model_emission_figures` takes the
same figures from trajectories already read as models (the report). Both feed the one sum,
:func:`_summarize`, so the two paths cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tooldiag.trajectory import CaseTrajectory


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0..100) of ``values`` by linear interpolation; ``None`` when empty."""
    if not values:
        return None
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile must be within 0..100, got {q}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass
class UsageSummary:
    """What a run cost (module docstring for every field)."""

    cases: int = 0
    requests: int = 0
    cache_hits: int = 0
    retries: dict[str, int] = field(default_factory=dict)
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_median_s: float | None = None
    latency_p95_s: float | None = None
    error_rows: int = 0
    wall_s: float = 0.0
    sessions: int = 0

    @property
    def retry_count(self) -> int:
        return sum(self.retries.values())

    def to_json(self) -> dict[str, Any]:
        """The ``"usage"`` object of the report JSON."""
        return {
            "cases": self.cases,
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "retries": dict(sorted(self.retries.items())),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency_median_s": _round(self.latency_median_s),
            "latency_p95_s": _round(self.latency_p95_s),
            "error_rows": self.error_rows,
            "wall_s": _round(self.wall_s),
            "sessions": self.sessions,
        }

    def lines(self) -> list[str]:
        """The summary for people, a few short lines (the end of ``run``, the report's "Run summary")."""
        retries = ", ".join(f"{kind} {count}" for kind, count in sorted(self.retries.items())) or "none"
        tokens = (
            "not reported"
            if self.input_tokens is None and self.output_tokens is None
            else f"{_count(self.input_tokens)} in / {_count(self.output_tokens)} out"
        )
        latency = (
            "n/a"
            if self.latency_median_s is None
            else f"median {self.latency_median_s:.2f}s, p95 {_seconds(self.latency_p95_s)}"
        )
        return [
            f"requests {self.requests} ({self.cache_hits} from the cache), retries {self.retry_count} ({retries})",
            f"tokens {tokens}; latency {latency}",
            f"{self.cases} cases stored, {self.error_rows} error rows; wall time {self.wall_s:.1f}s "
            f"over {self.sessions} session{'' if self.sessions == 1 else 's'}",
        ]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}s"


def _add(total: int | None, value: int | None) -> int | None:
    if value is None:
        return total
    return value if total is None else total + value


#: What the summary reads of one emission: ``(injected, cached, retries by kind, usage, latency_s)``,
#: ``usage`` as ``(input_tokens, output_tokens)`` or ``None`` when the emission reported none.
EmissionFigures = tuple[bool, bool, Mapping[str, int], tuple[int | None, int | None] | None, float | None]


def model_emission_figures(trajectory: CaseTrajectory) -> Iterator[EmissionFigures]:
    """The figures of every emission of a trajectory read as models, in order."""
    for turn in trajectory.turns:
        for step in turn.steps:
            emission = step.emission
            usage = emission.usage
            yield (
                emission.injected,
                emission.cached,
                emission.retries,
                None if usage is None else (usage.input_tokens, usage.output_tokens),
                emission.latency_s,
            )


def stored_emission_figures(trajectory: Mapping[str, Any]) -> Iterator[EmissionFigures]:
    """The same figures from a stored trajectory's JSON (``json.loads`` of it): a field absent
    (a store written before it existed) reads as the model's default, as validation would."""
    for turn in trajectory.get("turns") or ():
        for step in turn.get("steps") or ():
            emission = step["emission"]
            usage = emission.get("usage")
            yield (
                bool(emission.get("injected", False)),
                bool(emission.get("cached", False)),
                emission.get("retries") or {},
                None if usage is None else (usage.get("input_tokens"), usage.get("output_tokens")),
                emission.get("latency_s"),
            )


def _summarize(
    cases: Iterable[Iterable[EmissionFigures]], *, error_rows: int, sessions: Sequence[dict[str, Any]]
) -> UsageSummary:
    """The one sum behind both readers: ``cases`` yields each stored case's emission figures."""
    summary = UsageSummary(error_rows=error_rows, sessions=len(sessions))
    latencies: list[float] = []
    for emissions in cases:
        summary.cases += 1
        for injected, cached, retries, usage, latency_s in emissions:
            if injected:
                continue
            summary.requests += 1
            for kind, count in retries.items():
                summary.retries[kind] = summary.retries.get(kind, 0) + int(count)
            if cached:
                summary.cache_hits += 1
                continue
            if usage is not None:
                summary.input_tokens = _add(summary.input_tokens, usage[0])
                summary.output_tokens = _add(summary.output_tokens, usage[1])
            if latency_s is not None:
                latencies.append(float(latency_s))
    summary.latency_median_s = percentile(latencies, 50)
    summary.latency_p95_s = percentile(latencies, 95)
    summary.wall_s = sum(float(session.get("wall_s") or 0.0) for session in sessions)
    return summary


def summarize_usage(
    trajectories: Iterable[CaseTrajectory], *, error_rows: int = 0, sessions: Sequence[dict[str, Any]] = ()
) -> UsageSummary:
    """The summary of stored ``trajectories`` (one per case) and the store's ``sessions``."""
    return _summarize(
        (model_emission_figures(trajectory) for trajectory in trajectories), error_rows=error_rows, sessions=sessions
    )


def usage_summary(store: Any, records: Iterable[Any] | None = None) -> UsageSummary:
    """The summary of a :class:`~tooldiag.store.RunStore`; ``records`` (its
    :meth:`~tooldiag.store.RunStore.iter_cases`, already read by the caller) saves a second read.
    Without ``records`` every stored draw counts (:meth:`~tooldiag.store.RunStore.iter_samples`:
    with ``--repeats`` each draw paid its own requests); "cases stored" then counts draws, read
    as plain JSON (module docstring). A stored trajectory whose shape the JSON reader cannot walk
    is read again through the models, which name the damaged case."""
    if records is None:
        rows = list(store.iter_stored_trajectories())
        try:
            return _summarize(
                (stored_emission_figures(row.trajectory) for row in rows),
                error_rows=sum(1 for row in rows if row.status != "done"),
                sessions=store.sessions(),
            )
        except (AttributeError, KeyError, TypeError, ValueError):
            records = store.iter_samples()
    records = list(records)
    return summarize_usage(
        (record.trajectory for record in records),
        error_rows=sum(1 for record in records if record.status != "done"),
        sessions=store.sessions(),
    )
