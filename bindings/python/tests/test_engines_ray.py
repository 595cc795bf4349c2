"""ffikit values through a real Ray (issue 26): one local Ray started for the module.

- ray.put/ray.get of a tensor: no copy. The tensor that comes back is read-only (as Ray's
  numpy arrays are) and its bytes lie in Ray's shared object store (the plasma mapping):
  two gets of one ref see the same bytes, and the get allocates nothing of the tensor's size.
  Containers holding a tensor hand it out-of-band the same way.
- Remote tasks and an actor take and return Tensor, Array, Map, List, Dict and reflected
  objects; a global Function travels by its registry name and runs in the worker.
- An ffikit error raised inside a task reaches the caller as its Python class, with the
  ffikit kind and message.
- A shared-memory tensor (ffikit.empty_shared) travels by name: Ray stores a handle of a few
  hundred bytes, the workers write into the same pages, and the name goes when the last
  holder (here an actor) lets go.

The module skips, with the reason, when Ray is not installed (a test dependency:
requirements-engines.txt, installed by scripts/bootstrap.sh), cannot start here, or under
the ASan run (Ray starts its own binaries, which the preloaded sanitizer runtime breaks).
"""
from __future__ import annotations

import gc
import os
import shutil
import tempfile
import time
import tracemalloc

import numpy as np
import pytest

import ffikit
import ffikit.testing as T

if os.environ.get("FFIKIT_SANITIZED"):
    pytest.skip("Ray tests sit out the sanitizer run: Ray spawns its own binaries, which the preloaded "
                "ASan runtime breaks", allow_module_level=True)
ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -r requirements-engines.txt)")

import engine_values as E  # noqa: E402 - after the skips: the workers import it too

pytestmark = pytest.mark.usefixtures("engine_settled")  # conftest: lets the engine let go first

OBJECT_STORE_BYTES = 300 << 20
HERE = os.path.dirname(os.path.abspath(__file__))




@pytest.fixture(scope="module")
def cluster():
    """One local Ray for the module: 2 CPUs, no dashboard, its sockets under a short /tmp
    directory (a unix socket path must stay under 108 bytes; Bazel's TMPDIR is long)."""
    tmp = tempfile.mkdtemp(prefix="ffkray", dir="/tmp")
    # The workers are children of the raylet, which inherits this environment: with this
    # directory on PYTHONPATH they import engine_values (and ffikit, found the same way as here).
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (HERE, saved) if p)
    try:
        ray.init(num_cpus=2, include_dashboard=False, _temp_dir=tmp, object_store_memory=OBJECT_STORE_BYTES,
                 log_to_driver=False, logging_level="ERROR")
    except Exception as e:  # noqa: BLE001 - any failure to start means: skip, saying why
        _remove_tree(tmp)
        pytest.skip(f"Ray cannot start here: {type(e).__name__}: {e}")
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved
    try:
        yield ray
    finally:
        ray.shutdown()
        _remove_tree(tmp)


def _remove_tree(path: str) -> None:
    """Removes Ray's temp directory: its log and agent processes may still write there for a
    moment after shutdown, so the removal is retried for up to 5 s."""
    for _ in range(50):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            return
        time.sleep(0.1)


@pytest.fixture(scope="module")
def tasks(cluster):
    """The remote versions of engine_values' functions, and an actor class that keeps what
    it is given."""

    class Keeper:
        def __init__(self):
            self.kept = []

        def keep(self, v):
            self.kept.append(v)
            return E.worker_view(v)

        def give(self, i):
            return self.kept[i]

        def drop_all(self):
            self.kept.clear()
            return gc.collect()

    class NS:
        identity = ray.remote(E.identity)
        worker_view = ray.remote(E.worker_view)
        double = ray.remote(E.double)
        call_global = ray.remote(E.call_global)
        call = ray.remote(E.call)
        add_one_badly = ray.remote(E.add_one_badly)
        raise_kind = ray.remote(E.raise_kind)
        write = ray.remote(E.write)
        collect = ray.remote(E.collect)
        keeper = ray.remote(Keeper)

    return NS


def _big_tensor():
    return ffikit.from_dlpack(np.arange(E.BIG, dtype=np.float32))


def _in_object_store(t) -> bool:
    path = E.mapping_path(t.data_ptr())
    return path is not None and "plasma" in path


# ---- ray.put / ray.get: no copy ----------------------------------------------------------------


def test_get_gives_a_read_only_tensor_in_the_object_store(cluster):
    ref = ray.put(_big_tensor())
    a = ray.get(ref)
    b = ray.get(ref)
    assert isinstance(a, ffikit.Tensor) and a.shape == (E.BIG,) and str(a.dtype) == "float32"
    assert np.array_equal(np.asarray(a), np.arange(E.BIG, dtype=np.float32))
    assert a.is_read_only and b.is_read_only
    assert _in_object_store(a), f"the tensor's bytes lie in {E.mapping_path(a.data_ptr())}, not Ray's object store"
    assert a.data_ptr() == b.data_ptr(), "two gets of one ref must see the same bytes in the store"
    with pytest.raises((ValueError, TypeError, BufferError)):
        np.asarray(a)[0] = 1.0  # read-only, as Ray's numpy arrays are
    del a, b, ref


def test_get_allocates_nothing_of_the_tensors_size(cluster):
    # 16 MiB: Ray's get itself allocates about 1 MiB (the same for any size); a copy of the
    # tensor would add all 16.
    t = ffikit.from_dlpack(np.arange(4 * E.BIG, dtype=np.float32))
    nbytes = t.nbytes()
    ref = ray.put(t)
    del t
    ray.get(ref)  # the first get maps the store; measure a later one
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        got = ray.get(ref)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - start < nbytes // 4, f"ray.get allocated {peak - start} bytes for a {nbytes}-byte tensor"
    assert float(np.asarray(got)[-1]) == 4 * E.BIG - 1
    del got, ref


def test_a_non_contiguous_tensor_comes_back_equal(cluster):
    base = np.arange(E.BIG, dtype=np.float32).reshape(1024, 1024)
    t = ffikit.from_dlpack(base).transpose(0, 1)
    assert not t.is_contiguous()
    got = ray.get(ray.put(t))
    assert got.shape == (1024, 1024) and np.array_equal(np.asarray(got), base.T)
    del t, got


def test_containers_hand_their_tensors_to_the_object_store(cluster):
    t = _big_tensor()
    d = ray.get(ray.put(ffikit.Dict({"weights": t, "same": t, "n": 1})))
    w = d["weights"]
    assert _in_object_store(w), f"the tensor in the Dict lies in {E.mapping_path(w.data_ptr())}"
    assert w.is_read_only and np.array_equal(np.asarray(w), np.asarray(t))
    assert d["same"].data_ptr() == w.data_ptr(), "a tensor reached twice travels once"
    del t, d, w


# ---- Tasks and actors take and return ffikit values -------------------------------------------


KINDS = ["tensor", "array", "map", "list", "dict", "object", "derived"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_task_takes_and_returns_the_value(tasks, kind):
    v = E.make_values()[kind]
    want = E.plain(v)
    assert ray.get(tasks.worker_view.remote(v)) == (type(v).__name__, want)
    back = ray.get(tasks.identity.remote(v))
    assert type(back) is type(v) and E.plain(back) == want
    via_ref = ray.get(tasks.identity.remote(ray.put(v)))  # an ObjectRef argument: resolved in the worker
    assert E.plain(via_ref) == want
    del v, back, via_ref


def test_a_task_makes_a_tensor_and_returns_it(tasks):
    t = _big_tensor()
    got = ray.get(tasks.double.remote(t))
    assert isinstance(got, ffikit.Tensor) and float(np.asarray(got)[3]) == 6.0
    assert _in_object_store(got), "a returned tensor lies in the object store too"
    del t, got


def test_an_actor_keeps_and_gives_back_every_kind(tasks):
    keeper = tasks.keeper.remote()
    values = E.make_values()
    for i, kind in enumerate(KINDS):
        v = values[kind]
        assert ray.get(keeper.keep.remote(v)) == (type(v).__name__, E.plain(v))
        back = ray.get(keeper.give.remote(i))
        assert type(back) is type(v) and E.plain(back) == E.plain(v), kind
    del values, v, back
    ray.get(keeper.drop_all.remote())
    ray.kill(keeper)


def test_a_task_calls_a_global_function_by_name(tasks):
    assert ray.get(tasks.call_global.remote("testing.add_one", 41)) == 42
    assert E.plain(ray.get(tasks.call_global.remote("testing.echo", ffikit.Array([1, 2])))) == ("Array", [1, 2])


def test_a_global_function_travels_by_name(tasks):
    assert ray.get(tasks.call.remote(T.add_one, 1)) == 2


# ---- Errors keep their kind --------------------------------------------------------------------


def test_an_ffikit_type_error_in_a_task_reaches_the_caller(tasks):
    with pytest.raises(TypeError) as info:
        ray.get(tasks.add_one_badly.remote())
    cause = info.value.cause if hasattr(info.value, "cause") else info.value
    assert isinstance(cause, TypeError)
    err = cause.__ffikit_error__
    assert isinstance(err, ffikit.Error) and err.kind == "TypeError"
    assert "testing.add_one" in err.message and "Expected `int` but got `str`" in err.message
    del info, cause, err


@pytest.mark.parametrize("kind,cls", [("ValueError", ValueError), ("IndexError", IndexError),
                                      ("mylib.Broken", RuntimeError)])
def test_an_error_raised_in_a_task_keeps_its_kind(tasks, kind, cls):
    with pytest.raises(cls) as info:
        ray.get(tasks.raise_kind.remote(kind, "it broke"))
    cause = info.value.cause if hasattr(info.value, "cause") else info.value
    assert type(cause) is cls
    assert cause.__ffikit_error__.kind == kind and cause.__ffikit_error__.message == "it broke"
    del info, cause


# ---- Shared-memory tensors travel by name ------------------------------------------------------


def test_a_shared_tensor_travels_by_name_and_goes_with_its_last_holder(tasks):
    t = ffikit.empty_shared((4, 8), "float32")
    np.asarray(t)[:] = 0
    name = t.shared_name
    assert E.shm_exists(name)
    ctx = ray._private.worker.global_worker.get_serialization_context()
    assert ctx.serialize(t).total_bytes < 1024, "Ray stores a handle, not the bytes"

    # A task writes through its attachment; the driver sees it in the same pages.
    ref = ray.put(t)
    assert ray.get(tasks.write.remote(ref, (1, 2), 5.0)) == 5.0
    assert np.asarray(t)[1, 2] == 5.0
    back = ray.get(ref)
    assert back.shared_name == name and not back.is_read_only
    del back, ref

    # An actor attaches and keeps it; the driver lets go; the name stays until the actor does.
    keeper = tasks.keeper.remote()
    assert ray.get(keeper.keep.remote(t))[0] == "Tensor"
    del t
    gc.collect()
    assert E.shm_exists(name), "the actor still holds the segment"
    ray.get(keeper.drop_all.remote())

    def nudge():
        ray.get([tasks.collect.remote() for _ in range(2)])

    assert E.wait_until(lambda: not E.shm_exists(name), nudge), f"{name} stays after every holder let go"
    ray.kill(keeper)
