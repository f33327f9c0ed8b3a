"""Every op record's callables have a Python binding (issue 33): each
"ditto::x(...)" is ditto.x, "ditto::nn::functional::x" is
ditto.nn.functional.x, "ditto::linalg::x" is ditto.linalg.x,
"Tensor::x" is the method ditto.Tensor.x, and "ditto::nn::X" the module
class ditto.nn.X (users' own ops, family "custom", are skipped). The records
not bound yet are listed below; the list can only shrink: a listed record
that is bound fails too."""
import re

import ditto

# Records whose callables are not all bound yet, with what is missing
# (empty since the nn module classes landed: ditto.nn.Dropout, RNN, ...).
NOT_YET_BOUND = {}

CALLABLE = re.compile(r"\b(ditto(?:::\w+)+|Tensor::\w+)")


def python_object(qualified):
    parts = qualified.split("::")
    if parts[0] == "Tensor":
        obj = ditto.Tensor
    else:
        obj = ditto
    for p in parts[1:]:
        obj = getattr(obj, p, None)
        if obj is None:
            return None
    return obj


def missing_callables(record):
    names = CALLABLE.findall(" ".join(record["callables"]))
    assert names, f"record {record['name']} names no callable"
    return sorted({n for n in names if python_object(n) is None})


def test_records_are_exposed():
    recs = ditto.op_records()
    assert len(recs) > 150
    r = {x["name"]: x for x in recs}["add"]
    assert r["family"] == "elementwise"
    assert "Tensor::add(b)" in r["callables"]
    assert r["determinism"] == "always"


def test_every_record_is_bound():
    unbound = {}
    for rec in ditto.op_records():
        if rec["family"] == "custom":
            continue  # a user's ditto.autograd.Function (test_function.py)
        missing = missing_callables(rec)
        if missing and rec["name"] not in NOT_YET_BOUND:
            unbound[rec["name"]] = missing
    assert not unbound, f"records without a Python binding: {unbound}"


def test_the_not_yet_bound_list_only_shrinks():
    names = {r["name"] for r in ditto.op_records()}
    stale = [n for n in NOT_YET_BOUND if n not in names]
    assert not stale, f"not records: {stale}"
    now_bound = [r["name"] for r in ditto.op_records()
                 if r["name"] in NOT_YET_BOUND and not missing_callables(r)]
    assert not now_bound, f"bound now, take them off NOT_YET_BOUND: {now_bound}"
