// The one reading path (core/input_file.h) and the one writing path (core/atomic_file.h): special
// files are refused at once, sizes are bounded, and a failed or refused write leaves the old
// file byte for byte as it was, with no temporary file left beside it.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <layoutguard/error.h>

#include "core/atomic_file.h"
#include "core/input_file.h"
#include "support/file_testing.h"
#include "support/guard_testing.h"

namespace {

using lg::detail::InputFile;
using lg::detail::read_regular_file;
using lg::detail::replace_file;
using lg::detail::ReplacingFile;
using lg::testing::FailWritesAfter;
using lg::testing::file_bytes;
using lg::testing::put_file_bytes;
using lg::testing::TempDir;

// 6,002 bytes of distinct lines: the old file a failed write must leave alone.
std::string old_contents() {
  std::string text;
  for (int i = 0; text.size() < 6002; ++i) text += "old line " + std::to_string(i) + "\n";
  return text.substr(0, 6002);
}

std::string read_error(const std::string& path, uint64_t max_bytes = 1 << 20) {
  try {
    (void)read_regular_file(path, max_bytes, "test::read", "a test file");
  } catch (const lg::ValueError& e) {
    return e.message();
  }
  return "(no error)";
}

}  // namespace

TEST_SUITE("errors") {

TEST_CASE("file reading: a FIFO, a directory, a device, a missing or too big file are refused, naming each") {
  TempDir dir;
  lg::testing::make_fifo(dir / "fifo");
  // Opening a FIFO for reading waits for a writer: the test hangs (and times out) if it does.
  CHECK(read_error(dir / "fifo") == "[test::read] " + (dir / "fifo") + ": not a regular file (a FIFO); required: a test file");
  CHECK(read_error(dir.str()) == "[test::read] " + dir.str() + ": not a regular file (a directory); required: a test file");
  CHECK(read_error("/dev/zero") == "[test::read] /dev/zero: not a regular file (a character device); required: a test file");
  CHECK(read_error(dir / "missing") == "[test::read] " + (dir / "missing") +
                                           ": cannot open: No such file or directory; required: a test file");
  put_file_bytes(dir / "big", std::string(101, 'x'));
  CHECK(read_error(dir / "big", 100) ==
        "[test::read] " + (dir / "big") + ": 101 bytes, more than the limit of 100 bytes; required: a test file");
  CHECK(read_regular_file(dir / "big", 101, "test::read", "a test file") == std::string(101, 'x'));
  CHECK_THROWS_WITH_AS(InputFile("", 1, "test::read", "a test file"), doctest::Contains("received an empty path"),
                       lg::ValueError);
}

TEST_CASE("file reading: read_exactly past the end names the file") {
  TempDir dir;
  put_file_bytes(dir / "short", "abc");
  InputFile file(dir / "short", 10, "test::read", "a test file");
  CHECK(file.size() == 3);
  char buf[4];
  CHECK_THROWS_WITH_AS(file.read_exactly(buf, 4), doctest::Contains("short: the file ended early"), lg::ValueError);
}

TEST_CASE("file writing: a new file appears only when written whole; an old one is replaced, keeping its mode") {
  TempDir dir;
  replace_file("test::write", "the test file", dir / "new.txt", "hello\n");
  CHECK(file_bytes(dir / "new.txt") == "hello\n");
  put_file_bytes(dir / "old.txt", old_contents());
  REQUIRE(::chmod((dir / "old.txt").c_str(), 0640) == 0);
  replace_file("test::write", "the test file", dir / "old.txt", "new\n");
  CHECK(file_bytes(dir / "old.txt") == "new\n");
  struct stat st {};
  REQUIRE(::stat((dir / "old.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(dir.listing() == "new.txt\nold.txt\n");  // no temporary file left
  // A symbolic link stays a link; the file it names is replaced.
  REQUIRE(::symlink("old.txt", (dir / "link.txt").c_str()) == 0);
  replace_file("test::write", "the test file", dir / "link.txt", "through the link\n");
  CHECK(std::filesystem::is_symlink(dir / "link.txt"));
  CHECK(file_bytes(dir / "old.txt") == "through the link\n");
  // Also a link to a file not made yet, through a second link: the file is made where they lead.
  REQUIRE(::symlink("later.txt", (dir / "to-later.txt").c_str()) == 0);
  REQUIRE(::symlink("to-later.txt", (dir / "to-link.txt").c_str()) == 0);
  replace_file("test::write", "the test file", dir / "to-link.txt", "made\n");
  CHECK(std::filesystem::is_symlink(dir / "to-link.txt"));
  CHECK(std::filesystem::is_symlink(dir / "to-later.txt"));
  CHECK(file_bytes(dir / "later.txt") == "made\n");
  // A name of 250 bytes (NAME_MAX is 255): its temporary file's name must fit too.
  const std::string long_name = dir / std::string(250, 'n');
  replace_file("test::write", "the test file", long_name, "long\n");
  CHECK(file_bytes(long_name) == "long\n");
}

TEST_CASE("file writing: a write failing part-way leaves the old file byte-identical and no temporary file") {
  TempDir dir;
  const std::string target = dir / "baseline.txt";
  put_file_bytes(target, old_contents());
  {
    FailWritesAfter fail(64);  // a full disk after 64 bytes: the case that truncated 6,002 bytes to 64
    CHECK_THROWS_WITH_AS(replace_file("test::write", "the test file", target, std::string(5000, 'n')),
                         doctest::Contains(("[test::write] cannot write the test file to '" + target +
                                           "': write failed after 64 of 5000 bytes: No space left on device; "
                                           "the file there was left as it was").c_str()),
                         lg::ValueError);
  }
  CHECK(file_bytes(target) == old_contents());
  CHECK(dir.listing() == "baseline.txt\n");
  // Nothing written, nothing left: a file that did not exist still does not.
  {
    FailWritesAfter fail(0);
    CHECK_THROWS_AS(replace_file("test::write", "the test file", dir / "fresh.txt", "x"), lg::ValueError);
  }
  CHECK(dir.listing() == "baseline.txt\n");
  // A ReplacingFile dropped before commit() (an exception elsewhere) leaves the old file too.
  {
    ReplacingFile file("test::write", "the test file", target);
    file.write("half");
  }
  CHECK(file_bytes(target) == old_contents());
  CHECK(dir.listing() == "baseline.txt\n");
}

TEST_CASE("file writing: after commit a stream's failed write is cut back to its last whole write") {
  TempDir dir;
  const std::string target = dir / "events.jsonl";
  ReplacingFile stream("test::write", "the stream", target);
  stream.write("line 1\n");
  stream.commit();
  stream.write("line 2\n");
  CHECK(file_bytes(target) == "line 1\nline 2\n");  // readable while it is written
  {
    FailWritesAfter fail(3);
    CHECK_THROWS_WITH_AS(stream.write("line 3\n"), doctest::Contains("write failed after 3 of 7 bytes"), lg::ValueError);
  }
  CHECK(file_bytes(target) == "line 1\nline 2\n");
  stream.write("line 4\n");
  CHECK(file_bytes(target) == "line 1\nline 2\nline 4\n");
}

TEST_CASE("file writing: targets that cannot be replaced are refused before anything is written") {
  TempDir dir;
  const auto refusal = [](const std::string& path) {
    try {
      replace_file("test::write", "the test file", path, "x");
    } catch (const lg::ValueError& e) {
      return e.message();
    }
    return std::string("(no error)");
  };
  CHECK(refusal(dir.str()) == "[test::write] cannot write the test file to '" + dir.str() +
                                  "': a directory; required: a writable regular file, or a new file in a "
                                  "writable directory");
  CHECK(lg::testing::contains(refusal(dir / "missing/x.txt"), "its directory does not exist"));
  // A FIFO would be replaced by a plain file (and opening it would block): refused, and kept.
  lg::testing::make_fifo(dir / "fifo");
  CHECK(lg::testing::contains(refusal(dir / "fifo"), "': not a regular file (a FIFO); required:"));
  struct stat st {};
  REQUIRE(::stat((dir / "fifo").c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(lg::testing::contains(refusal("/dev/null"), "not a regular file (a character device)"));
  CHECK_THROWS_WITH_AS(replace_file("test::write", "the test file", "", "x"), doctest::Contains("received an empty path"),
                       lg::ValueError);
  CHECK(dir.listing() == "fifo\n");
}

TEST_CASE("file writing: a read-only file is refused, not replaced by the rename") {
  TempDir dir;
  const std::string target = dir / "checkpoint.safetensors";
  put_file_bytes(target, old_contents());
  REQUIRE(::chmod(target.c_str(), 0444) == 0);
  if (::geteuid() == 0) {
    // Root may write any file, so access(W_OK) allows it, as open() would: the refusal is
    // checked as an unprivileged user by tests/tools/check_run.sh. What holds for root too:
    // the new file keeps the old one's read-only mode.
    MESSAGE("read-only refusal skipped here: running as root, which may write a 0444 file; "
            "tests/tools/check_run.sh checks it as an unprivileged user");
    replace_file("test::write", "the test file", target, "root's\n");
    struct stat st {};
    REQUIRE(::stat(target.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0444);
    return;
  }
  CHECK_THROWS_WITH_AS(replace_file("test::write", "the test file", target, "x"),
                       doctest::Contains("': not writable: Permission denied; required:"), lg::ValueError);
  CHECK(file_bytes(target) == old_contents());
  CHECK(dir.listing() == "checkpoint.safetensors\n");
}

}  // TEST_SUITE
