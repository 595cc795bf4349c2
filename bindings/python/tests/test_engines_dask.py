"""ffikit values through a real Dask distributed cluster (issue 26): one LocalCluster of two
worker processes, started for the module.

- Dask gets a tensor's bytes as a frame of their own (ffikit's serializer of Dask's family,
  or pickle protocol 5 out-of-band): the frame is the tensor's own memory, the header and
  pickle stream around it stay under 1 KiB, and deserializing wraps the frame without a copy.
- scatter, submit and gather move Tensor, Array, Map, List, Dict and reflected objects between
  the client and the workers and from worker to worker.
- Computations call ffikit global Functions on the workers (looked up by name there, or sent
  as the task's callable, which travels by its registry name).
- An ffikit error raised on a worker reaches the client as its Python class, with the ffikit
  kind and message.
- A shared-memory tensor (ffikit.empty_shared) travels by name: its frames hold no bytes, two
  worker processes write into the client's pages, and the name goes when the last holder
  lets go.

The module skips, with the reason, when Dask distributed is not installed (a test dependency:
requirements-engines.txt, installed by scripts/bootstrap.sh), cannot start here, or under the
ASan run (its worker processes would run with the preloaded sanitizer runtime).
"""
from __future__ import annotations

import gc
import os

import numpy as np
import pytest

import ffikit
import ffikit.testing as T

if os.environ.get("FFIKIT_SANITIZED"):
    pytest.skip("Dask tests sit out the sanitizer run: its worker processes would start under the preloaded "
                "ASan runtime", allow_module_level=True)
distributed = pytest.importorskip("distributed", reason="Dask distributed is not installed "
                                  "(pip install -r requirements-engines.txt)")
import dask  # noqa: E402 - a dependency of distributed
from distributed.protocol import deserialize, serialize, serialize_bytelist  # noqa: E402

import engine_values as E  # noqa: E402 - after the skips: the workers import it too

# The scheduler's HTTP server (health and metrics routes; no dashboard) takes port 8787 or,
# when another cluster holds it, any free port with this warning.
pytestmark = [pytest.mark.filterwarnings("ignore:Port 8787 is already in use:UserWarning"),
              pytest.mark.usefixtures("engine_settled")]  # conftest: lets the engine let go first

KINDS = ["tensor", "array", "map", "list", "dict", "object", "derived"]




@pytest.fixture(scope="module")
def client():
    """Two worker processes of one thread each, no dashboard. Workers are spawned with this
    process's sys.path, so they import ffikit and engine_values as the tests do. The client
    keeps no log of the messages it sent (by default its last 1000, values included, which
    would keep the tests' objects alive past their test)."""
    with dask.config.set({"distributed.admin.low-level-log-length": 0}):
        try:
            cluster = distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                               dashboard_address=None, silence_logs=40)
            c = distributed.Client(cluster)
        except Exception as e:  # noqa: BLE001 - any failure to start means: skip, saying why
            pytest.skip(f"Dask's LocalCluster cannot start here: {type(e).__name__}: {e}")
        try:
            yield c
        finally:
            c.close()
            cluster.close()


@pytest.fixture(scope="module")
def workers(client):
    return sorted(client.scheduler_info()["workers"])


def _address(buf) -> int:
    return np.frombuffer(buf, dtype=np.uint8).ctypes.data


def _settle(client, *futures):
    """Drops the futures and waits until the cluster and the client have forgotten them
    (Dask releases asynchronously; a released error must not outlive the test)."""
    keys = [f.key for f in futures]
    for f in futures:
        f.release()
    del futures
    assert E.wait_until(lambda: not any(k in client.futures for k in keys), lambda: None)


# ---- Dask's serializer: the tensor's bytes out-of-band ----------------------------------------


def _message_sizes(x) -> list[int]:
    """The sizes of the frames Dask sends for x, its header included, smallest first."""
    return sorted(memoryview(f).nbytes for f in serialize_bytelist(x, compression=False))


def test_dask_serializes_a_tensor_out_of_band():
    t = ffikit.from_dlpack(np.arange(E.BIG, dtype=np.float32))
    sizes = _message_sizes(t)
    assert sizes[-1] == t.nbytes(), f"no frame holds the tensor's bytes out-of-band: frames {sizes}"
    assert sum(sizes[:-1]) < 1024, f"the header and pickle stream around the tensor are {sum(sizes[:-1])} bytes"
    header, frames = serialize(t)
    data = max(frames, key=lambda f: memoryview(f).nbytes)
    assert _address(data) == t.data_ptr(), "the frame is the tensor's own memory (no copy on the way out)"
    back = deserialize(header, frames)
    assert isinstance(back, ffikit.Tensor) and back.data_ptr() == _address(data), "the loader wraps the frame"
    assert np.array_equal(np.asarray(back), np.asarray(t))
    del t, back, data, frames


def test_dask_serializes_a_container_with_its_tensors_out_of_band():
    t = ffikit.from_dlpack(np.arange(E.BIG, dtype=np.float32))
    m = ffikit.Map({"w": t, "again": t, "n": 3})
    sizes = _message_sizes(m)
    assert sizes[-1] == t.nbytes() and sum(sizes[:-1]) < 1024, f"frames {sizes}: the tensor travels once, out-of-band"
    header, frames = serialize(m)
    del m
    m = deserialize(header, frames)
    assert m["w"].data_ptr() == m["again"].data_ptr() and int(m["n"]) == 3
    del t, m, frames


# ---- scatter / submit / gather -----------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_scatter_submit_gather_carry_the_value(client, kind):
    v = E.make_values()[kind]
    want = E.plain(v)
    [fut] = client.scatter([v])
    assert client.submit(E.worker_view, fut).result() == (type(v).__name__, want)
    back = client.gather(fut)
    assert type(back) is type(v) and E.plain(back) == want
    res = client.submit(E.identity, v)
    assert E.plain(res.result()) == want
    _settle(client, fut, res)
    del v, back


def test_a_tensor_moves_from_worker_to_worker(client, workers):
    t = ffikit.from_dlpack(np.arange(E.BIG, dtype=np.float32))
    [held] = client.scatter([t], workers=[workers[0]])
    doubled = client.submit(E.double, held, workers=[workers[1]])  # worker 1 fetches it from worker 0
    got = doubled.result()
    assert isinstance(got, ffikit.Tensor) and np.array_equal(np.asarray(got), np.asarray(t) * 2)
    _settle(client, held, doubled)
    del t, got


# ---- ffikit Functions on the workers -----------------------------------------------------------


def test_workers_call_a_global_function_by_name(client):
    futs = client.map(E.call_global, ["testing.add_one"] * 4, range(4))
    assert client.gather(futs) == [1, 2, 3, 4]
    echo = client.submit(E.call_global, "testing.echo", ffikit.List([1, "a"]))
    assert E.plain(echo.result()) == ("List", [1, "a"])
    _settle(client, *futs, echo)


def test_a_global_function_is_the_task(client):
    fut = client.submit(T.add_one, 41)  # the Function itself travels, by its registry name
    assert fut.result() == 42
    _settle(client, fut)


# ---- Errors keep their kind --------------------------------------------------------------------


def test_an_ffikit_type_error_on_a_worker_reaches_the_client(client):
    fut = client.submit(E.add_one_badly)
    with pytest.raises(TypeError) as info:
        fut.result()
    err = info.value.__ffikit_error__
    assert isinstance(err, ffikit.Error) and err.kind == "TypeError"
    assert "testing.add_one" in err.message and "Expected `int` but got `str`" in err.message
    del info, err
    _settle(client, fut)


@pytest.mark.parametrize("kind,cls", [("ValueError", ValueError), ("KeyError", KeyError),
                                      ("mylib.Broken", RuntimeError)])
def test_an_error_raised_on_a_worker_keeps_its_kind(client, kind, cls):
    fut = client.submit(E.raise_kind, kind, "it broke")
    with pytest.raises(cls) as info:
        fut.result()
    assert type(info.value) is cls
    assert info.value.__ffikit_error__.kind == kind and info.value.__ffikit_error__.message == "it broke"
    del info
    _settle(client, fut)


# ---- Shared-memory tensors travel by name ------------------------------------------------------


def test_a_shared_tensor_travels_by_name_and_goes_with_its_last_holder(client, workers):
    t = ffikit.empty_shared((4, 8), "float32")
    np.asarray(t)[:] = 0
    name = t.shared_name
    assert E.shm_exists(name)
    assert sum(_message_sizes(t)) < 1024, "the frames hold a handle, not the bytes"

    # Worker 0 holds it (scattered there); worker 1 gets it from worker 0 and writes into it;
    # the client sees both writes in its own pages.
    [held] = client.scatter([t], workers=[workers[0]])
    w0 = client.submit(E.write, held, (0, 1), 2.0, workers=[workers[0]])
    assert w0.result() == 2.0
    w1 = client.submit(E.write, held, (3, 7), 5.0, workers=[workers[1]])
    assert w1.result() == 7.0, "worker 1 sees worker 0's write: the same pages"
    assert np.asarray(t)[0, 1] == 2.0 and np.asarray(t)[3, 7] == 5.0
    back = client.gather(held)
    assert back.shared_name == name and float(np.asarray(back).sum()) == 7.0
    del back

    # The client lets go first: the workers still hold the segment, so the name stays.
    del t
    gc.collect()
    assert E.shm_exists(name), "the workers still hold the segment"
    _settle(client, held, w0, w1)
    assert E.wait_until(lambda: not E.shm_exists(name), lambda: client.run(E.collect)), \
        f"{name} stays after every holder let go"
