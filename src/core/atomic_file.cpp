// ReplacingFile: the one way layoutguard writes a file (see atomic_file.h).
#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <layoutguard/error.h>

#include "core/input_file.h"

namespace lg::detail {
namespace {

namespace fs = std::filesystem;

std::atomic<int64_t> g_bytes_before_failure{-1};

// By the errno value: comparing with std::errc compares error categories by address, and a
// process may hold two generic categories. The libtorch_cpu.so of pip's older wheels (2.0.1 to
// 2.5.1) exports a copy of libstdc++'s std::generic_category(), which the library's own calls
// then reach, while libstdc++'s filesystem code returns its own.
bool missing(const std::error_code& e) { return e.value() == ENOENT; }

// Whether `path` is an entry of this process's descriptor table (/dev/stderr leads there, and
// /dev/fd is it):
// a pipe opened through it is one the process holds, with its reader already there.
bool own_descriptor(const std::string& path) {
  for (const std::string& table :
       {std::string("/proc/self/fd/"), "/proc/" + std::to_string(::getpid()) + "/fd/", std::string("/dev/fd/")})
    if (path.rfind(table, 0) == 0) return true;
  return false;
}

std::string path_problem(const std::string& path, bool replacing) {
  const fs::path p{path};
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (ec && !missing(ec)) return "cannot be reached: " + ec.message();  // EACCES, ENOTDIR
  if (fs::exists(st)) {
    if (fs::is_directory(st)) return "a directory";
    // Opened in place, a FIFO would hold the first write until some process reads it; the
    // process's own pipe has its reader.
    if (!replacing && ((fs::is_fifo(st) && !own_descriptor(path)) || fs::is_socket(st)))
      return fs::is_fifo(st) ? "a FIFO, which would hold the first write until a process reads it" : "a socket";
    if (replacing && !fs::is_regular_file(st)) {
      struct stat raw {};
      const std::string kind = ::stat(path.c_str(), &raw) == 0 ? file_type_name(raw.st_mode) : "not a regular file";
      return "not a regular file (" + kind + ")";
    }
    if (access(path.c_str(), W_OK) != 0) return std::string("not writable: ") + std::strerror(errno);
    if (!replacing) return "";
  }
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const bool is_dir = fs::is_directory(dir, ec);
  if (ec && !missing(ec)) return "its directory cannot be reached: " + ec.message();
  if (!is_dir) return "its directory does not exist";
  if (access(dir.c_str(), W_OK | X_OK) != 0) return std::string("its directory is not writable: ") + std::strerror(errno);
  return "";
}

// The bytes the test seam lets through of a write of n (n when it is off).
size_t allowed_bytes(size_t n) {
  int64_t left = g_bytes_before_failure.load(std::memory_order_relaxed);
  while (left >= 0) {
    const int64_t take = std::min<int64_t>(left, static_cast<int64_t>(n));
    if (g_bytes_before_failure.compare_exchange_weak(left, left - take, std::memory_order_relaxed))
      return static_cast<size_t>(take);
  }
  return n;
}

// "the JSON report to 'PATH'", or "'PATH'" when no `what` is given.
std::string subject(std::string_view what, const std::string& path) {
  return what.empty() ? "'" + path + "'" : str(what, " to '", path, "'");
}

}  // namespace

std::string followed_link(const std::string& path) {
  fs::path p{path};
  for (int hops = 0; hops < 40; ++hops) {  // as many as the kernel follows (ELOOP past them)
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) break;
    const fs::path target = fs::read_symlink(p, ec);
    // A descriptor's entry (/proc/PID/fd/N, /dev/fd/N) of a pipe, socket or anonymous inode
    // reads as "pipe:[N]", which names no file: the entry itself is what opening reaches
    // (/dev/stderr on a pipe).
    if (ec || (!target.is_absolute() && target.string().find(":[") != std::string::npos) ||
        target.string().rfind("anon_inode:", 0) == 0)
      break;
    p = target.is_absolute() ? target : (p.parent_path() / target).lexically_normal();
  }
  return p.string();
}

std::string file_identity(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(followed_link(path), ec);
  if (ec) return path;
  const fs::path canonical = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal().string() : canonical.string();
}

std::string output_path_problem(const std::string& path) { return path_problem(path, false); }
std::string replaceable_path_problem(const std::string& path) { return path_problem(path, true); }

void check_replaceable_path(std::string_view op, std::string_view what, const std::string& path) {
  LG_CHECK(!path.empty(), "[", op, "] received an empty path for ", what, "; required: a file name");
  check_no_nul(op, path, str("a file name for ", what, " without NUL characters"));
  const std::string problem = replaceable_path_problem(followed_link(path));
  if (!problem.empty())
    throw ValueError(str("[", op, "] cannot write ", subject(what, path), ": ", problem,
                         "; required: a writable regular file, or a new file in a writable directory"));
}

ReplacingFile::ReplacingFile(std::string_view op, std::string_view what, const std::string& path)
    : op_(op), what_(what), target_(followed_link(path)) {
  check_replaceable_path(op, what, path);
  const fs::path target{target_};
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // A hidden name of this process: a crash leaves it beside the target, never in its place.
  static std::atomic<uint64_t> counter{0};
  // At most 200 bytes of the name: with the suffix the temporary name stays within NAME_MAX
  // (255) for any name that is.
  const std::string name = target.filename().string().substr(0, 200);
  for (int attempt = 0; fd_ < 0; ++attempt) {
    temp_ = (dir / ("." + name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1))))
                .string();
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // 0666 & ~umask
    if (fd_ < 0 && (errno != EEXIST || attempt == 100)) {
      const int err = errno;
      temp_.clear();
      fail(std::string("cannot create a temporary file beside it: ") + std::strerror(err));
    }
  }
  struct stat old {};
  if (::stat(target_.c_str(), &old) == 0) (void)::fchmod(fd_, old.st_mode & 07777);
}

ReplacingFile::~ReplacingFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void ReplacingFile::fail(const std::string& problem) {
  if (fd_ >= 0 && !committed_) {
    ::close(fd_);
    fd_ = -1;
    if (!temp_.empty()) ::unlink(temp_.c_str());
    temp_.clear();
  }
  throw ValueError(str("[", op_, "] cannot write ", subject(what_, target_), ": ", problem,
                       committed_ ? "" : "; the file there was left as it was"));
}

void ReplacingFile::write(std::string_view bytes) {
  LG_ASSERT(fd_ >= 0, "write after a failure of ", what_, " to '", target_, "'");
  const uint64_t start = written_;
  size_t done = 0;
  while (done < bytes.size()) {
    const size_t want = bytes.size() - done;
    const size_t allowed = allowed_bytes(want);
    int err = allowed < want ? ENOSPC : 0;  // the test seam's failure, after the bytes it lets through
    if (allowed > 0) {
      const ssize_t got = ::write(fd_, bytes.data() + done, allowed);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) err = errno;
      if (got == 0) err = EIO;
      if (got > 0) done += static_cast<size_t>(got), written_ += static_cast<uint64_t>(got);
    }
    if (err == 0) continue;
    const uint64_t partial = written_ - start;
    if (committed_ && ::ftruncate(fd_, static_cast<off_t>(start)) == 0) {
      (void)::lseek(fd_, static_cast<off_t>(start), SEEK_SET);
      written_ = start;
    }
    fail(std::string("write failed after ") + std::to_string(partial) + " of " + std::to_string(bytes.size()) +
         " bytes: " + std::strerror(err));
  }
}

void ReplacingFile::commit() {
  LG_ASSERT(fd_ >= 0 && !committed_, "commit of ", what_, " to '", target_, "' twice or after a failure");
  // Without the fsync a crash soon after the rename can leave an empty file in the old one's
  // place on some file systems. Those without fsync (EINVAL) have nothing to flush.
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS)
    fail(std::string("flushing to disk failed: ") + std::strerror(errno));
  if (std::rename(temp_.c_str(), target_.c_str()) != 0)
    fail(std::string("cannot rename the temporary file over it: ") + std::strerror(errno));
  committed_ = true;
}

void replace_file(std::string_view op, std::string_view what, const std::string& path, std::string_view bytes) {
  ReplacingFile file(op, what, path);
  file.write(bytes);
  file.commit();
}

namespace testing {
void fail_writes_after(int64_t bytes) { g_bytes_before_failure.store(bytes, std::memory_order_relaxed); }
}  // namespace testing

}  // namespace lg::detail
