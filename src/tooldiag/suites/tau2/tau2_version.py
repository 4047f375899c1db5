"""Which tau2-bench release wrote a results file: ``pre-1.0``, ``1.0.0`` or ``1.0.1``.

No results file states its version (``info.git_commit`` is a hash; the pyproject string was
``0.2.1-dev`` even at the v1.0.0 tag, shared/tau2/tau2-results-schema.md "Surprises"), so the
version is read from the fields each release added (schema notes §2-4, §9):

* ``1.0.1``: a top-level ``simulation_index`` key (always dumped since commit 72be66d, null in
  the json layout, filled in the dir layout), or the dir layout itself (same commit). That
  commit came between the v1.0.0 and v1.0.1 tags, so a file from a commit between them also
  reads as 1.0.1; banking_knowledge's grading change is in the same window (tag ``pre-v1.0.1``).
* ``1.0.0``: none of those, but the 1.0 fields: ``info.text_streaming_config``,
  ``speech_complexity``, ``audio_native_config``, ``retrieval_config`` (pydantic dumps them even
  when null), or a simulation with ``mode``, ``ticks``, ``review`` ... (0.x simulations have
  exactly 13 keys).
* ``pre-1.0``: neither (0.1.x-0.2.x; their results mix with 1.0 results only with care: the
  1.0.0 release changed airline and retail tasks and retail's reward basis).
"""

from __future__ import annotations

from collections.abc import Iterable

PRE_1_0 = "pre-1.0"
V1_0_0 = "1.0.0"
V1_0_1 = "1.0.1"
VERSIONS = (PRE_1_0, V1_0_0, V1_0_1)

#: ``Info`` fields added in 1.0 (schema notes §3).
INFO_V1_KEYS = frozenset(
    {"text_streaming_config", "speech_complexity", "audio_native_config", "retrieval_config", "retrieval_config_kwargs"}
)
#: ``SimulationRun`` fields added in 1.0 (schema notes §4).
SIMULATION_V1_KEYS = frozenset(
    {"ticks", "mode", "speech_environment", "review", "user_only_review", "info", "auth_classification",
     "hallucination_retries_used", "hallucination_check", "provider_session_id", "policy", "effect_timeline"}
)  # fmt: skip


def version_rank(version: str) -> int:
    return VERSIONS.index(version)


def detect_version(
    top_level_keys: Iterable[str], info_keys: Iterable[str], layout: str, simulation_keys: Iterable[str] = ()
) -> tuple[str, str]:
    """``(version, evidence)``: the release and the field that decided it (module docstring)."""
    top = set(top_level_keys)
    if "simulation_index" in top:
        return V1_0_1, "top-level simulation_index key (added after v1.0.0, in v1.0.1)"
    if layout == "dir":
        return V1_0_1, "dir layout (results.json + simulations/, added after v1.0.0, in v1.0.1)"
    new_info = sorted(INFO_V1_KEYS & set(info_keys))
    if new_info:
        return V1_0_0, f"info.{new_info[0]} (a 1.0 field) and no simulation_index"
    new_sim = sorted(SIMULATION_V1_KEYS & set(simulation_keys))
    if new_sim:
        return V1_0_0, f"simulation field {new_sim[0]!r} (a 1.0 field) and no simulation_index"
    return PRE_1_0, "no 1.0 field in info, the simulations or the top level (0.1.x-0.2.x)"


def declared_version(text: str | None) -> str | None:
    """A version string found in the wild (a submission's ``methodology.tau2_bench_version``:
    ``0.1.3``, ``v0.1.3``, ``0.2.1-dev``, ``1.0.0``, ``1.0.1``, ``v2.0``, ...) as one of
    :data:`VERSIONS`; ``None`` when it names none of them (``v2.0``, ``original tau-bench``)."""
    if not text:
        return None
    value = text.strip().lower().removeprefix("v")
    if value.startswith("0."):
        return PRE_1_0  # 0.2.1-dev is also what the v1.0.0 tag's pyproject says; read it as written
    if value.startswith("1.0.0"):
        return V1_0_0
    if value.startswith("1.0.1"):
        return V1_0_1
    return None
