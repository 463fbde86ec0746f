// An nn.Module tree read as nn.Module's own walks read it -- from each module's instance dict
// (`_modules`, `_parameters`) -- without a Python frame. Everything here runs under the GIL.
#pragma once

#include <Python.h>

#include <string>
#include <vector>

namespace lg_python {

// module._modules and module._parameters (borrowed: the module's dict keeps them), or nullptr
// when the module has none; no Python error is left set.
PyObject* module_children(PyObject* module);
PyObject* module_parameters(PyObject* module);

// The gradient contract over every parameter of `roots`, in named_parameters() order and each
// parameter once (a shared one under its first name): a .grad whose strides differ from its
// parameter's is reported under the parameter's dotted name, which is built only then. A root
// inside another root's tree (a submodule also called on its own) is checked as part of that
// tree, under the names it has there. Throws what the check throws (a violation in throw
// mode); the strides are compared here, so a step whose gradients all match costs a walk over
// the tree and no name. A module whose tree is not in its dicts (a TorchScript module) is read
// through its named_parameters().
void check_parameter_gradients(const std::vector<PyObject*>& roots);

// The dotted path of `module` in the tree of `root` as named_modules() names it ("" for the
// root itself; the first path, depth first in registration order, for a shared module), or
// false when it is not in that tree. With `keys`, also the _modules keys down to it (borrowed
// from the dicts): a key's text may be escaped (a lone surrogate) or hold a dot, so the path's
// text cannot always be split back into them.
bool find_module_path(PyObject* root, PyObject* module, std::string& path, std::vector<PyObject*>* keys = nullptr);

}  // namespace lg_python
