"""The run store's draws above 0 (``--repeats``): a ``samples`` table beside ``cases``."""

import sqlite3

from tooldiag.store import RunStore
from tooldiag.store.rundb import DB_NAME, encode_case
from tooldiag.trajectory import CaseTrajectory, Emission, Grade, RunConfig, Step, Turn

CONFIG = RunConfig(suite="demo", model="ref/x", categories=["a", "b"])


def _trajectory(case_id: str, text: str = "hi", category: str = "a") -> CaseTrajectory:
    return CaseTrajectory(
        case_id=case_id, category=category, turns=[Turn(index=0, steps=[Step(emission=Emission(text=text))])]
    )


def _tables(db) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_draw_zero_stays_in_cases_and_no_samples_table_appears(tmp_path):
    with RunStore.create_or_resume(tmp_path / "r", CONFIG) as store:
        store.put_case(_trajectory("a_1"), Grade(passed=True))
        store.put_case(_trajectory("a_2"), Grade(passed=True), 0)
        assert store.finished_units() == {("a_1", 0), ("a_2", 0)}
        assert store.sample_counts() == {"a_1": 1, "a_2": 1}
        assert [(r.case_id, r.sample) for r in store.iter_samples()] == [("a_1", 0), ("a_2", 0)]
    assert _tables(tmp_path / "r" / DB_NAME) == {"meta", "cases"}


def test_further_draws_are_their_own_rows_read_back_in_case_then_sample_order(tmp_path):
    order = {"b_1": 0, "a_10": 1, "a_2": 2}.__getitem__  # a suite's own id order, not string order
    with RunStore.create_or_resume(tmp_path / "r", CONFIG, sort_key=order) as store:
        for sample in (2, 0, 1):
            store.put_case(_trajectory("a_2", f"a2-{sample}"), Grade(passed=sample != 1), sample)
        store.put_case(_trajectory("a_10", "a10-0"), Grade(passed=True))
        store.put_case(_trajectory("b_1", "b1-1", "b"), None, 1)  # an error row of draw 1
        store.put_encoded_case(encode_case(_trajectory("b_1", "b1-0", "b"), Grade(passed=False)))
        got = [(r.case_id, r.sample, r.status, r.passed, r.trajectory.turns[0].steps[0].emission.text)
               for r in store.iter_samples()]  # fmt: skip
        assert got == [
            ("b_1", 0, "done", False, "b1-0"),
            ("b_1", 1, "error", None, "b1-1"),
            ("a_10", 0, "done", True, "a10-0"),
            ("a_2", 0, "done", True, "a2-0"),
            ("a_2", 1, "done", False, "a2-1"),
            ("a_2", 2, "done", True, "a2-2"),
        ]
        # the one-record-per-case readers see draw 0 only, as before repeats
        assert [r.case_id for r in store.iter_cases()] == ["b_1", "a_10", "a_2"]
        assert all(r.sample == 0 for r in store.iter_cases()) and store.count() == 3
        assert store.finished_ids() == {"b_1", "a_10", "a_2"}
        assert store.finished_units() == {("b_1", 0), ("a_10", 0), ("a_2", 0), ("a_2", 1), ("a_2", 2)}
        assert store.sample_counts() == {"b_1": 2, "a_10": 1, "a_2": 3}
        assert store.get_case("a_2", 2).trajectory.turns[0].steps[0].emission.text == "a2-2"
        assert store.get_case("a_10", 1) is None
        # counts pool every draw: 5 done (4 passed) in a, 1 done + 1 error in b
        assert store.status_counts() == {"a": {"done": 4, "passed": 3, "error": 0},
                                         "b": {"done": 1, "passed": 0, "error": 1}}  # fmt: skip
        # a retried error row of a draw replaces it
        store.put_case(_trajectory("b_1", "b1-1 again", "b"), Grade(passed=True), 1)
        assert store.get_case("b_1", 1).status == "done" and store.sample_counts()["b_1"] == 2
        assert [s["cases"] for s in store.sessions()] == []  # no writer given: no session


def test_a_reader_of_the_cases_table_alone_sees_each_case_once_as_its_first_draw(tmp_path):
    """What a tooldiag from before repeats reads of a repeats store: its first draw, whole."""
    with RunStore.create_or_resume(tmp_path / "r", CONFIG) as store:
        for sample in range(3):
            store.put_case(_trajectory("a_1", f"draw {sample}"), Grade(passed=True), sample)
    with sqlite3.connect(tmp_path / "r" / DB_NAME) as conn:
        assert conn.execute("SELECT COUNT(*) FROM cases").fetchone() == (1,)
        assert conn.execute("SELECT COUNT(*), MIN(sample), MAX(sample) FROM samples").fetchone() == (2, 1, 2)
        meta = dict(conn.execute("SELECT key, value FROM meta"))
    assert meta["schema_version"] == "1"  # no migration: an old reader opens it


def test_sessions_count_every_draw_they_store(tmp_path):
    with RunStore.create_or_resume(tmp_path / "r", CONFIG, writer={"tooldiag": "x"}) as store:
        store.put_case(_trajectory("a_1"), Grade(passed=True))
        store.put_case(_trajectory("a_1"), Grade(passed=True), 1)
        store.put_case(_trajectory("a_1"), None, 2)
    with RunStore.open(tmp_path / "r") as store:
        (session,) = store.sessions()
        assert (session["cases"], session["errors"]) == (3, 1)
