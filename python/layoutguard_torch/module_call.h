// nn.Module.__call__ as layoutguard_torch sets it: each module call pushes the module's path
// (module_call.cpp). Everything here runs under the GIL.
#pragma once

#include <Python.h>

namespace lg_python {

// The callable to set as nn.Module.__call__ (a new reference), or nullptr with a Python error.
PyObject* make_module_call();

// nn.Module.__call__ as it was before: what each module call runs, with its path pushed.
// Steals the reference.
void set_module_call(PyObject* original);

}  // namespace lg_python
