"""A :class:`UserError` crosses a process boundary whole: a Ray task or a ``--workers`` process that
raises one must give the driver the same ``error:`` line and fix (pickle once kept only the message)."""

from __future__ import annotations

import pickle

import pytest

from tooldiag.errors import JsonInputError, MissingDependencyError, StoreError, UserError


@pytest.mark.parametrize(
    "error",
    [
        UserError("no such case 'x'", hint="list them with tooldiag cases RUN"),
        MissingDependencyError("ray is not installed", hint="pip install 'tooldiag[ray]'"),
        StoreError("run.sqlite holds another run"),
        JsonInputError("log.jsonl line 3", "Expecting value", "one JSON object per line"),
    ],
)
def test_a_pickled_user_error_keeps_its_class_message_and_hint(error):
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert (copy.message, copy.hint, str(copy), copy.args) == (error.message, error.hint, str(error), error.args)
    assert copy.__dict__ == error.__dict__
