// The Python that python_configure found (the venv's interpreter, via FFK_PYTHON) can be
// embedded: its headers compile and libpython links and runs. Benchmarks against
// CPython's list/dict and the extension module build on this.
#include <Python.h>
#include <gtest/gtest.h>

// Under ASan: CPython keeps some objects from its own allocator past Py_FinalizeEx by
// design. Only those are exempt from the leak check, nothing allocated elsewhere.
extern "C" const char* __lsan_default_suppressions() { return "leak:_PyObject_Malloc\n"; }

TEST(PythonToolchain, EmbeddedInterpreterRunsAndMatchesHeaders) {
  Py_InitializeEx(0);
  ASSERT_TRUE(Py_IsInitialized());
  PyObject* list = PyList_New(0);
  for (int i = 0; i < 3; ++i) {
    PyObject* v = PyLong_FromLong(i);
    ASSERT_EQ(PyList_Append(list, v), 0);
    Py_DECREF(v);
  }
  EXPECT_EQ(PyList_Size(list), 3);
  Py_DECREF(list);
  // The headers we compiled against and the library we run are the same release.
  EXPECT_EQ(Py_Version >> 16, static_cast<unsigned long>(PY_VERSION_HEX >> 16));
  EXPECT_EQ(Py_FinalizeEx(), 0);
}
