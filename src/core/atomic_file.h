// Writing the files layoutguard produces (reports, suppressions baselines, safetensors, dot
// graphs, event streams) so that a failure never costs the user the file that was there: the
// bytes go to a temporary file beside the target, which is renamed over it only once every
// byte is written and flushed. Internal to src/ (and the CLI in tools/).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lg::detail {

// Where `path` leads: a symbolic link followed, to the file it names (which need not exist
// yet), link after link; any other path as it is. Writing there replaces the file the link
// names and keeps the link.
std::string followed_link(const std::string& path);

// The file that writing `path` reaches, as one name: the link followed, the path made absolute
// and resolved as far as it exists. Two paths that write one file give the same text.
std::string file_identity(const std::string& path);

// Why `path` cannot be opened for writing, or "" when it can: "a directory", "a FIFO", "not writable:
// ...", "cannot be reached: ...", "its directory does not exist", "its directory is not
// writable: ...". For files opened in place (a log, which may be /dev/stderr).
std::string output_path_problem(const std::string& path);

// The same for a file that ReplacingFile writes, which renames a new file over the old one:
// an existing target must also be a regular file (a FIFO, a device or a socket would be
// replaced by a plain file), and its directory must be writable (the rename needs it).
std::string replaceable_path_problem(const std::string& path);

// ValueError "[op] cannot write `what` to 'path': problem; required: ..." unless
// replaceable_path_problem(path) is "": the check a command makes before its work starts.
void check_replaceable_path(std::string_view op, std::string_view what, const std::string& path);

// A file that replaces `path` once committed. Until commit() the bytes go to a temporary
// file beside it (same directory, so the rename cannot cross file systems); the destructor
// removes that file unless it was committed. A read-only target is refused, as opening it for
// writing would refuse it (the rename alone would replace it silently); the new file takes an
// existing target's permission bits. Every failure is an lg::ValueError naming op, what, the
// path and the cause, and leaves the old file as it was.
class ReplacingFile {
 public:
  // Checks the target (replaceable_path_problem) and creates the temporary file.
  ReplacingFile(std::string_view op, std::string_view what, const std::string& path);
  ~ReplacingFile();
  ReplacingFile(const ReplacingFile&) = delete;
  ReplacingFile& operator=(const ReplacingFile&) = delete;

  // Appends all of `bytes`, or raises. Before commit() a failure removes the temporary file;
  // after it (a stream that keeps appending to the file it became) a failed write is cut back
  // to where it began, so the file ends with the last whole write.
  void write(std::string_view bytes);
  // Flushes the bytes to disk (fsync) and renames the temporary file over the target.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& problem);
  std::string op_, what_, target_, temp_;
  int fd_ = -1;
  uint64_t written_ = 0;
  bool committed_ = false;
};

// replace_file(op, what, path, bytes): the whole file at once (ReplacingFile, then commit).
void replace_file(std::string_view op, std::string_view what, const std::string& path, std::string_view bytes);

namespace testing {
// Test seam: from now on, ReplacingFile::write lets `bytes` more bytes through (process-wide)
// and then fails as a full disk does (ENOSPC), part-way through a write; -1 turns it off.
// A write that fails part-way cannot be arranged on every machine otherwise (root ignores
// permissions, and mounting a small file system needs privileges).
void fail_writes_after(int64_t bytes);
}  // namespace testing

}  // namespace lg::detail
