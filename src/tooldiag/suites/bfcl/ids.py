"""BFCL case-id order: the order BFCL lists its cases in, for everything we write or read back.

BFCL ids are ``<category prefix>_<number>`` (``multi_turn_base_12``); BFCL's own files list
them by category, then by number, so ``multi_turn_base_2`` comes before
``multi_turn_base_10`` although plain string order puts it after. The run store knows no
suite and sorts plain strings unless told otherwise; BFCL code passes
:func:`case_id_order` when it opens a run (``RunStore.open(run_dir, sort_key=case_id_order)``).
"""

from __future__ import annotations


def case_id_order(case_id: str) -> tuple[str, int, str]:
    """Sort key for BFCL case ids: prefix, then the trailing number.

    An id without a trailing number (``foo``, ``live_simple_0-0-0``) sorts by the whole id,
    before numbered ids of the same prefix.
    """
    prefix, _, number = case_id.rpartition("_")
    return (prefix, int(number), "") if number.isdigit() else (case_id, -1, case_id)
