// Helpers for tests of the guard: environment variables, temporary files, a clean guard state.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <unistd.h>

#include <layoutguard/layoutguard.h>

namespace lg::testing {

inline bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

inline size_t count_of(const std::string& text, std::string_view part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// Sets (or unsets, for nullptr) an environment variable for the lifetime of the object.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old, had_ = true;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~EnvVar() { had_ ? setenv(name_, saved_.c_str(), 1) : unsetenv(name_); }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  const char* name_;
  std::string saved_;
  bool had_ = false;
};

// A file name in the temp directory, unique to this process, removed on destruction.
class TempPath {
 public:
  explicit TempPath(std::string_view stem)
      : path_((std::filesystem::temp_directory_path() /
               (std::string(stem) + "-" + std::to_string(::getpid()))).string()) {
    std::filesystem::remove(path_);
  }
  ~TempPath() { std::filesystem::remove(path_); }
  const std::string& str() const { return path_; }

 private:
  std::string path_;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The guard back to the environment's settings with nothing collected, before and after a test.
struct CleanGuard {
  CleanGuard() { reset(); }
  ~CleanGuard() { reset(); }
  static void reset() {
    guard::reset_to_environment();
    guard::clear_report();
  }
};

// Options as the environment would give them, with `text` as LAYOUTGUARD_OPTIONS.
inline guard::Options options_with(guard::Mode mode, std::string_view text = "") {
  guard::Options o = guard::parse_options("", text);
  o.mode = mode;
  return o;
}

}  // namespace lg::testing
