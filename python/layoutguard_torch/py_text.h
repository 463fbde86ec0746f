// Python text as the guard's UTF-8: reports, dumps and suppressions files hold valid UTF-8.
#pragma once

#include <Python.h>

#include <string>

namespace lg_python {

// A str as UTF-8, "" for a non-str; no Python error is left set. A str that has no UTF-8 form
// -- lone surrogates, which a file name or a module key read from non-UTF-8 bytes holds under
// Python's surrogateescape -- keeps its other characters, and each such byte becomes \xNN.
std::string utf8_of(PyObject* v);

}  // namespace lg_python
