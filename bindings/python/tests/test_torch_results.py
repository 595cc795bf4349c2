"""Tensors go back to the framework that gave them: a Function called with torch tensors
returns torch tensors (through torch's DLPack C exchange API), also as the elements of the
containers it returns, as tvm_ffi does; Function.exchange_tensors = False opts out."""
from __future__ import annotations

import numpy as np
import pytest

import ffikit
from ffikit import testing

torch = pytest.importorskip("torch")


@pytest.fixture
def t():
    return torch.arange(6, dtype=torch.float32).reshape(2, 3)


def test_a_tensor_result_comes_back_as_the_torch_tensor_sharing_memory(t):
    r = testing.echo(t)
    assert type(r) is torch.Tensor
    assert r.data_ptr() == t.data_ptr() and r.shape == t.shape and r.dtype == t.dtype
    r[0, 0] = 42.0
    assert t[0, 0] == 42.0  # zero copy
    assert type(testing.schema_id_tensor(t)) is torch.Tensor
    assert type(testing.apply(lambda x: x, t)) is torch.Tensor  # through a Python callback too


def test_tensors_nested_in_arguments_count(t):
    assert type(testing.echo([t])[0]) is torch.Tensor
    assert type(testing.echo({"k": t})["k"]) is torch.Tensor


def test_returned_containers_give_torch_tensors_for_their_elements(t):
    a = testing.make_array_with_tensor(t)
    assert type(a) is ffikit.Array
    assert type(a[0]) is torch.Tensor and a[0].data_ptr() == t.data_ptr()
    assert [type(x) for x in a] == [torch.Tensor] and [type(x) for x in reversed(a)] == [torch.Tensor]
    assert type(a[0:1][0]) is torch.Tensor
    for mapping in (testing.make_map_with_tensor(t), testing.make_dict_with_tensor(t)):
        assert type(mapping["tensor"]) is torch.Tensor
        assert type(mapping.get("tensor")) is torch.Tensor
        assert [type(v) for v in mapping.values()] == [torch.Tensor]
        assert [type(v) for _, v in mapping.items()] == [torch.Tensor]
    d = testing.make_dict_with_tensor(t)
    assert type(d.pop("tensor")) is torch.Tensor
    lst = testing.make_list_with_tensor(t, 7)
    assert type(lst) is ffikit.List and type(lst[0]) is torch.Tensor and lst[1] == 7
    assert [type(x) for x in lst][0] is torch.Tensor and type(lst[:1][0]) is torch.Tensor
    assert type(lst.pop(0)) is torch.Tensor


def test_containers_nested_in_a_returned_container_give_torch_tensors_too(t):
    lst = testing.make_list_with_tensor(t, [t, {"k": t}])
    inner = lst[1]
    assert type(inner) is ffikit.Array
    assert type(inner[0]) is torch.Tensor and type(inner[1]["k"]) is torch.Tensor


def test_a_returned_container_passed_back_lends_its_framework(t):
    a = testing.make_array_with_tensor(t)
    r = testing.echo(a)
    assert type(r[0]) is torch.Tensor
    assert type(testing.echo(ffikit.Array([ffikit.from_dlpack(t)]))[0]) is ffikit.Tensor  # made in Python: no framework


def test_exchange_tensors_false_returns_ffikit_tensors(t):
    f = ffikit.get_global_func("testing.echo")
    assert f.exchange_tensors is True
    f.exchange_tensors = False
    r = f(t)
    assert type(r) is ffikit.Tensor and r.data_ptr() == t.data_ptr()
    g = ffikit.get_global_func("testing.make_array_with_tensor")
    g.exchange_tensors = False
    assert type(g(t)[0]) is ffikit.Tensor
    with pytest.raises(AttributeError):
        del f.exchange_tensors


def test_other_arguments_give_ffikit_tensors():
    n = np.zeros(3)
    assert type(testing.echo(n)) is ffikit.Tensor  # numpy offers no exchange table
    ft = ffikit.from_dlpack(n)
    assert type(testing.echo(ft)) is ffikit.Tensor
    assert type(testing.make_array_with_tensor(ft)[0]) is ffikit.Tensor


def test_the_last_torch_tensor_argument_decides_and_results_keep_no_tensor_alive(t):
    # A call with torch tensors among other values: only the tensor results change type.
    r = testing.echo([1, "x", t])
    assert r[0] == 1 and r[1] == "x" and type(r[2]) is torch.Tensor
    del r
    assert testing.nop(t) is None


def test_a_tensor_torch_cannot_hold_comes_back_as_an_ffikit_tensor(t):
    # PyTorch has no negative strides: importing one throws a C++ exception through the C
    # exchange table, which ended the process before ffikit kept such a tensor itself.
    backwards = ffikit.from_dlpack(np.arange(6.0)[::-1])
    r = testing.apply(lambda x, y: y, t, backwards)
    assert type(r) is ffikit.Tensor
    assert r.strides == (-1,)
    assert np.asarray(r).tolist() == [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]
    arr = testing.apply(lambda x, y: [x, y], t, backwards)
    assert isinstance(arr[0], torch.Tensor) and type(arr[1]) is ffikit.Tensor


def test_convert_func_with_tensor_cls_hands_the_callback_framework_tensors(t):
    seen = []

    def callback(a, b, items):
        seen.append((type(a), type(b), type(items[0])))
        return a.sum().item() + b

    f = ffikit.convert_func(callback, tensor_cls=torch.Tensor)
    # Called from C (testing.apply) with an ffikit.Tensor and a torch.Tensor: both arrive as torch's,
    # as do tensors inside a container argument; other values as usual.
    ft = ffikit.from_dlpack(t)
    assert testing.apply(f, ft, 1, [t]) == 16.0
    assert seen == [(torch.Tensor, int, torch.Tensor)]
    assert testing.apply(f, t, 2.5, [ft]) == 17.5
    # Sharing memory: a write through the callback's tensor shows in the original.
    g = ffikit.convert_func(lambda a: a.add_(1) is a, tensor_cls=torch.Tensor)
    assert testing.apply(g, ft) is True and t[0, 0].item() == 1.0
    # Without tensor_cls: ffikit.Tensor, as convert(callable) gives.
    h = ffikit.convert_func(lambda a: type(a).__name__)
    assert testing.apply(h, ft) == "Tensor"
