#include "py_text.h"

namespace lg_python {

std::string utf8_of(PyObject* v) {
  if (v == nullptr || !PyUnicode_Check(v)) return {};
  Py_ssize_t size = 0;
  if (const char* s = PyUnicode_AsUTF8AndSize(v, &size)) return std::string(s, static_cast<size_t>(size));
  PyErr_Clear();
  // The bytes the surrogates stand for, then each one that is not UTF-8 as \xNN. A surrogate
  // that stands for no byte (U+D800..U+DC7F) fails surrogateescape; "replace" keeps the rest.
  PyObject* bytes = PyUnicode_AsEncodedString(v, "utf-8", "surrogateescape");
  if (bytes == nullptr) {
    PyErr_Clear();
    bytes = PyUnicode_AsEncodedString(v, "utf-8", "replace");
  }
  PyObject* text = bytes != nullptr ? PyUnicode_DecodeUTF8(PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes),
                                                           "backslashreplace")
                                    : nullptr;
  Py_XDECREF(bytes);
  const char* s = text != nullptr ? PyUnicode_AsUTF8AndSize(text, &size) : nullptr;
  std::string out = s != nullptr ? std::string(s, static_cast<size_t>(size)) : std::string();
  if (s == nullptr) PyErr_Clear();
  Py_XDECREF(text);
  return out;
}

}  // namespace lg_python
