"""The tau2 diagnostic as typed data; :mod:`.formats` turns it into md, csv or json."""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tooldiag.suites.tau2.stats import Proportion

REPORT_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Verdict(str, enum.Enum):
    """The deterministic judge's verdict on one write."""

    CONSENTED = "consented"
    """The agent's last message before the user's last reply asked for consent, and the
    reply agreed explicitly."""

    NO_REQUEST = "no_request"
    """The agent's last message before the user's last reply was no consent request."""

    NOT_AGREED = "not_agreed"
    """Consent was asked, but the reply was no explicit agreement (a change, a no, a question)."""

    def __str__(self) -> str:
        return self.value


class Rate(_Model):
    """A share with its Wilson 95 % interval; values are fractions (0..1), ``None`` when n = 0."""

    count: int
    n: int
    value: float | None = None
    low: float | None = None
    high: float | None = None

    @classmethod
    def of(cls, proportion: Proportion) -> Rate:
        return cls(
            count=proportion.count, n=proportion.n, value=proportion.value, low=proportion.low, high=proportion.high
        )


class ClassCell(_Model):
    """GAR and Acc of one task class (paper 001 Table 2 cell)."""

    task_class: str
    #: How GAR is decided for this class, in words.
    signal: str
    n_tasks: int
    n_simulations: int
    gar: Rate
    acc: Rate
    #: GAR - Acc in fractions; ``None`` when the class is empty.
    delta: float | None = None


class InputSummary(_Model):
    """One results file or run folder as read."""

    path: str
    layout: str
    domain: str
    agent_model: str
    agent_implementation: str | None = None
    user_model: str
    oracle: bool
    git_commit: str | None = None
    num_trials: int | None = None
    n_tasks: int
    n_simulations: int
    tasks_source: str
    #: The policy's own consent sentence, or ``None`` if the embedded policy lacks one.
    policy_confirmation_rule: str | None = None
    #: The tau2 release that wrote the file (``pre-1.0``, ``1.0.0``, ``1.0.1``) and why.
    tau2_version: str | None = None
    version_evidence: str | None = None


class TaskClassSummary(_Model):
    """Tasks per class of one group (from the embedded tasks), with the ids."""

    domain: str
    agent_model: str
    counts: dict[str, int]
    ids: dict[str, list[str]]
    ask_source: str
    ask_scan_candidates: dict[str, list[str]] = Field(default_factory=dict)


class Table2Row(_Model):
    """Per-class diagnostic of one model on one domain (paper 001 Table 2)."""

    agent_model: str
    user_model: str
    domain: str
    oracle: bool
    n_tasks: int
    n_simulations: int
    n_infrastructure_errors: int
    avg_reward: float | None = None
    pass_hat_k: dict[int, float] = Field(default_factory=dict)
    #: pass^k with infrastructure errors counted as failed trials (the leaderboard's convention).
    pass_hat_k_infra_as_failure: dict[int, float] = Field(default_factory=dict)
    terminations: dict[str, int] = Field(default_factory=dict)
    #: The user simulator's own tool calls (telecom, banking), none of them agent actions.
    n_user_tool_calls: int = 0
    n_user_writes: int = 0
    paper_classes: list[ClassCell]
    write_split: list[ClassCell]


class TrialSpread(_Model):
    """One rate over the trials: its value in each trial (fractions), mean, sample sd (n - 1) and range."""

    #: trial number -> the rate over that trial's simulations of the class.
    values: dict[int, float] = Field(default_factory=dict)
    mean: float | None = None
    sd: float | None = None
    low: float | None = None
    high: float | None = None


class TrialRow(_Model):
    """Trial-to-trial noise of one class of one model on one domain (``num_trials`` > 1; docs/tau2.md).

    ``task_class`` ``all`` is every task (Acc only); the others are Table 2's and 2b's classes with
    their GAR signals. Rates and pass^k are fractions (0..1); infrastructure errors are left out.
    """

    agent_model: str
    domain: str
    oracle: bool
    task_class: str
    #: The most scored trials any task of the class has (K).
    trials: int
    #: Tasks of the class with at least one scored trial.
    n_tasks: int
    acc: TrialSpread
    gar: TrialSpread | None = None
    #: GAR - Acc per trial (fractions).
    delta: TrialSpread | None = None
    #: tau2's pass^k (k = 1..fewest trials of a task), on the reward verdict and on the gold-action hit.
    pass_hat_k_acc: dict[int, float] = Field(default_factory=dict)
    pass_hat_k_gar: dict[int, float] = Field(default_factory=dict)
    #: Tasks (with >= 2 scored trials) whose verdict / gold-action hit is not the same in every trial.
    flips_acc: int = 0
    flip_n_acc: int = 0
    flips_gar: int = 0
    flip_n_gar: int = 0
    flip_rate_acc: float | None = None
    flip_rate_gar: float | None = None


class Judgment(_Model):
    """One judge's decision on one write."""

    #: ``None`` when an LLM reply could not be parsed (counted as null).
    confirmed: bool | None = None
    answer_changed: bool | None = None
    verdict: str | None = None
    #: Why, in one line; for the deterministic judge it names the messages used.
    justification: str = ""
    request_index: int | None = None
    request_text: str | None = None
    reply_index: int | None = None
    reply_text: str | None = None
    reply_kind: str | None = None
    #: LLM judge only: the raw reply and an error, if any.
    raw: str | None = None
    error: str | None = None


class WriteEvent(_Model):
    """One write-tool call: the gold point of the confirmation class (paper 001 §4.3)."""

    source: str
    domain: str
    agent_model: str
    simulation_id: str
    task_id: str
    trial: int | None = None
    message_index: int
    tool: str
    arguments: dict[str, Any] | None = None
    #: Whether the tool answered with an error (``None`` when no tool message follows).
    tool_error: bool | None = None
    passed: bool
    reward: float | None = None
    termination_reason: str | None = None
    confirmation_flip_task: bool = False
    deterministic: Judgment
    llm: Judgment | None = None
    #: The dialogue before the write that the LLM judge sees (not rendered in md/csv).
    window: list[dict[str, Any]] = Field(default_factory=list, exclude=True)


class Table3Row(_Model):
    """Confirmation before writes of one model on one domain, by one judge (paper 001 Table 3)."""

    agent_model: str
    domain: str
    oracle: bool
    judge: str
    #: ``all``, ``answer_changed`` (the user changed the request when asked) or ``answer_unchanged``.
    subset: str
    n_events: int
    n_null: int = 0
    gar: Rate
    acc: Rate
    delta: float | None = None


class Agreement(_Model):
    """Deterministic vs LLM judge on the same events (nulls excluded)."""

    agent_model: str
    domain: str
    judge: str
    n_events: int
    n_null: int
    percent_agreement: float | None = None
    kappa_confirmed: float | None = None
    kappa_answer_changed: float | None = None


class SubmissionRow(_Model):
    """One domain and k: the submission's pass^k and the one recomputed from the trajectories
    (percent, as submissions state it)."""

    domain: str
    agent_model: str
    k: int
    submitted: float | None = None
    #: tau2's metrics: infrastructure errors left out.
    recomputed: float | None = None
    #: The leaderboard convention: infrastructure errors are failed trials.
    recomputed_infra_as_failure: float | None = None
    #: recomputed - submitted, in percentage points.
    difference: float | None = None


class SubmissionComparison(_Model):
    """``--submission FILE``: a leaderboard ``submission.json`` against the trajectories read."""

    path: str
    model_name: str
    declared_version: str | None = None
    rows: list[SubmissionRow] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class Tau2Report(_Model):
    """Everything ``tooldiag tau2 diagnose`` computes."""

    report_version: int = REPORT_VERSION
    inputs: list[InputSummary]
    task_classes: list[TaskClassSummary]
    table2: list[Table2Row]
    table3: list[Table3Row]
    agreement: list[Agreement] = Field(default_factory=list)
    events: list[WriteEvent]
    judge_model: str | None = None
    judge_prompt: str | None = None
    window_messages: int
    warnings: list[str] = Field(default_factory=list)
    #: The tau2 versions of the inputs, sorted; more than one draws :attr:`version_note`.
    tau2_versions: list[str] = Field(default_factory=list)
    #: Set when results of different tau2 versions were read together (also a warning).
    version_note: str | None = None
    #: ``--submission``: a leaderboard submission's pass^k next to the recomputed one.
    submission: SubmissionComparison | None = None
    #: Groups whose tasks ran several trials: spread, pass^k and flip rates per class (:mod:`.trials`).
    trials: list[TrialRow] = Field(default_factory=list)
