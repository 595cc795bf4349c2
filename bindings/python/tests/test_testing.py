"""ffikit.testing: the testing.* globals tvm_ffi code relies on, and what they check."""
from __future__ import annotations

import os
import subprocess
import sys
import traceback

import numpy as np
import pytest

import ffikit
from ffikit import testing


def test_testing_globals_exist_right_after_import_ffikit():
    # A fresh interpreter: the suite's conftest has imported ffikit.testing already.
    code = (
        "import ffikit\n"
        "f = ffikit.get_global_func('testing.echo')\n"
        "assert f(7) == 7, f(7)\n"
        "assert ffikit.get_global_func('testing.test_raise_error', allow_missing=True) is not None\n"
        "assert 'testing.add_one' in ffikit.list_global_func_names()\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr


def test_test_raise_error_raises_from_a_frame_named_test_raise_error():
    with pytest.raises(ValueError) as info:
        testing.test_raise_error("ValueError", "boom")
    assert str(info.value) == "boom"
    bt = info.value.__ffikit_error__.backtrace
    assert "at TestRaiseError (" in bt, bt
    names = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
    assert "TestRaiseError" in names, names
    with pytest.raises(KeyError):
        testing.test_raise_error("KeyError", "k")
    with pytest.raises(TypeError) as info:
        testing.test_raise_error(1, "m")
    assert str(info.value) == (
        "Mismatched type on argument #0 when calling: `testing.test_raise_error(0: str, 1: str) -> None`. "
        "Expected `str` but got `int`"
    )


def test_schema_id_str_containers_check_and_return_their_argument():
    r = testing.schema_id_list_str(["a", "a longer string"])
    assert isinstance(r, ffikit.List) and list(r) == ["a", "a longer string"]
    lst = ffikit.List(["x"])
    assert testing.schema_id_list_str(lst).same_as(lst)
    with pytest.raises(TypeError, match=r"Expected `List<str>` but got `Array` \(item #0: expected `str` but got `int`\)"):
        testing.schema_id_list_str([1])
    m = testing.schema_id_map_str_str({"a": "b"})
    assert isinstance(m, ffikit.Map) and dict(m) == {"a": "b"}
    with pytest.raises(TypeError, match="Expected `Map<str, str>`"):
        testing.schema_id_map_str_str({"a": 1})
    d = testing.schema_id_dict_str_str(ffikit.Dict({"a": "b"}))
    assert isinstance(d, ffikit.Dict) and dict(d) == {"a": "b"}
    assert isinstance(testing.schema_id_dict_str_str({"a": "b"}), ffikit.Dict)
    with pytest.raises(TypeError, match="Expected `Dict<str, str>`"):
        testing.schema_id_dict_str_str({"a": 1})


def test_make_empty_array_with_tensor_input_checks_its_argument():
    t = ffikit.from_dlpack(np.zeros(3, dtype="float32"))
    r = testing.make_empty_array_with_tensor_input(t)
    assert isinstance(r, ffikit.Array) and len(r) == 0
    assert len(testing.make_empty_array_with_tensor_input(np.zeros(2))) == 0
    with pytest.raises(TypeError) as info:
        testing.make_empty_array_with_tensor_input(1)
    assert str(info.value) == (
        "Mismatched type on argument #0 when calling: `testing.make_empty_array_with_tensor_input(0: Tensor) "
        "-> Array`. Expected `Tensor` but got `int`"
    )


def test_add_one_refuses_to_overflow():
    assert testing.add_one(2**63 - 2) == 2**63 - 1
    with pytest.raises(OverflowError, match=r"^`testing.add_one\(9223372036854775807\)`: the result does not fit"):
        testing.add_one(2**63 - 1)
    assert testing.add_one(-(2**63)) == -(2**63) + 1


def test_the_testing_types_are_c_classes_as_in_tvm_ffi():
    from ffikit import dataclasses as dc
    from ffikit.testing import TestIntPair, TestObjectBase, TestObjectDerived

    p = TestIntPair(1, 2)
    assert dc.is_dataclass(TestIntPair) and dc.is_dataclass(p)
    assert [f.name for f in dc.fields(TestIntPair)] == ["a", "b"]
    assert dc.asdict(p) == {"a": 1, "b": 2} and dc.astuple(p) == (1, 2)
    q = dc.replace(p, a=5)
    assert (q.a, q.b) == (5, 2) and TestIntPair.__match_args__ == ("a", "b")
    assert dc.asdict(TestObjectBase()) == {"v_i64": 10, "v_f64": 10.0, "v_str": "hello"}
    # Required fields first (tvm_ffi's order): v_map and v_array, then the parent's defaulted ones.
    d = TestObjectDerived({"k": 1}, [1, 2], 3)
    assert (dict(d.v_map), list(d.v_array), d.v_i64) == ({"k": 1}, [1, 2], 3)
