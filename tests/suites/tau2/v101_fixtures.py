"""tau2-bench 1.0.x result files for the telecom / banking / version tests, built in the test.

Shapes follow shared/tau2/tau2-results-schema.md: a 1.0.1 monolithic file dumps
``"simulation_index": null`` and the 1.0 ``Info`` fields (null when unused); a 1.0.0 file has
the 1.0 fields but no ``simulation_index``; user-side tool calls sit on ``role: "user"``
messages with ``requestor: "user"``, answered by ``role: "tool"`` messages with
``requestor: "user"`` (§7); an ``infrastructure_error`` simulation has reward 0 (§5-6).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GREETING = "Hi! How can I help you today?"


class Sim:
    def __init__(self, sim_id: str, task_id: str, trial: int) -> None:
        self.id, self.task_id, self.trial = sim_id, task_id, trial
        self.messages: list[dict[str, Any]] = [
            {"role": "assistant", "content": GREETING, "tool_calls": None, "turn_idx": 0}
        ]
        self._calls = 0

    def _turn(self) -> int:
        return len(self.messages)

    def user(self, text: str) -> Sim:
        self.messages.append({"role": "user", "content": text, "tool_calls": None, "turn_idx": self._turn()})
        return self

    def agent(self, text: str) -> Sim:
        self.messages.append({"role": "assistant", "content": text, "tool_calls": None, "turn_idx": self._turn()})
        return self

    def _call(self, role: str, name: str, arguments: dict[str, Any], result: object) -> Sim:
        self._calls += 1
        call_id = f"{self.id}_c{self._calls}"
        call = {"id": call_id, "name": name, "arguments": arguments, "requestor": role}
        self.messages.append({"role": role, "content": None, "tool_calls": [call], "turn_idx": self._turn()})
        self.messages.append({"role": "tool", "id": call_id, "content": json.dumps(result), "requestor": role,
                              "error": False, "turn_idx": self._turn()})  # fmt: skip
        return self

    def agent_call(self, name: str, arguments: dict[str, Any], result: object = "ok") -> Sim:
        return self._call("assistant", name, arguments, result)

    def user_call(self, name: str, arguments: dict[str, Any] | None = None, result: object = "ok") -> Sim:
        return self._call("user", name, arguments or {}, result)

    def done(self, reward: float, termination: str = "user_stop", *, v1: bool = True) -> dict[str, Any]:
        sim: dict[str, Any] = {
            "id": self.id, "task_id": self.task_id, "timestamp": "2026-07-20T10:00:00",
            "start_time": "2026-07-20T10:00:00", "end_time": "2026-07-20T10:01:00", "duration": 60.0,
            "termination_reason": termination, "agent_cost": 0.01, "user_cost": 0.01,
            "reward_info": {"reward": reward, "reward_basis": ["ENV_ASSERTION"], "info": None},
            "messages": self.messages if termination != "infrastructure_error" else [],
            "trial": self.trial, "seed": 300 + self.trial,
        }  # fmt: skip
        if v1:
            sim.update({"mode": "half_duplex", "ticks": None, "review": None, "info": None, "policy": None})
        return sim


def action(action_id: str, name: str, arguments: dict[str, Any], requestor: str = "assistant") -> dict[str, Any]:
    return {"action_id": action_id, "requestor": requestor, "name": name, "arguments": arguments, "info": None,
            "compare_args": None}  # fmt: skip


def task(task_id: str, actions: list[dict[str, Any]], basis: list[str]) -> dict[str, Any]:
    return {
        "id": task_id,
        "description": {"purpose": f"fixture {task_id}", "relevant_policies": None, "notes": None},
        "user_scenario": {"persona": None, "instructions": f"fixture task {task_id}"},
        "initial_state": None,
        "evaluation_criteria": {
            "actions": actions,
            "env_assertions": None,
            "communicate_info": None,
            "nl_assertions": None,
            "reward_basis": basis,
        },
        "issues": None,
        "required_documents": None,
        "user_tools": None,
    }


def info(domain: str, agent: str = "llm_agent", *, v1: bool = True) -> dict[str, Any]:
    block: dict[str, Any] = {
        "git_commit": "fc0055d", "num_trials": 4, "max_steps": 200, "max_errors": 10, "seed": 300,
        "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1-2025-04-14", "llm_args": {},
                      "global_simulation_guidelines": None, "voice_settings": None, "persona_config": None},
        "agent_info": {"implementation": agent, "llm": "fake/agent-t", "llm_args": {}, "voice_settings": None},
        "environment_info": {"domain_name": domain, "policy": "Be helpful.", "tool_defs": None},
    }  # fmt: skip
    if v1:
        block.update({"text_streaming_config": None, "speech_complexity": None, "audio_native_config": None,
                      "retrieval_config": None, "retrieval_config_kwargs": None})  # fmt: skip
    return block


def telecom_sims() -> list[dict[str, Any]]:
    """Task roam (agent enable_roaming + user toggle_roaming), task apn (the user's actions only).

    roam/0: consent asked and given, the write, then the user toggles roaming: pass.
    roam/1: the agent writes without asking; the user never toggles: fail.
    apn/0, apn/1: the user resets the APN and reboots (user writes only): pass.
    apn/2: the user only checks the status bar: fail. apn/3: infrastructure error.
    """
    roam0 = (
        Sim("roam-0", "roam", 0).user("My data does not work abroad. My number is 555-0100.")
        .agent_call("get_customer_by_phone", {"phone_number": "555-0100"}, {"customer_id": "C1"})
        .agent("I can enable roaming on line L1 for you. Shall I proceed?").user("Yes, please go ahead.")
        .agent_call("enable_roaming", {"customer_id": "C1", "line_id": "L1"})
        .agent("Done. Please turn on data roaming in your phone settings.")
        .user_call("toggle_roaming").user("It works now, thanks. ###STOP###")
    )  # fmt: skip
    roam1 = (
        Sim("roam-1", "roam", 1).user("Roaming is off on my line L1, customer C1.")
        .agent_call("enable_roaming", {"customer_id": "C1", "line_id": "L1"})
        .agent("Roaming is enabled. Please turn on roaming on your phone.").user("Thanks. ###STOP###")
    )  # fmt: skip
    apn = []
    for trial, passed in ((0, True), (1, True), (2, False)):
        sim = Sim(f"apn-{trial}", "apn", trial).user("I have no mobile data.")
        sim.agent("Please reset your APN settings and then reboot your phone.")
        if passed:
            sim.user_call("reset_apn_settings").user_call("reboot_device")
        else:
            sim.user_call("check_status_bar", result="no signal")
        apn.append(sim.user("Done. ###STOP###").done(1.0 if passed else 0.0))
    infra = Sim("apn-3", "apn", 3).done(0.0, "infrastructure_error")
    return [roam0.done(1.0), roam1.done(0.0), *apn, infra]


def telecom_tasks() -> list[dict[str, Any]]:
    roam = [action("roam_0", "enable_roaming", {"customer_id": "C1", "line_id": "L1"}),
            action("roam_1", "toggle_roaming", {}, requestor="user")]  # fmt: skip
    apn = [action("apn_0", "reset_apn_settings", {}, requestor="user"),
           action("apn_1", "reboot_device", {}, requestor="user")]  # fmt: skip
    return [task("roam", roam, ["ENV_ASSERTION"]), task("apn", apn, ["ENV_ASSERTION"])]


def write_telecom(folder: Path) -> Path:
    """A 1.0.1 monolithic telecom results file."""
    data = {"timestamp": "2026-07-20T10:00:00", "info": info("telecom"), "tasks": telecom_tasks(),
            "simulations": telecom_sims(), "simulation_index": None}  # fmt: skip
    path = folder / "telecom_v101.json"
    path.write_text(json.dumps(data, indent=1))
    return path


def write_banking(folder: Path, *, oracle: bool = False) -> Path:
    """A 1.0.0 banking_knowledge file (1.0 fields, no simulation_index): discoverable tools via wrappers."""
    wrapped = [
        action("b_0", "log_verification", {"user_id": "U1"}),
        action("b_1", "unlock_discoverable_agent_tool", {"agent_tool_name": "update_transaction_rewards_3847"}),
        action("b_2", "call_discoverable_agent_tool",
               {"agent_tool_name": "update_transaction_rewards_3847",
                "arguments": json.dumps({"transaction_id": "T9", "new_rewards_earned": "40"})}),
    ]  # fmt: skip
    sim = (
        Sim("bank-0", "b", 0).user("My rewards for transaction T9 are wrong. I am U1.")
        .agent_call("log_verification", {"user_id": "U1"})
        .agent_call("call_discoverable_agent_tool", {"agent_tool_name": "get_debit_dispute_status_7483",
                                                      "arguments": "{}"})
        .agent_call("unlock_discoverable_agent_tool", {"agent_tool_name": "update_transaction_rewards_3847"})
        .agent("I will set the rewards of T9 to 40 points. Do you confirm?").user("Yes.")
        .agent_call("call_discoverable_agent_tool", {"agent_tool_name": "update_transaction_rewards_3847",
                                                      "arguments": json.dumps({"transaction_id": "T9",
                                                                               "new_rewards_earned": "40"})})
        .user_call("call_discoverable_user_tool", {"discoverable_tool_name": "submit_cash_back_dispute_0589",
                                                   "arguments": json.dumps({"user_id": "U1", "transaction_id": "T9"})})
        .user("Thanks. ###STOP###")
    )  # fmt: skip
    block = info("banking_knowledge", "llm_agent_gt" if oracle else "llm_agent")
    block["retrieval_config"] = "alltools"
    data = {"timestamp": "2026-03-20T10:00:00", "info": block, "tasks": [task("b", wrapped, ["DB"])],
            "simulations": [sim.done(1.0)]}  # fmt: skip
    path = folder / ("banking_oracle.json" if oracle else "banking_v100.json")
    path.write_text(json.dumps(data, indent=1))
    return path


def write_submission(folder: Path, results: dict[str, Any], version: str = "1.0.1") -> Path:
    data = {"model_name": "agent-t", "model_organization": "fake", "submitting_organization": "fake",
            "submission_date": "2026-07-21", "contact_info": {"email": None, "name": None, "github": None},
            "results": results, "methodology": {"tau2_bench_version": version}}  # fmt: skip
    path = folder / "submission.json"
    path.write_text(json.dumps(data, indent=1))
    return path
