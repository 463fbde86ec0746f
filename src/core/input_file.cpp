// InputFile: the one way layoutguard reads a file a user names (see input_file.h).
#include "core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <layoutguard/error.h>

#include "core/printable_text.h"

namespace lg::detail {

std::string file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "an unknown kind of file";
}

void check_no_nul(std::string_view op, const std::string& path, std::string_view required) {
  LG_CHECK(path.find('\0') == std::string::npos, "[", op, "] received a path with a NUL character, '",
           shown_value(path), "'; required: ", required);
}

InputFile::InputFile(const std::string& path, uint64_t max_bytes, std::string_view op, std::string_view required)
    : path_(path), op_(op), required_(required) {
  LG_CHECK(!path.empty(), "[", op, "] received an empty path; required: ", required);
  check_no_nul(op, path, std::string(required) + ", named without NUL characters");
  // O_NONBLOCK: open() of a FIFO returns at once instead of waiting for a writer; the fstat
  // below then refuses it. O_NOCTTY: a terminal named by mistake does not become ours.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail(std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail("not a regular file (" + file_type_name(st.st_mode) + ")");
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ > max_bytes)
    fail(std::to_string(size_) + " bytes, more than the limit of " + std::to_string(max_bytes) + " bytes");
  // Regular files never block; blocking reads keep read_exactly's loop simple.
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::fail(const std::string& problem) {
  // A throw from the constructor runs no destructor: the descriptor is closed here.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  throw ValueError("[" + op_ + "] " + shown_value(path_) + ": " + problem + "; required: " + required_);
}

size_t InputFile::read_some(void* dst, size_t n) {
  auto* out = static_cast<std::byte*>(dst);
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::read(fd_, out + done, n - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(std::string("read failed: ") + std::strerror(errno));
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

void InputFile::read_exactly(void* dst, size_t n) {
  if (read_some(dst, n) != n) fail("the file ended early (it shrank while it was read)");
}

std::string read_regular_file(const std::string& path, uint64_t max_bytes, std::string_view op,
                              std::string_view required) {
  InputFile file(path, max_bytes, op, required);
  std::string text(file.size(), '\0');
  file.read_exactly(text.data(), text.size());
  // Then on to the end (a file of the kernel says 0 bytes), stopping once past the limit.
  char chunk[4096];
  while (const size_t got = file.read_some(chunk, sizeof chunk)) {
    text.append(chunk, got);
    if (text.size() > max_bytes)
      throw ValueError("[" + std::string(op) + "] " + shown_value(path) + ": more than the limit of " + std::to_string(max_bytes) +
                       " bytes; required: " + std::string(required));
  }
  return text;
}

}  // namespace lg::detail
