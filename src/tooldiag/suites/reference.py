"""The ``ref/*`` provider: deterministic, offline reference policies.

They are known-answer self-tests (the oracle must score 100, each failure-mode policy
must show its failure) and the demo's embedded default. Each suite keeps its own
policies next to its code; this table maps ``ref/NAME`` to ``module:factory`` and
imports lazily. A factory takes ``(name, options)`` and returns a ``ModelBackend``.
"""

from __future__ import annotations

import importlib

from tooldiag.errors import UnknownModelError
from tooldiag.models.base import ModelBackend, ModelOptions
from tooldiag.models.registry import provider

REFERENCE_POLICIES: dict[str, str] = {
    # BFCL multi-turn policies (tooldiag.suites.bfcl.policies)
    "oracle": "tooldiag.suites.bfcl.policies:OraclePolicy",
    "overcall": "tooldiag.suites.bfcl.policies:OvercallPolicy",
    "halt": "tooldiag.suites.bfcl.policies:HaltPolicy",
    "coin": "tooldiag.suites.bfcl.policies:CoinPolicy",  # seeded oracle-or-overcall per (case, sample)
    # probe known-answer policies (tooldiag.suites.bfcl.probes.policies): they heed SRI/CRI instructions
    "halt-recoverable": "tooldiag.suites.bfcl.probes.policies:HaltRecoverablePolicy",
    "overcall-heeding": "tooldiag.suites.bfcl.probes.policies:OvercallHeedingPolicy",
    # AgentJudgeBench generators and judges (tooldiag.suites.judgebench.policies)
    "jb-oracle": "tooldiag.suites.judgebench.policies:oracle",
    "jb-perturb": "tooldiag.suites.judgebench.policies:perturb",
    "jb-sloppy": "tooldiag.suites.judgebench.policies:sloppy",
    "jb-exact": "tooldiag.suites.judgebench.policies:exact",
    "jb-lenient": "tooldiag.suites.judgebench.policies:lenient",
    "jb-anchored": "tooldiag.suites.judgebench.policies:anchored",
    "jb-flaky": "tooldiag.suites.judgebench.policies:flaky",
    "jb-order": "tooldiag.suites.judgebench.policies:order_sensitive",
    "rewrite": "tooldiag.suites.judgebench.construct.rewrite_policies:rewriter",
    "metajudge": "tooldiag.suites.judgebench.construct.rewrite_policies:metajudge",
}


def reference_names() -> list[str]:
    return sorted(REFERENCE_POLICIES)


@provider("ref")
def make_reference(name: str, options: ModelOptions) -> ModelBackend:
    target = REFERENCE_POLICIES.get(name)
    if target is None:
        raise UnknownModelError(
            f"unknown reference policy 'ref/{name}'",
            hint=f"use one of: {', '.join('ref/' + n for n in reference_names())}",
        )
    module_name, _, attr = target.partition(":")
    factory = getattr(importlib.import_module(module_name), attr)
    return factory(name, options)
