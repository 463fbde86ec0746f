// Reading the files a user names (weights, suppressions, event streams): regular files only,
// each kind with a size bound, so that a FIFO, a device or a directory given by mistake is an
// error at once instead of a process blocked forever or reading without end. Internal to src/.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lg::detail {

// The bounds of the files layoutguard reads: larger is a wrong path or a corrupt file.
// Weights are read whole into memory; 256 GiB is beyond any model this library runs.
inline constexpr uint64_t kMaxSafetensorsFileBytes = uint64_t{256} << 30;
// A suppressions file is a short list of op:module lines.
inline constexpr uint64_t kMaxSuppressionsFileBytes = uint64_t{1} << 20;
// An events= stream holds one JSON line per op call: a few hundred MB for the largest audit.
inline constexpr uint64_t kMaxEventsFileBytes = uint64_t{4} << 30;

// "a directory", "a FIFO", "a character device", ... for an st_mode (error messages).
std::string file_type_name(mode_t mode);

// ValueError "[op] received a path with a NUL character, 'PATH'; required: `required`" when
// path holds one: the system calls read a name up to its first NUL, so "m.st\0x" would reach
// another file, "m.st". Every file opened or written by name asks this first.
void check_no_nul(std::string_view op, const std::string& path, std::string_view required);

// An open regular file of at most a given size. Opened without blocking (opening a FIFO for
// reading would otherwise wait for a writer), then checked with fstat on the open descriptor,
// so the file checked is the file read. Every failure is an lg::ValueError that reads
// "[op] PATH: what it is; required: `required`".
class InputFile {
 public:
  InputFile(const std::string& path, uint64_t max_bytes, std::string_view op, std::string_view required);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Its size when opened.
  uint64_t size() const { return size_; }
  // The next n bytes into dst; ValueError if the file ends first or a read fails.
  void read_exactly(void* dst, size_t n);
  // Up to n bytes into dst, fewer only at the end of the file; ValueError if a read fails.
  size_t read_some(void* dst, size_t n);

 private:
  // Closes the file (the object is unusable after an error) and raises.
  [[noreturn]] void fail(const std::string& problem);
  std::string path_, op_, required_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The whole of a regular file of at most max_bytes (InputFile's checks and errors), read to its
// end: a file of the kernel's (/proc/self/status) says it has 0 bytes and holds more.
std::string read_regular_file(const std::string& path, uint64_t max_bytes, std::string_view op,
                              std::string_view required);

}  // namespace lg::detail
