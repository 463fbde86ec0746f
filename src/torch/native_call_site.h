// Where a C++ program called a forward op, for option forward_calls where no Python frame says
// it (a libtorch app): the caller's innermost frame outside libtorch and layoutguard.
#pragma once

#include <string>
#include <string_view>

namespace lg::torch_bridge {

// Appends the calling thread's return addresses to `site`, in a form only the functions below
// read: a few microseconds of unwinding per call, and nothing is named until a report asks.
// Called after each user-level call that made autograd nodes, with the option on.
void capture_native_call_site(std::string& site);

// Whether `site` came from capture_native_call_site (a Python line never does).
bool is_native_call_site(std::string_view site);

// The captured stack's first frame that is the program's own, as a Python line reads
// ("app.cpp:42 in forward"; without debug information the symbol table's name,
// "Net::forward in app", and in a stripped program "app+0x8e7f (no debug information)", an
// offset addr2line reads).
// Frames in PyTorch's, layoutguard's, CUDA's, OpenMP's and the C and C++ runtimes' libraries
// are skipped, and so are functions of namespaces at, c10, torch, std, __gnu_cxx, lg and boost
// that the compiler inlined into the program's code (at::conv2d). Lines come from the debug
// information of the objects loaded when the first stack is named.
// "" when no frame is the program's. Each distinct stack is named once.
std::string describe_native_call_site(std::string_view site);

// The default lg::torch::Locator of a C++ program: `source_location` is the calling thread's
// first frame of the program's own (describe_native_call_site), `stack` is left to the guard.
void locate_native_caller(std::string& source_location, std::string& stack);

}  // namespace lg::torch_bridge
