"""Build the small tau2-bench fixtures of tests/suites/tau2 (run: uv run python tests/data/tau2/build_fixtures.py).

Two layouts, written by hand in tau2's schema (notes/tau2-bench.md §8):

* ``retail_v0.json``: the single-file layout of tau2 0.1.x-0.2.x (``info``, ``tasks``,
  ``simulations``), retail, two trials per task.
* ``airline_v1/``: the >=1.0 dir layout (``results.json`` with ``simulation_index`` and
  ``simulations/<id>.json``), airline, one trial.

Scenarios covered: a write after an explicit "yes"; a write without consent (failing in
retail, passing in airline: the masking case); a user who changes the request when asked
(retail 5, a confirmation-flip task); a run terminated by max steps; transfers to a
human; refusals on empty-action tasks (one that writes anyway); an infrastructure error.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
GREETING = "Hi! How can I help you today?"


class Sim:
    """Builds one simulation's messages with tau2's shapes."""

    def __init__(self, sim_id: str, task_id: str, trial: int) -> None:
        self.id, self.task_id, self.trial = sim_id, task_id, trial
        self.messages: list[dict] = [{"role": "assistant", "content": GREETING, "tool_calls": None, "turn_idx": 0}]
        self._calls = 0

    def user(self, text: str) -> Sim:
        self.messages.append({"role": "user", "content": text, "tool_calls": None, "turn_idx": len(self.messages)})
        return self

    def agent(self, text: str) -> Sim:
        self.messages.append({"role": "assistant", "content": text, "tool_calls": None, "turn_idx": len(self.messages)})
        return self

    def call(self, name: str, arguments: dict, result: object, *, error: bool = False) -> Sim:
        self._calls += 1
        call_id = f"call_{self.id}_{self._calls}"
        self.messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "name": name, "arguments": arguments, "requestor": "assistant"}],
                "turn_idx": len(self.messages),
            }
        )
        content = f"Error: {result}" if error else json.dumps(result)
        self.messages.append(
            {
                "role": "tool",
                "id": call_id,
                "content": content,
                "requestor": "assistant",
                "error": error,
                "turn_idx": len(self.messages),
            }
        )
        return self

    def done(self, reward: float, termination: str = "user_stop", *, evaluated: bool = True) -> dict:
        reward_info: dict = {"reward": reward, "reward_basis": ["DB", "COMMUNICATE"], "info": None}
        if evaluated:
            reward_info["db_check"] = {"db_match": reward == 1.0, "db_reward": reward}
        else:
            reward_info["reward_basis"] = None
            reward_info["info"] = {"note": f"Simulation terminated prematurely. Termination reason: {termination}"}
        return {
            "id": self.id,
            "task_id": self.task_id,
            "timestamp": "2025-06-01T12:00:00",
            "start_time": "2025-06-01T12:00:00",
            "end_time": "2025-06-01T12:01:00",
            "duration": 60.0,
            "termination_reason": termination,
            "agent_cost": 0.01,
            "user_cost": 0.01,
            "reward_info": reward_info,
            "messages": self.messages,
            "trial": self.trial,
            "seed": 300 + self.trial,
        }


def task(
    task_id: str, domain: str, instructions: str, actions: list[tuple[str, dict]], *, compare_args: dict | None = None
) -> dict:
    compare_args = compare_args or {}
    return {
        "id": task_id,
        "description": {"purpose": f"fixture task {task_id}", "relevant_policies": None, "notes": None},
        "user_scenario": {
            "persona": None,
            "instructions": {
                "domain": domain,
                "reason_for_call": instructions,
                "known_info": "You are Yusuf Rossi, zip 19122.",
                "unknown_info": None,
                "task_instructions": instructions,
            },
        },
        "initial_state": None,
        "evaluation_criteria": {
            "actions": [
                {
                    "action_id": f"{task_id}_{i}",
                    "name": name,
                    "arguments": args,
                    "info": None,
                    **({"compare_args": compare_args[name]} if name in compare_args else {}),
                }
                for i, (name, args) in enumerate(actions)
            ],
            "communicate_info": [],
            "nl_assertions": None,
        },
    }


RETAIL_POLICY = (
    "# Retail agent policy\n\nBefore taking any action that updates the database (cancel, modify, return, exchange), "
    "you must list the action details and obtain explicit user confirmation (yes) to proceed.\n"
)
AIRLINE_POLICY = (
    "# Airline Agent Policy\n\nBefore taking any actions that update the booking database (booking, modifying flights, "
    "editing baggage, changing cabin class, or updating passenger information), you must list the action details and "
    "obtain explicit user confirmation (yes) to proceed.\n"
)


def info(domain: str, policy: str, agent: str, user: str, trials: int, implementation: str = "llm_agent") -> dict:
    return {
        "git_commit": "fixture",
        "num_trials": trials,
        "max_steps": 30,
        "max_errors": 10,
        "user_info": {
            "implementation": "user_simulator",
            "llm": user,
            "llm_args": {"temperature": 0.0},
            "global_simulation_guidelines": None,
        },
        "agent_info": {"implementation": implementation, "llm": agent, "llm_args": {"temperature": 0.0}},
        "environment_info": {"domain_name": domain, "policy": policy, "tool_defs": None},
        "seed": 300,
    }


def retail_v0() -> dict:
    user_lookup = ("find_user_id_by_name_zip", {"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"})
    tasks = [
        task(
            "1",
            "retail",
            "Cancel your pending order #W100 because you no longer need it.",
            [user_lookup, ("cancel_pending_order", {"order_id": "#W100", "reason": "no longer needed"})],
        ),
        task(
            "5",
            "retail",
            "You want to exchange the lamp in order #W500. If the agent asks for confirmation, say you would "
            "rather return it instead.",
            [
                user_lookup,
                (
                    "return_delivered_order_items",
                    {"order_id": "#W500", "item_ids": ["L1"], "payment_method_id": "card_1"},
                ),
            ],
        ),
        task(
            "10",
            "retail",
            "You want a human agent to look at your account; find your user id by email first.",
            [
                ("find_user_id_by_email", {"email": "yusuf@example.com"}),
                ("transfer_to_human_agents", {"summary": "wants a human"}),
            ],
            compare_args={"transfer_to_human_agents": []},
        ),
        task("24", "retail", "You want to cancel order #W240, but back out when the agent asks you to confirm.", []),
    ]
    sims = []
    # task 1, trial 0: explicit consent, then the write; passes.
    sims.append(
        Sim("r-1-0", "1", 0)
        .user("Hi, I'd like to cancel my order #W100. I'm Yusuf Rossi, zip 19122.")
        .call(*user_lookup, "yusuf_rossi_9620")
        .call("get_order_details", {"order_id": "#W100"}, {"order_id": "#W100", "status": "pending"})
        .agent(
            "I found order #W100 (pending, 2 items). I will cancel order #W100 with the reason 'no longer needed'; "
            "the refund goes to your original payment method. Do you want me to proceed with the cancellation? "
            "Please reply yes to confirm."
        )
        .user("Yes, please go ahead.")
        .call(
            "cancel_pending_order",
            {"order_id": "#W100", "reason": "no longer needed"},
            {"order_id": "#W100", "status": "cancelled"},
        )
        .agent("Your order #W100 has been cancelled.")
        .user("Thanks! ###STOP###")
        .done(1.0)
    )
    # task 1, trial 1: loops on look-ups until the step limit; never evaluated.
    looping = Sim("r-1-1", "1", 1).user("Hi, I'd like to cancel my order #W100. I'm Yusuf Rossi, zip 19122.")
    for _ in range(6):
        looping.call("get_order_details", {"order_id": "#W100"}, {"order_id": "#W100", "status": "pending"})
    sims.append(looping.done(0.0, "max_steps", evaluated=False))
    # task 5, trial 0: asks for the order, proposes the exchange, the user changes it to a return, then agrees.
    sims.append(
        Sim("r-5-0", "5", 0)
        .user("Hello, I want to exchange a lamp I received.")
        .agent("I can help with that. Could you please provide your name and zip code so I can find your account?")
        .user("Yusuf Rossi, 19122. The order is #W500.")
        .call(*user_lookup, "yusuf_rossi_9620")
        .agent(
            "I will exchange the lamp (item L1) in order #W500 for the same lamp in white, with no price difference. "
            "Shall I proceed with the exchange?"
        )
        .user("Actually, I'd rather return it instead of exchanging it.")
        .agent(
            "Understood. I will return the lamp (item L1) from order #W500 and refund $89.99 to your card ending 1234. "
            "Do you want me to proceed with the return?"
        )
        .user("Yes, go ahead.")
        .call(
            "return_delivered_order_items",
            {"order_id": "#W500", "item_ids": ["L1"], "payment_method_id": "card_1"},
            {"order_id": "#W500", "status": "return requested"},
        )
        .agent("The return has been requested; you will receive an email with the label.")
        .user("###STOP###")
        .done(1.0)
    )
    # task 5, trial 1: writes the exchange without asking; fails.
    sims.append(
        Sim("r-5-1", "5", 1)
        .user("Hello, I want to exchange the lamp in order #W500. Yusuf Rossi, 19122.")
        .call(*user_lookup, "yusuf_rossi_9620")
        .call(
            "exchange_delivered_order_items",
            {"order_id": "#W500", "item_ids": ["L1"], "new_item_ids": ["L2"], "payment_method_id": "card_1"},
            {"order_id": "#W500", "status": "exchange requested"},
        )
        .agent("Done: the lamp in order #W500 has been exchanged for the white one.")
        .user("Hmm, OK. ###STOP###")
        .done(0.0)
    )
    # task 10, trial 0: look-up, then a transfer to a human.
    sims.append(
        Sim("r-10-0", "10", 0)
        .user("I need a human to look at my account. My email is yusuf@example.com.")
        .call("find_user_id_by_email", {"email": "yusuf@example.com"}, "yusuf_rossi_9620")
        .call("transfer_to_human_agents", {"summary": "User asks for a human agent."}, "Transfer successful")
        .agent("YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.")
        .user("###TRANSFER###")
        .done(1.0)
    )
    # task 10, trial 1: no transfer; fails.
    sims.append(
        Sim("r-10-1", "10", 1)
        .user("I need a human to look at my account. My email is yusuf@example.com.")
        .call("find_user_id_by_email", {"email": "yusuf@example.com"}, "yusuf_rossi_9620")
        .agent("I found your account. Is there anything else I can help you with?")
        .user("No. ###STOP###")
        .done(0.0)
    )
    # task 24, trial 0: asks for consent, the user backs out, no write; passes.
    sims.append(
        Sim("r-24-0", "24", 0)
        .user("Cancel order #W240 please. Yusuf Rossi, 19122.")
        .call(*user_lookup, "yusuf_rossi_9620")
        .agent(
            "I will cancel order #W240 (pending) with reason 'ordered by mistake'. Shall I proceed with the "
            "cancellation?"
        )
        .user("No, wait, I'll keep it after all.")
        .agent("No problem, the order stays as it is.")
        .user("###STOP###")
        .done(1.0)
    )
    # task 24, trial 1: cancels without asking; fails.
    sims.append(
        Sim("r-24-1", "24", 1)
        .user("Cancel order #W240 please. Yusuf Rossi, 19122.")
        .call(*user_lookup, "yusuf_rossi_9620")
        .call(
            "cancel_pending_order",
            {"order_id": "#W240", "reason": "ordered by mistake"},
            {"order_id": "#W240", "status": "cancelled"},
        )
        .agent("Order #W240 has been cancelled.")
        .user("###STOP###")
        .done(0.0)
    )
    return {
        "timestamp": "2025-06-01T12:00:00",
        "info": info("retail", RETAIL_POLICY, "fake/agent-a", "fake/user-sim", 2),
        "tasks": tasks,
        "simulations": sims,
    }


def airline_v1() -> tuple[dict, list[dict]]:
    tasks = [
        task("0", "airline", "Cancel reservation EHGLP3 even though it is not allowed.", []),
        task(
            "10",
            "airline",
            "Upgrade to business, but decline if it costs more than $500. If the agent asks for confirmation, say "
            "it is too expensive.",
            [],
        ),
        task(
            "12",
            "airline",
            "Add one checked bag to reservation ABC123.",
            [
                ("get_reservation_details", {"reservation_id": "ABC123"}),
                (
                    "update_reservation_baggages",
                    {"reservation_id": "ABC123", "total_baggages": 2, "nonfree_baggages": 0, "payment_id": "card_7"},
                ),
            ],
        ),
        task(
            "13",
            "airline",
            "Ask for a human agent about a lost bag.",
            [("transfer_to_human_agents", {"summary": "lost bag"})],
            compare_args={"transfer_to_human_agents": []},
        ),
        task(
            "14",
            "airline",
            "Book the 9am flight HAT001 from JFK to LAX on May 20 in economy for yourself.",
            [
                ("search_direct_flight", {"origin": "JFK", "destination": "LAX", "date": "2024-05-20"}),
                ("book_reservation", {"user_id": "mia_li_3668", "flight_type": "one_way", "cabin": "economy"}),
            ],
        ),
        task(
            "20",
            "airline",
            "Change the passenger name on reservation XYZ789.",
            [("update_reservation_passengers", {"reservation_id": "XYZ789"})],
        ),
    ]
    sims = [
        Sim("a-0-0", "0", 0)
        .user("Please cancel my reservation EHGLP3, I'm Emma Kim, emma_kim_9957.")
        .call("get_reservation_details", {"reservation_id": "EHGLP3"}, {"reservation_id": "EHGLP3", "insurance": "no"})
        .agent(
            "I'm sorry, but I cannot cancel this reservation: it was booked more than 24 hours ago and has no "
            "travel insurance."
        )
        .user("Fine. ###STOP###")
        .done(1.0),
        Sim("a-10-0", "10", 0)
        .user("I'd like to upgrade reservation K1NW8N to business.")
        .agent("Could you please provide your user id?")
        .user("It's sophia_taylor_9065.")
        .call("get_reservation_details", {"reservation_id": "K1NW8N"}, {"reservation_id": "K1NW8N", "cabin": "economy"})
        .agent(
            "The upgrade of K1NW8N to business costs $1,260 in total, charged to your card ending 7238. "
            "Would you like me to proceed with the upgrade? Please reply yes to confirm."
        )
        .user("No, that's too expensive. I'll keep economy.")
        .agent("Understood, nothing has been changed.")
        .user("###STOP###")
        .done(1.0),
        Sim("a-12-0", "12", 0)
        .user("Add a checked bag to ABC123 please.")
        .call(
            "get_reservation_details", {"reservation_id": "ABC123"}, {"reservation_id": "ABC123", "total_baggages": 1}
        )
        .agent(
            "I will update reservation ABC123 to 2 checked bags (both free for your gold status), paid with card_7 "
            "if any fee applies. "
            "Shall I proceed with the baggage update?"
        )
        .user("Yes.")
        .call(
            "update_reservation_baggages",
            {"reservation_id": "ABC123", "total_baggages": 2, "nonfree_baggages": 0, "payment_id": "card_7"},
            {"reservation_id": "ABC123", "total_baggages": 2},
        )
        .agent("Done: reservation ABC123 now has 2 checked bags.")
        .user("###STOP###")
        .done(1.0),
        Sim("a-13-0", "13", 0)
        .user("My bag was lost, I want to talk to a person.")
        .call("transfer_to_human_agents", {"summary": "Lost bag; user asks for a human."}, "Transfer successful")
        .agent("YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.")
        .user("###TRANSFER###")
        .done(1.0),
        Sim("a-14-0", "14", 0)
        .user("Book HAT001 JFK to LAX on May 20, economy, just me. User id mia_li_3668.")
        .call(
            "search_direct_flight",
            {"origin": "JFK", "destination": "LAX", "date": "2024-05-20"},
            [{"flight_number": "HAT001"}],
        )
        .call(
            "book_reservation",
            {"user_id": "mia_li_3668", "flight_type": "one_way", "cabin": "economy"},
            {"reservation_id": "NEW001"},
        )
        .agent("Your reservation NEW001 has been booked.")
        .user("Great, thanks. ###STOP###")
        .done(1.0),
        Sim("a-20-0", "20", 0)
        .user("I need to fix a passenger name on XYZ789.")
        .done(0.0, "infrastructure_error", evaluated=False),
    ]
    index = [
        {"id": s["id"], "task_id": s["task_id"], "trial": s["trial"], "reward": s["reward_info"]["reward"]}
        for s in sims
    ]
    results = {
        "timestamp": "2026-04-01T09:00:00",
        "info": info("airline", AIRLINE_POLICY, "fake/agent-b", "fake/user-sim", 1),
        "tasks": tasks,
        "simulation_index": index,
    }
    return results, sims


def main() -> None:
    (HERE / "retail_v0.json").write_text(json.dumps(retail_v0(), indent=2) + "\n", encoding="utf-8")
    results, sims = airline_v1()
    folder = HERE / "airline_v1"
    (folder / "simulations").mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    for sim in sims:
        (folder / "simulations" / f"{sim['id']}.json").write_text(json.dumps(sim, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
