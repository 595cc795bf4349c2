"""ffikit's serializer of Dask's "dask" family (ffikit/_dask.py), at the level of Dask's
serialize/deserialize: no cluster started here (test_engines_dask.py starts one).

Dask's scheduler pickles at protocol 4, where a tensor's bytes would go in band; the
serializer hands them to Dask as frames, and loading wraps the frames without a copy.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import ffikit

protocol = pytest.importorskip("distributed.protocol", reason="distributed is not installed (requirements-engines.txt)")

from ffikit import _dask  # noqa: E402


def roundtrip(x):
    header, frames = protocol.serialize(x, serializers=("dask",), on_error="raise")
    assert header["serializer"] == "dask"
    return header, frames, protocol.deserialize(header, frames)


def address(t) -> int:
    return np.from_dlpack(t).__array_interface__["data"][0]


def test_importing_distributed_registers_the_serializer():
    assert _dask._registered
    assert _dask._hook not in sys.meta_path


def test_a_tensor_travels_as_one_frame_and_loads_over_it():
    t = ffikit.from_dlpack(np.arange(1 << 16, dtype=np.float32))
    header, frames, back = roundtrip(t)
    assert len(frames) == 1 and memoryview(frames[0]).nbytes == 4 << 16
    assert len(header["sub-header"]["ffikit-pickle"]) < 1024  # the stream, without the bytes
    assert type(back) is ffikit.Tensor and back.shape == (1 << 16,) and str(back.dtype) == "float32"
    assert np.array_equal(np.from_dlpack(back), np.arange(1 << 16, dtype=np.float32))
    assert address(back) == np.frombuffer(frames[0], np.uint8).__array_interface__["data"][0]  # no copy
    del back


def test_read_only_stays_read_only_and_writable_stays_writable():
    src = np.arange(64, dtype=np.int64)
    src.flags.writeable = False
    _, frames, back = roundtrip(ffikit.from_dlpack(src))
    assert back.is_read_only
    # a frame that arrives writable (as from the network) of a read-only value: made read-only, no copy
    header, frames = protocol.serialize(ffikit.from_dlpack(src), serializers=("dask",))
    back = protocol.deserialize(header, [bytearray(f) for f in frames])
    assert back.is_read_only
    _, _, back = roundtrip(ffikit.from_dlpack(np.zeros(8, np.float64)))
    assert not back.is_read_only
    del back


def test_containers_and_objects_pass_their_tensors_as_frames():
    t = ffikit.from_dlpack(np.ones(1024, np.float64))
    value = ffikit.List([t, ffikit.Map({"t": t, "n": 3}), ffikit.Array([1, "two"]), ffikit.Dict({1: t})])
    header, frames, back = roundtrip(value)
    assert len(frames) == 1  # one tensor, held four times: one frame
    assert type(back) is ffikit.List and back[1]["n"] == 3 and back[2] == ffikit.Array([1, "two"])
    assert back[0].same_as(back[1]["t"]) and back[0].same_as(back[3][1])
    _, _, got = roundtrip(ffikit.testing.TestIntPair(1, 2))
    assert (got.a, got.b) == (1, 2)
    back.clear()
    value.clear()


def test_a_global_function_travels_by_name():
    f = ffikit.get_global_func("testing.echo")
    _, frames, back = roundtrip(f)
    assert frames == [] and back.same_as(f) and back(5) == 5


def test_what_does_not_pickle_fails_in_dask_too(caplog):
    f = ffikit.convert(lambda x: x)
    with pytest.raises(TypeError, match="Could not serialize") as e:
        protocol.serialize(f, serializers=("dask",), on_error="raise")
    assert "not registered as a global Function" in str(e.value.__cause__)  # ffikit's reason, kept
    caplog.clear()  # distributed logs the failure with its traceback, which holds f


@pytest.mark.parametrize("first", ["ffikit", "distributed"])
def test_either_import_order_registers(first):
    other = "distributed" if first == "ffikit" else "ffikit"
    code = (f"import sys, {first}, {other}\n"
            "from ffikit import _dask\n"
            "from distributed.protocol.serialize import dask_serialize\n"
            "import ffikit\n"
            "print(_dask._registered, _dask._hook in sys.meta_path,\n"
            "      dask_serialize.dispatch(ffikit.Tensor) is _dask._dumps)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=120)
    assert out.stdout.decode().split() == ["True", "False", "True"], out.stderr.decode()[-2000:]


def test_ffikit_alone_imports_no_distributed():
    code = "import sys, ffikit\nprint('distributed' in sys.modules, 'dask' in sys.modules)\n"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=120)
    assert out.stdout.decode().split() == ["False", "False"], out.stderr.decode()[-2000:]


def test_what_plain_pickle_cannot_write_goes_through_cloudpickle():
    class Local:  # a local class: plain pickle cannot write it, cloudpickle can
        def __init__(self, n):
            self.n = n

    t = ffikit.from_dlpack(np.arange(16, dtype=np.int32))
    header, frames, back = roundtrip(ffikit.List([Local(7), t]))
    assert len(frames) == 1  # the tensor still out of band
    assert back[0].n == 7 and np.array_equal(np.from_dlpack(back[1]), np.arange(16, dtype=np.int32))
    back.clear()
