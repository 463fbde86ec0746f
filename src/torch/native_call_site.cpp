// The C++ caller of a forward op (see native_call_site.h).
#include "torch/native_call_site.h"

#if LG_HAVE_LIBBACKTRACE
#include <backtrace.h>
#endif
#include <cxxabi.h>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "guard/call_stack.h"

namespace lg::torch_bridge {
namespace {

// A Python line starts with its file name, never with this byte.
constexpr char kMarker = '\x01';
// Unwinding costs about a thousand instructions per frame. It stops a few frames past the
// first one in the program's own objects, which may still be a library's template or inline
// function instantiated there (std::function's invoker, torch::nn::AnyModule's forward), and
// at most this deep.
constexpr int kMaxFrames = 64;
constexpr int kFramesPastLibraries = 16;
constexpr size_t kMaxNamed = 4096;

#if LG_HAVE_LIBBACKTRACE

// The loaded objects' code ranges, and whether each is one whose frames are never the
// program's: PyTorch's, layoutguard's, the C and C++ runtimes', the threads' and OpenMP's, and
// CUDA's. Read from the loader once, and again when a frame lies outside them all and an
// object was loaded or unloaded since: dladdr would search an object's symbol table at every
// frame.
class Objects {
 public:
  struct Object {
    uintptr_t start = 0, end = 0, base = 0;
    bool library = false;
    std::string name;  // the file's base name
  };

  // The object holding `pc`; none for code that no object holds (a JIT's).
  std::optional<Object> find(uintptr_t pc) {
    {
      std::shared_lock lock(mutex_);
      if (const Object* o = lookup(pc)) return *o;
    }
    std::unique_lock lock(mutex_);
    if (lookup(pc) == nullptr && loads() != scanned_at_loads_) rescan();  // out of memory: a stale table
    if (const Object* o = lookup(pc)) return *o;
    return std::nullopt;
  }

  bool in_library(uintptr_t pc) {
    {
      std::shared_lock lock(mutex_);
      if (const Object* o = lookup(pc)) return o->library;
    }
    const std::optional<Object> o = find(pc);
    return o && o->library;
  }

 private:
  const Object* lookup(uintptr_t pc) const {
    auto after = std::upper_bound(objects_.begin(), objects_.end(), pc,
                                  [](uintptr_t p, const Object& o) { return p < o.start; });
    if (after == objects_.begin() || pc >= std::prev(after)->end) return nullptr;
    return &*std::prev(after);
  }

  static bool library_name(std::string_view name) {
    for (const std::string_view prefix :
         {"libtorch", "libc10", "liblayoutguard", "libstdc++", "libgcc_s", "libc.so", "libm.so", "libpthread",
          "libdl", "ld-linux", "linux-vdso", "libgomp", "libiomp", "libcuda", "libcudart", "libcudnn", "libcublas",
          "libnvrtc", "libnccl", "libpython"})
      if (name.starts_with(prefix)) return true;
    return false;
  }

  static std::string base_name(const char* path) {
    const char* slash = std::strrchr(path, '/');
    return slash != nullptr ? slash + 1 : path;
  }

  static std::string program_name() {
    char path[4096];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) return "the program";
    path[n] = '\0';
    return base_name(path);
  }

  // Runs under the loader's lock, inside a C function: nothing may throw out of it.
  static int add_object(dl_phdr_info* info, size_t, void* data) noexcept try {
    auto* objects = static_cast<std::vector<Object>*>(data);
    // The loader names the main program "".
    const std::string name =
        info->dlpi_name != nullptr && info->dlpi_name[0] != '\0' ? base_name(info->dlpi_name) : program_name();
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
      const ElfW(Phdr)& h = info->dlpi_phdr[i];
      if (h.p_type != PT_LOAD || (h.p_flags & PF_X) == 0) continue;
      const uintptr_t start = info->dlpi_addr + h.p_vaddr;
      objects->push_back({start, start + h.p_memsz, info->dlpi_addr, library_name(name), name});
    }
    return 0;
  } catch (...) {
    return 1;  // out of memory: the objects read so far
  }

  // How many objects the loader has loaded and unloaded so far (glibc counts them for its
  // callers): a change means another table.
  static unsigned long long loads() {
    unsigned long long changes = 0;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t size, void* data) {
          if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
            *static_cast<unsigned long long*>(data) = info->dlpi_adds + info->dlpi_subs;
          return 1;  // the first object tells
        },
        &changes);
    return changes;
  }

  void rescan() {
    scanned_at_loads_ = loads();
    objects_.clear();
    dl_iterate_phdr(&add_object, &objects_);
    std::sort(objects_.begin(), objects_.end(), [](const Object& a, const Object& b) { return a.start < b.start; });
  }

  std::shared_mutex mutex_;
  std::vector<Object> objects_;
  unsigned long long scanned_at_loads_ = ~0ULL;  // none yet
};

Objects& objects() {
  static auto* o = new Objects();  // reports may come during exit
  return *o;
}

void ignore_error(void*, const char*, int) {}

// libbacktrace reads the debug information of the objects loaded when it first names a frame
// (one loaded later has no lines); a state is never freed (libbacktrace has no way to), so
// there is one for the process. Null if it could not be made.
backtrace_state* state() {
  static backtrace_state* s = backtrace_create_state(nullptr, /*threaded=*/1, &ignore_error, nullptr);
  return s;
}

struct Captured {
  std::string* site;
  int frames = 0;
  int past_libraries = 0;  // frames kept since the first one outside the libraries
};

// Called by the unwinder (C): nothing may throw out of it. The site's room is reserved.
int append_pc(void* data, uintptr_t pc) noexcept try {
  auto* c = static_cast<Captured*>(data);
  c->site->append(reinterpret_cast<const char*>(&pc), sizeof pc);
  if (c->past_libraries > 0 || !objects().in_library(pc)) ++c->past_libraries;
  return ++c->frames >= kMaxFrames || c->past_libraries >= kFramesPastLibraries ? 1 : 0;
} catch (...) {
  return 1;  // out of memory: the frames so far
}

std::string demangled(const char* name) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(name);
}

// Code of PyTorch, the standard library or layoutguard, inlined into the program's own: what
// a call-site suppressions line passes over too.
bool library_function(const std::string& name) { return guard::detail::library_function(name, /*skip_torch=*/true); }

// The first of a frame's functions, inlined ones first, that is the program's.
struct FrameSearch {
  std::string found;
  int named = 0;  // entries whose function the debug information names
};

// Called by libbacktrace (C): nothing may throw out of it.
int take_program_entry(void* data, uintptr_t, const char* file, int line, const char* function) noexcept try {
  auto* search = static_cast<FrameSearch*>(data);
  if (function == nullptr) return 0;  // no debug information here: the caller falls back
  ++search->named;
  const std::string name(guard::detail::function_name(demangled(function)));
  if (library_function(name)) return 0;
  search->found = file != nullptr ? std::string(file) + ":" + std::to_string(line) + " in " + name : name;
  return 1;
} catch (...) {
  return 1;  // out of memory: no name from here
}

// Called by libbacktrace (C) with the symbol that holds a pc, if any: nothing may throw out of it.
void take_symbol(void* data, uintptr_t, const char* name, uintptr_t, uintptr_t) noexcept try {
  if (name != nullptr) *static_cast<std::string*>(data) = name;
} catch (...) {
  // out of memory: no name
}

// The program's frame at `pc`, "" when it is not the program's.
std::string program_frame(uintptr_t pc) {
  const std::optional<Objects::Object> object = objects().find(pc);
  if (!object || object->library) return {};
  FrameSearch search;
  if (backtrace_state* s = state()) backtrace_pcinfo(s, pc, &take_program_entry, &ignore_error, &search);
  if (!search.found.empty()) return search.found;
  // Debug information named the frame's functions, all of them the libraries' (at::conv2d
  // inlined into one of theirs): not the program's.
  if (search.named > 0) return {};
  // No debug information: the function's name in the object's symbol table, as the stack
  // trace names it (libbacktrace reads .symtab, which names functions that are not exported,
  // else .dynsym), else the exported symbol's (dladdr); once per distinct stack.
  std::string symbol;
  if (backtrace_state* s = state()) backtrace_syminfo(s, pc, &take_symbol, &ignore_error, &symbol);
  Dl_info info{};
  if (symbol.empty() && dladdr(reinterpret_cast<void*>(pc), &info) != 0 && info.dli_sname != nullptr)
    symbol = info.dli_sname;
  if (!symbol.empty()) {
    const std::string name(guard::detail::function_name(demangled(symbol.c_str())));
    if (library_function(name)) return {};
    return name + " in " + object->name;
  }
  // An offset that addr2line -e OBJECT reads.
  char offset[32];
  std::snprintf(offset, sizeof offset, "+0x%zx", static_cast<size_t>(pc - object->base));
  return object->name + offset + " (no debug information)";
}

std::string name_first_program_frame(std::string_view site) {
  for (size_t at = 1; at + sizeof(uintptr_t) <= site.size(); at += sizeof(uintptr_t)) {
    uintptr_t pc = 0;
    std::memcpy(&pc, site.data() + at, sizeof pc);
    if (std::string frame = program_frame(pc); !frame.empty()) return frame;
  }
  return {};
}

#endif  // LG_HAVE_LIBBACKTRACE

}  // namespace

#if LG_HAVE_LIBBACKTRACE

void capture_native_call_site(std::string& site) {
  backtrace_state* s = state();
  if (s == nullptr) return;
  site.reserve(site.size() + 1 + kMaxFrames * sizeof(uintptr_t));
  site.push_back(kMarker);
  Captured captured{&site};
  backtrace_simple(s, /*skip=*/1, &append_pc, &ignore_error, &captured);
}

#else

// Built without GCC's libbacktrace (meson says so): no C++ call sites.
void capture_native_call_site(std::string&) {}

#endif

void locate_native_caller(std::string& source_location, std::string&) {
  std::string site;
  capture_native_call_site(site);
  source_location = describe_native_call_site(site);
}

bool is_native_call_site(std::string_view site) { return !site.empty() && site.front() == kMarker; }

std::string describe_native_call_site(std::string_view site) {
#if !LG_HAVE_LIBBACKTRACE
  (void)site;
  return {};
#else
  static auto& mutex = *new std::mutex;  // never destroyed, like the map: reports may come during exit
  static auto* named = new std::unordered_map<std::string, std::string>();
  std::lock_guard lock(mutex);
  if (auto it = named->find(std::string(site)); it != named->end()) return it->second;
  if (named->size() >= kMaxNamed) named->clear();
  return named->emplace(std::string(site), name_first_program_frame(site)).first->second;
#endif
}

}  // namespace lg::torch_bridge
