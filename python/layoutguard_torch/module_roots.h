// The outermost modules a program has called: the trees whose parameters' gradients the
// gradient contract checks after each backward(). Everything here runs under the GIL.
#pragma once

#include <Python.h>

#include <vector>

namespace lg_python {

// Starts collecting (the Python hooks are installed): before, add_root() keeps nothing.
void collect_roots();

// Notes `module` as an outermost module, once. By identity, not by hash and equality: a
// module class may define __eq__ without __hash__, or make two modules equal. Held weakly, so
// that a model the program drops is freed. A module that cannot be weakly referenced is left
// out (its parameters go unchecked); no Python error is left set.
void add_root(PyObject* module);

// The roots still alive, in the order first called (new references).
std::vector<PyObject*> live_roots();

}  // namespace lg_python
