"""The Python half of the tour: ffikit from Python, as a tvm_ffi user would meet it.

Run by ./setup.sh after the C tour (with the package installed into .venv), or by hand:
    .venv/bin/python examples/tour.py
"""
import threading

import ffikit
import ffikit.testing as testing


def section(title):
    print(f"\n{title}")


def show(label, value):
    print(f"  {label:<44} {value!r:<30} ({type(value).__name__})")


print(f"ffikit {ffikit.__version__} (Python)")

section("1. Values cross as they are: small ones inline, the rest as objects")
echo = ffikit.get_global_func("testing.echo")
show("echo(42)", echo(42))
show("echo('short')", echo("short"))
s = echo("a string longer than seven bytes")
show("echo('a string longer than seven bytes')", s)
show("  ... passed back without a copy", echo(s)._ffikit_object.same_as(s._ffikit_object))
show("echo([1, (2, 'x'), {'k': 3}])", echo([1, (2, "x"), {"k": 3}]))
marker = object()
show("echo(object()) is the same object", echo(marker) is marker)
show("echo(dtype('f32'))", echo(ffikit.dtype("f32")))
show("echo(Device('cuda:1'))", echo(ffikit.Device("cuda:1")))
try:
    echo(2**64)
except OverflowError as e:
    print(f"  echo(2**64) -> OverflowError: {e}")

section("2. Functions: register Python, call from C, call C from Python")


@ffikit.register_global_func("tour.greet")
def greet(name):
    return f"hello, {name}"


show("get_global_func('tour.greet')('C')", ffikit.get_global_func("tour.greet")("C"))
show("testing.apply(greet, 'via C')", testing.apply(greet, "via C"))
show("testing.add_one(41) (a typed C function)", testing.add_one(41))
try:
    testing.add_one("x")
except TypeError as e:
    print(f"  testing.add_one('x') -> TypeError: {e}")
seen = []
testing.call_from_native_thread(ffikit.convert(lambda: seen.append(threading.get_ident())), 3)
print(f"  a native thread Python never saw called a Python callback {len(seen)} times (it took the GIL)")
ffikit.remove_global_func("tour.greet")

section("3. Errors keep their identity and name every hop")


def callback():
    raise KeyError("missing setting")


try:
    testing.apply(callback)
except KeyError as e:
    print(f"  testing.apply(callback) -> {type(e).__name__}: {e}  (the same exception object)")
    print("  its backtrace, innermost first:")
    for line in e.__ffikit_error__.backtrace.splitlines():
        print("   " + line)
try:
    testing.raise_error("mylib.Broken", "raised in C")
except RuntimeError as e:
    print(f"  an unknown C kind -> RuntimeError: {e} (kind {e.__ffikit_error__.kind!r})")

section("4. Devices and dtypes, tvm_ffi spellings")
show("Device('cuda', 1)", ffikit.Device("cuda", 1))
show("dtype('bf16').bits", ffikit.dtype("bf16").bits)
show("dtype('bool').with_lanes(4)", ffikit.dtype("bool").with_lanes(4))
try:
    ffikit.Device("gpu:0")
except ValueError as e:
    print(f"  Device('gpu:0') -> ValueError: {e}")

section("5. Containers: copy-on-write Array/Map beside shared List/Dict")
m = ffikit.Map({"a": 1})
m2 = testing.mutate(m, "b", 2)  # C sets a key through its own handle
show("Map after C set 'b' on its own handle", m)
show("  ... the C side's Map", m2)
lst = ffikit.List([1])
testing.mutate(lst, None, 2)  # C appends through its own handle
show("List after C appended 2", lst)
d = ffikit.Dict({1: "int"})
d[True], d[1.0] = "bool", "float"
show("Dict keys 1, True, 1.0 stay distinct", d)
show("Array([1, 2]) + [3] == (1, 2, 3)", ffikit.Array([1, 2]) + [3] == (1, 2, 3))

section("6. Tensors: numpy and PyTorch memory at the same address, shared memory across processes")
import multiprocessing  # noqa: E402
import pickle  # noqa: E402

import numpy as np  # noqa: E402

x = np.arange(12, dtype=np.float32).reshape(3, 4)
t = ffikit.from_dlpack(x)
show("from_dlpack(numpy 3x4)", t)
print(f"  same data pointer as numpy: {t.data_ptr() == x.ctypes.data}; strides {t.strides}")
show("t.transpose(0, 1) (a view)", t.transpose(0, 1))
show("np.from_dlpack(t[1:]) shares memory", np.shares_memory(np.from_dlpack(t[1:]), x))
show("a numpy argument arrives in C as", testing.schema_id_tensor(x))
try:
    import torch

    y = torch.from_dlpack(t)
    print(f"  torch.from_dlpack(t): same data pointer: {y.data_ptr() == x.ctypes.data}")
except ImportError:
    print("  (torch is not installed: pip install torch==2.13.0 to see the PyTorch exchange)")
shared = ffikit.empty_shared((2, 3), "float32")
print(f"  a shared-memory tensor pickles as a {len(pickle.dumps(shared))}-byte handle to {shared.shared_name}")
child = multiprocessing.get_context("fork").Process(target=lambda s: np.asarray(s).__setitem__((1, 2), 42.0),
                                                    args=(shared,))
child.start()
child.join()
print(f"  the child (pid {child.pid}) wrote 42 at [1, 2]; the parent reads {np.asarray(shared)[1, 2]}")

print("\nDone.")
