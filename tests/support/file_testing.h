// Helpers for tests of reading and writing files: a private temporary directory, FIFOs, whole
// file contents, and the writer's failure seam (core/atomic_file.h).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/atomic_file.h"

namespace lg::testing {

// A fresh directory under the temp directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "lg-files-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& str() const { return path_; }
  // The names in it, sorted: shows a temporary file left behind.
  std::string listing() const {
    std::string out;
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) out += n + "\n";
    return out;
  }

 private:
  std::string path_;
};

inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void put_file_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A FIFO at `path`: reading it blocks until a writer comes, which none ever does here.
inline void make_fifo(const std::string& path) {
  if (::mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed: " + path);
}

// Every ReplacingFile write fails (ENOSPC) after `bytes` more bytes, while the object lives.
struct FailWritesAfter {
  explicit FailWritesAfter(int64_t bytes) { lg::detail::testing::fail_writes_after(bytes); }
  ~FailWritesAfter() { lg::detail::testing::fail_writes_after(-1); }
};

}  // namespace lg::testing
