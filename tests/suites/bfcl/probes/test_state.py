"""The state dump SRI and CRI show the model: what it holds and that it is bounded."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tooldiag.suites.bfcl.probes.state import EMPTY_STATE, MAX_STATE_CHARS, RESULT_CHARS, state_dump


def test_empty_and_errors_only_give_the_paper_text():
    assert state_dump([]) == EMPTY_STATE
    assert state_dump([[("cd(folder='x')", '{"error": "cd: x: No such directory"}')]]) == EMPTY_STATE


def test_successful_calls_in_order_with_turn_tags():
    executed = [
        [("cd(folder='docs')", '{"current_working_directory": "docs"}')],
        [
            ("mv(source='a', destination='b')", "Error during execution: boom"),
            ("ls()", '{"current_directory_content":\n ["b"]}'),
        ],
    ]
    assert state_dump(executed).splitlines() == [
        '[t0] cd(folder=\'docs\') -> {"current_working_directory": "docs"}',
        '[t1] ls() -> {"current_directory_content": ["b"]}',
    ]


def test_long_results_are_cut_and_oldest_lines_dropped_first():
    executed = [[(f"cat(file_name='f{i}.txt')", "x" * 1000) for i in range(30)]]
    dump = state_dump(executed)
    lines = dump.splitlines()
    assert len(dump) <= MAX_STATE_CHARS
    assert lines[0].startswith("(... ") and "earlier results omitted" in lines[0]
    assert lines[-1].startswith("[t0] cat(file_name='f29.txt') -> ")
    assert all(len(line) <= len("[t0] cat(file_name='f29.txt') -> ") + RESULT_CHARS for line in lines[1:])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.tuples(st.text(max_size=400), st.text(max_size=3000)), max_size=8), max_size=5),
    st.integers(min_value=1, max_value=3000),
)
def test_dump_never_exceeds_its_budget(executed, budget):
    dump = state_dump(executed, budget)
    assert len(dump) <= budget or dump == EMPTY_STATE
