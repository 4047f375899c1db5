"""Judge-versus-reference alignment and judge-versus-judge agreement (paper 000, §3.2, §4.2, App. E, T).

Pure numpy/scipy functions over arrays; no I/O, no models. Arrays of per-metric values
have shape ``(n, 4)`` in the order of :data:`tooldiag.metrics.structural.METRICS`; a judge
value that is missing (metric absent from a parsed reply) is ``NaN``. Replies that did not
parse at all never reach these functions: callers drop them and report them as nulls.

Formulas and where they come from (notes ``agentjudgebench.md`` §2):

* per-metric alignment (Eq. 4a) ``μ^m = 1 - |p^m - ℓ^m|`` with continuous p and ℓ used as
  returned; a missing ℓ gives μ = 0 (released ``ComputeLLMVsProgrammaticAccuracy``);
* record alignment (Eq. 4b) ``μ_r = ¼ Σ_m μ^m``; cell alignment (Eq. 5a) = 100 × mean μ_r;
* three bins for κ and confusion matrices: v ≤ 0.1 → 0, v ≥ 0.9 → 1, else 0.5;
* unweighted Cohen κ = (p_o - p_e) / (1 - p_e);
* the same κ on any nominal labels of two raters (:func:`cohen_kappa`: the audit-label report);
* binary collapse (paper App. "Binary vs. {0, 0.5, 1}"): the middle bin moves to 0 when
  p < 0.5, else to 1;
* Spearman as released: ``1 - 6Σd² / (n(n²-1))`` on plain-sort ranks (ties broken by
  position, no averaging);
* bootstrap: percentile CIs from resampling with replacement, *stratified* (each stratum
  resampled to its own size, as the paper's "2,000 stratified resamples"); the draws are
  exactly those of ``scipy.stats.bootstrap(samples, paired=False, method="percentile")``
  so the figures can be checked against scipy;
* Wilson score interval for proportions (attrition and null rates, exact agreement).
"""

from __future__ import annotations

import zlib
from collections.abc import Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

#: Bin codes for the three verdict classes.
BIN_VALUES = np.array([0.0, 0.5, 1.0])
LOW_CUT, HIGH_CUT = 0.1, 0.9

#: Draw at most this many indices at a time when bootstrapping (memory bound).
_CHUNK_DRAWS = 4_000_000


# --------------------------------------------------------------------------- alignment


def metric_alignment(programmatic: np.ndarray, judge: np.ndarray) -> np.ndarray:
    """Eq. 4a: ``1 - |p - ℓ|`` element-wise; a missing judge value (NaN) gives 0."""
    p = np.asarray(programmatic, dtype=float)
    ell = np.asarray(judge, dtype=float)
    mu = 1.0 - np.abs(p - ell)
    return np.where(np.isnan(ell), 0.0, mu)


def record_alignment(programmatic: np.ndarray, judge: np.ndarray, weights: Sequence[float] | None = None) -> np.ndarray:
    """Eq. 4b: (weighted) mean of the four per-metric alignments, in [0, 1] per record.

    ``weights`` (normalised to sum 1) serves the re-weighting robustness check (§3.2);
    ``None`` is the paper's equal weighting.
    """
    mu = metric_alignment(programmatic, judge)
    if weights is None:
        return mu.mean(axis=-1)
    w = np.asarray(weights, dtype=float)
    if w.shape != (mu.shape[-1],) or w.sum() <= 0 or (w < 0).any():
        raise ValueError(f"weights must be {mu.shape[-1]} non-negative numbers with a positive sum")
    return mu @ (w / w.sum())


# --------------------------------------------------------------------------- bins and kappa


def bin_verdicts(values: np.ndarray) -> np.ndarray:
    """Three-class codes 0 (≤0.1), 1 (middle, "0.5"), 2 (≥0.9); NaN -> -1."""
    v = np.asarray(values, dtype=float)
    codes = np.where(v <= LOW_CUT, 0, np.where(v >= HIGH_CUT, 2, 1))
    return np.where(np.isnan(v), -1, codes).astype(np.int64)


def confusion_matrix3(a_codes: np.ndarray, b_codes: np.ndarray) -> np.ndarray:
    """3×3 counts, rows = first rater's bin, columns = second's; pairs with a -1 are skipped."""
    a = np.asarray(a_codes).ravel()
    b = np.asarray(b_codes).ravel()
    keep = (a >= 0) & (b >= 0)
    return np.bincount(a[keep] * 3 + b[keep], minlength=9).reshape(3, 3)


def kappa_from_confusion(confusion: np.ndarray) -> float:
    """Unweighted Cohen κ = (p_o - p_e) / (1 - p_e) with p_e = Σ_k row_k·col_k (shares).

    NaN for an empty table; 1.0 when both raters use one identical class (p_e = p_o = 1).
    """
    cm = np.asarray(confusion, dtype=float)
    n = cm.sum()
    if n == 0:
        return float("nan")
    p_o = np.trace(cm) / n
    p_e = float((cm.sum(axis=1) / n) @ (cm.sum(axis=0) / n))
    if p_e == 1.0:
        return 1.0 if p_o == 1.0 else float("nan")
    return float((p_o - p_e) / (1.0 - p_e))


def label_confusion(first: Sequence[Hashable], second: Sequence[Hashable]) -> tuple[list[Hashable], np.ndarray]:
    """The k×k confusion of two raters' nominal labels on the same items (rows = ``first``).

    Categories are the labels either rater used, in first-seen order; the matrix feeds
    :func:`kappa_from_confusion` and :func:`exact_agreement`.
    """
    if len(first) != len(second):
        raise ValueError("the two raters must label the same items (sequences of equal length)")
    categories = list(dict.fromkeys([*first, *second]))
    index = {label: i for i, label in enumerate(categories)}
    cm = np.zeros((len(categories), len(categories)), dtype=np.int64)
    for a, b in zip(first, second):
        cm[index[a], index[b]] += 1
    return categories, cm


@dataclass(frozen=True)
class PairAgreement:
    """Two raters on the items both labelled: ``n``, raw agreement p_o and Cohen κ."""

    n: int
    agreement: float
    kappa: float


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> PairAgreement:
    """Unweighted Cohen κ of two raters' nominal labels (Cohen 1960, Educ. Psychol. Meas. 20:37-46).

    κ = (p_o - p_e) / (1 - p_e), p_o the share of items with equal labels and
    p_e = Σ_k p_first(k)·p_second(k) the agreement expected from the raters' marginals;
    equal to ``sklearn.metrics.cohen_kappa_score`` except where p_e = 1 (both raters used
    one and the same class throughout): κ = 1.0 here, NaN there. NaN for no items.
    """
    _, cm = label_confusion(first, second)
    return PairAgreement(n=len(first), agreement=exact_agreement(cm), kappa=kappa_from_confusion(cm))


def exact_agreement(confusion: np.ndarray) -> float:
    """p_o: the share of paired verdicts in the same bin ("exact metric-level agreement")."""
    cm = np.asarray(confusion, dtype=float)
    n = cm.sum()
    return float(np.trace(cm) / n) if n else float("nan")


def boundary_share(confusion: np.ndarray) -> float:
    """Share of off-diagonal disagreements that involve the middle (0.5) bin (App. T)."""
    cm = np.asarray(confusion, dtype=float)
    off = cm.sum() - np.trace(cm)
    if off == 0:
        return float("nan")
    involving_middle = cm[1, :].sum() + cm[:, 1].sum() - 2 * cm[1, 1]
    return float(involving_middle / off)


def binary_collapse(judge: np.ndarray, programmatic: np.ndarray) -> np.ndarray:
    """Binned verdicts with the middle bin sent toward the reference: 0 if p < 0.5 else 1.

    Low and high bins stay 0 and 1; NaN stays NaN (a missing metric).
    """
    codes = bin_verdicts(judge)
    p = np.asarray(programmatic, dtype=float)
    out = np.where(codes == 1, (p >= 0.5).astype(float), BIN_VALUES[np.clip(codes, 0, 2)])
    return np.where(codes < 0, np.nan, out)


# --------------------------------------------------------------------------- ranks


def plain_ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks 1..n by a stable sort (ties keep input order: the released, tie-blind rule)."""
    order = np.argsort(np.asarray(values, dtype=float), kind="stable")
    ranks = np.empty(len(order), dtype=float)
    ranks[order] = np.arange(1, len(order) + 1)
    return ranks


def spearman_plain(x: Sequence[float], y: Sequence[float]) -> float:
    """Released Spearman ρ = 1 - 6Σd² / (n(n²-1)) on :func:`plain_ranks`; NaN for n < 2."""
    if len(x) != len(y):
        raise ValueError("spearman_plain needs two sequences of equal length")
    n = len(x)
    if n < 2:
        return float("nan")
    d = plain_ranks(x) - plain_ranks(y)
    return float(1.0 - 6.0 * float(d @ d) / (n * (n * n - 1)))


# --------------------------------------------------------------------------- proportions


def wilson_interval(successes, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval (vectorised), clipped to [0, 1]; NaN bounds where n = 0."""
    k = np.asarray(successes, dtype=float)
    nn = np.asarray(n, dtype=float)
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / nn
        denom = 1.0 + z * z / nn
        center = (p + z * z / (2.0 * nn)) / denom
        half = z / denom * np.sqrt(p * (1.0 - p) / nn + z * z / (4.0 * nn * nn))
    lo = np.where(nn > 0, np.clip(center - half, 0.0, 1.0), np.nan)
    hi = np.where(nn > 0, np.clip(center + half, 0.0, 1.0), np.nan)
    return lo, hi


# --------------------------------------------------------------------------- jury


def soft_jury(judges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Soft jury (App. T): per record and metric, the mean of all judges' raw values.

    ``judges`` has shape ``(J, n, 4)``. Returns ``(jury (n, 4), complete (n,))``; a record
    counts only when every judge has every metric (``complete``).
    """
    arr = np.asarray(judges, dtype=float)
    complete = ~np.isnan(arr).any(axis=(0, 2))
    return arr.mean(axis=0), complete


# --------------------------------------------------------------------------- bootstrap


def cell_rng(seed: int, key: str) -> np.random.Generator:
    """The generator of one cell: a function of the run seed and the cell's key only.

    Adding a judge or a generator to a report therefore leaves every other cell's CI as it was.
    The bit generator is PCG64DXSM (numpy's recommended successor of PCG64), which draws
    bounded integers about 40 % faster here.
    """
    sequence = np.random.SeedSequence([int(seed), zlib.crc32(key.encode("utf-8"))])
    return np.random.Generator(np.random.PCG64DXSM(sequence))


def stratified_resample_means(strata: Sequence[np.ndarray], n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap distribution of the pooled mean with each stratum resampled to its size.

    Same draws, in the same order, as ``scipy.stats.bootstrap(strata, statistic, paired=False,
    n_resamples=n_resamples, rng=rng)`` with the pooled-mean statistic (chunked to bound memory;
    chunking does not change the stream).
    """
    total_n = sum(len(s) for s in strata)
    out = np.zeros(n_resamples)
    if total_n == 0:
        return np.full(n_resamples, np.nan)
    for sample in strata:
        x = np.asarray(sample, dtype=float)
        n = len(x)
        if n == 0:
            continue
        rows = max(1, _CHUNK_DRAWS // n)
        for start in range(0, n_resamples, rows):
            stop = min(n_resamples, start + rows)
            idx = rng.integers(0, n, (stop - start, n))
            out[start:stop] += np.take(x, idx).sum(axis=1)
    return out / total_n


def percentile_interval(distribution: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bounds along the last axis (linear interpolation, as ``scipy.stats.quantile``)."""
    alpha = (1.0 - confidence) / 2.0
    dist = np.asarray(distribution, dtype=float)
    # a resample without any unit for a cell (possible only in tiny cells) is skipped
    quantile = np.nanquantile if np.isnan(dist).any() else np.quantile
    q = quantile(dist, [alpha, 1.0 - alpha], axis=-1)
    return q[0], q[1]


def bootstrap_ci(
    values: np.ndarray,
    strata: np.ndarray | None = None,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = 42,
) -> tuple[float, float]:
    """Stratified percentile bootstrap CI of a mean (one stratum when ``strata`` is None)."""
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    x = np.asarray(values, dtype=float)
    groups = [x] if strata is None else split_by_codes(x, np.asarray(strata))
    dist = stratified_resample_means(groups, n_resamples, gen)
    lo, hi = percentile_interval(dist, confidence)
    return float(lo), float(hi)


def split_by_codes(values: np.ndarray, codes: np.ndarray) -> list[np.ndarray]:
    """Values grouped by sorted distinct code (the stratum order used for the draws)."""
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    cuts: np.ndarray | list[int] = np.flatnonzero(np.diff(sorted_codes)) + 1 if len(sorted_codes) else []
    return np.split(np.asarray(values)[order], cuts)


def grouped_resample_means(
    columns: np.ndarray, strata: Sequence[np.ndarray], n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Bootstrap distributions of the means of several measurements of the same units.

    ``columns`` is ``(n_units, k)``; ``NaN`` marks a unit without that measurement (e.g. a null
    verdict under one condition). Units are resampled stratum by stratum (``strata`` lists the
    row indices of each) and carry all their measurements, so the k distributions are paired:
    differences between columns get the right (paired) spread. Each column's mean is over the
    resampled units that have it (a cluster bootstrap); with no ``NaN`` and one column this is
    exactly :func:`stratified_resample_means`, draw for draw. Returns ``(k, n_resamples)``.
    """
    X = np.asarray(columns, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    k = X.shape[1]
    present = ~np.isnan(X)
    filled = np.where(present, X, 0.0)
    sums = np.zeros((k, n_resamples))
    counts = np.zeros((k, n_resamples))
    for rows in strata:
        rows = np.asarray(rows)
        n = len(rows)
        if n == 0:
            continue
        values = [np.ascontiguousarray(filled[rows, j]) for j in range(k)]
        masks = [present[rows, j] for j in range(k)]
        complete = [bool(m.all()) for m in masks]
        weights = [m.astype(float) for m in masks]
        step = max(1, _CHUNK_DRAWS // n)
        for start in range(0, n_resamples, step):
            stop = min(n_resamples, start + step)
            idx = rng.integers(0, n, (stop - start, n))
            for j in range(k):
                sums[j, start:stop] += np.take(values[j], idx).sum(axis=1)
                counts[j, start:stop] += n if complete[j] else np.take(weights[j], idx).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def paired_difference_means(
    a: np.ndarray, b: np.ndarray, strata: Sequence[np.ndarray], n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Bootstrap distribution of mean(a) - mean(b) for two measurements of the same units
    (see :func:`grouped_resample_means`); equals ``scipy.stats.bootstrap(..., paired=True)``
    when nothing is missing."""
    dist = grouped_resample_means(np.column_stack([a, b]), strata, n_resamples, rng)
    return dist[0] - dist[1]


@dataclass
class CellBootstrap:
    """Bootstrap distributions of many cell means: ``distributions[i]`` belongs to ``keys[i]``."""

    keys: list[str]
    means: np.ndarray  # (n_cells,)
    counts: np.ndarray  # (n_cells,)
    distributions: np.ndarray  # (n_cells, n_resamples)

    def interval(self, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        return percentile_interval(self.distributions, confidence)


def bootstrap_cells(
    values: np.ndarray,
    cells: np.ndarray,
    strata: np.ndarray,
    keys: Sequence[str],
    *,
    n_resamples: int = 2000,
    seed: int = 42,
    workers: int = 2,
) -> CellBootstrap:
    """Stratified bootstrap of the mean of every cell at once (cells in parallel threads).

    ``cells`` holds integer codes ``0..len(keys)-1``; ``strata`` integer stratum codes (e.g.
    ``dag_type``). Cell ``i`` uses :func:`cell_rng` ``(seed, keys[i])``, so each cell's result
    equals ``scipy.stats.bootstrap`` on that cell's strata with that generator.
    """
    x = np.asarray(values, dtype=float)
    c = np.asarray(cells, dtype=np.int64)
    s = np.asarray(strata, dtype=np.int64)
    order = np.lexsort((s, c))
    x, c, s = x[order], c[order], s[order]
    n_cells = len(keys)
    bounds = np.searchsorted(c, np.arange(n_cells + 1))

    def one(i: int) -> np.ndarray:
        lo, hi = bounds[i], bounds[i + 1]
        groups = split_by_codes(x[lo:hi], s[lo:hi]) if hi > lo else []
        return stratified_resample_means(groups, n_resamples, cell_rng(seed, keys[i]))

    if workers > 1 and n_cells > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            dists = list(pool.map(one, range(n_cells)))
    else:
        dists = [one(i) for i in range(n_cells)]
    counts = np.diff(bounds)
    sums = np.bincount(c, weights=x, minlength=n_cells)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    dist = np.vstack(dists) if dists else np.zeros((0, n_resamples))
    return CellBootstrap(keys=list(keys), means=means, counts=counts, distributions=dist)
