// The guard's output files -- the suppressions baseline, the JSON report, the events stream --
// are replaced only when written whole: a write failing part-way leaves the old file byte for
// byte, and raises an lg::ValueError naming the file. Failures are injected through the
// writer's test seam (core/atomic_file.h), which works on any file system and as root.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include <layoutguard/testing/doctest.h>

#include "core/printable_text.h"

#include "support/file_testing.h"
#include "support/guard_testing.h"
#include "support/test_ops.h"

namespace {

using lg::Tensor;
using lg::guard::Mode;
using namespace lg::testing;

Tensor cl4() { return lg::arange(2 * 8 * 4 * 4).to(lg::kFloat32).reshape({2, 8, 4, 4}).contiguous(lg::MemoryFormat::ChannelsLast); }

std::string old_contents() {
  std::string text = "# a baseline kept from an earlier run\n";
  for (int i = 0; text.size() < 6002; ++i) text += "op" + std::to_string(i) + ":module.path\n";
  return text.substr(0, 6002);
}

}  // namespace

TEST_SUITE("guard") {

TEST_CASE("write_baseline failing part-way leaves the old baseline as it was") {
  CleanGuard clean;
  TempDir dir;
  const std::string path = dir / "known.txt";
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0"));
  drop_layout()({cl4()});
  put_file_bytes(path, old_contents());
  {
    FailWritesAfter fail(64);
    CHECK_THROWS_WITH_AS(lg::guard::write_baseline(path, "a test"),
                         doctest::Contains(("[guard::write_baseline] cannot write the suppressions baseline to '" + path +
                                           "': write failed after 64 of ").c_str()),
                         lg::ValueError);
  }
  CHECK(file_bytes(path).size() == 6002);
  CHECK(file_bytes(path) == old_contents());
  CHECK(dir.listing() == "known.txt\n");
  // Written whole, it replaces the old one.
  CHECK(lg::guard::write_baseline(path, "a test") == 1);
  CHECK(contains(file_bytes(path), "test.drop_layout"));
}

TEST_CASE("write_report failing part-way leaves the old report as it was") {
  CleanGuard clean;
  TempDir dir;
  const std::string path = dir / "report.json";
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0"));
  drop_layout()({cl4()});
  put_file_bytes(path, old_contents());
  {
    FailWritesAfter fail(100);
    CHECK_THROWS_WITH_AS(lg::guard::write_report(path),
                         doctest::Contains(("[guard::write_report] cannot write the JSON report to '" + path + "'").c_str()),
                         lg::ValueError);
  }
  CHECK(file_bytes(path) == old_contents());
  CHECK(dir.listing() == "report.json\n");
}

TEST_CASE("events=FILE: a stream that cannot start leaves the old file; a failed line is cut back") {
  CleanGuard clean;
  TempDir dir;
  const std::string path = dir / "events.jsonl";
  put_file_bytes(path, old_contents());
  const Tensor x = cl4();
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0:events=" + path));
  {
    FailWritesAfter fail(10);  // the first line fails part-way
    CHECK_THROWS_WITH_AS(keep_layout()({x}), doctest::Contains(("cannot write the event stream to '" + path + "'").c_str()),
                         lg::ValueError);
  }
  CHECK(file_bytes(path) == old_contents());
  CHECK(dir.listing() == "events.jsonl\n");
  keep_layout()({x});  // starts the stream: it replaces the old file
  const std::string first = file_bytes(path);
  const size_t lines = count_of(first, "\n");  // the op's line, after those of the ops inside it
  REQUIRE(lines >= 1);
  const size_t last_line = lines == 1 ? 0 : first.rfind('\n', first.size() - 2) + 1;
  CHECK(contains(first.substr(last_line), "\"op\":\"test.keep_layout\""));
  {
    FailWritesAfter fail(10);
    CHECK_THROWS_AS(keep_layout()({x}), lg::ValueError);
  }
  CHECK(file_bytes(path) == first);  // the half line is gone, the whole one stays
  keep_layout()({x});
  CHECK(count_of(file_bytes(path), "\n") == 2 * lines);
}

TEST_CASE("text that is not UTF-8 goes into reports, event lines and messages with each stray byte as \\xNN") {
  // Well-formed UTF-8 stays as it is (é, an emoji); a Latin-1 byte, a stray continuation byte
  // and an encoded surrogate do not; messages escape control bytes too.
  CHECK(lg::detail::valid_utf8("caf\xc3\xa9 \xf0\x9f\x98\x80 caf\xe9 \x80 \xed\xa0\x80\t") ==
        "caf\xc3\xa9 \xf0\x9f\x98\x80 caf\\xe9 \\x80 \\xed\\xa0\\x80\t");
  CHECK(lg::detail::printable_text("caf\xe9\t\xc3") == "caf\\xe9\\x09\\xc3");
  // A module a C++ program named in Latin-1: JSON cannot hold the byte, and nlohmann refuses
  // to write it; the files are written all the same.
  CleanGuard clean;
  TempDir dir;
  const std::string events = dir / "events.jsonl";
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0:events=" + events));
  {
    lg::guard::ModuleScope m("caf\xe9");
    drop_layout()({cl4()});
  }
  const nlohmann::json j = nlohmann::json::parse(lg::guard::report_json(lg::guard::report()));
  CHECK(j["violations"][0]["module"] == "caf\\xe9");
  std::istringstream lines(file_bytes(events));
  int with_module = 0;
  for (std::string line; std::getline(lines, line);)
    with_module += nlohmann::json::parse(line)["module"] == "caf\\xe9";
  CHECK(with_module >= 1);
}

}  // TEST_SUITE
