// The guard switched on by the real environment, in a child process (tests/guard/env_probe.cpp):
// each mode, 1/0, allow, report=, summary, help=1 and an invalid value.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/guard_testing.h"

namespace {

using lg::testing::contains;
using lg::testing::count_of;

// Runs the probe with exactly these guard variables (the others unset); stdout + stderr.
std::string run_probe(const std::string& env, const std::string& api = "") {
  const std::string cmd = "env -u LAYOUTGUARD -u LAYOUTGUARD_OPTIONS " + env + " " LG_ENV_PROBE " " + api + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  CHECK(pclose(pipe) == 0);
  return out;
}

constexpr const char* kViolationLine =
    "call: LayoutViolation: [layoutguard] probe.drop_layout lost channels_last: output 0 is contiguous "
    "but input 0 is channels_last";

}  // namespace

TEST_SUITE("guard") {

TEST_CASE("LAYOUTGUARD=throw (and 1) raises on every call") {
  for (const char* value : {"throw", "1"}) {
    CAPTURE(value);
    const std::string out = run_probe(std::string("LAYOUTGUARD=") + value);
    CHECK(count_of(out, kViolationLine) == 3);
  }
}

TEST_CASE("a module or mode scope destroyed on another thread ends the program with an lg::Error") {
  for (const std::string api : {"module_scope_elsewhere", "mode_scope_elsewhere"}) {
    CAPTURE(api);
    FILE* pipe = popen((std::string(LG_ENV_PROBE " ") + api + " 2>&1").c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string out;
    std::array<char, 4096> buf;
    while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
    CHECK(pclose(pipe) != 0);
    CHECK(contains(out, "destroyed on another thread than the one that made it"));
    CHECK_FALSE(contains(out, "without an error"));
  }
}

TEST_CASE("an exception that leaves main, and quick_exit, still write the report and the summary") {
  for (const std::string api : {"uncaught", "quick_exit"}) {
    CAPTURE(api);
    lg::testing::TempPath report("lg-env-report-" + api);
    FILE* pipe = popen(("LAYOUTGUARD=record LAYOUTGUARD_OPTIONS=report=" + report.str() + " " LG_ENV_PROBE " " + api +
                        " 2>&1")
                           .c_str(),
                       "r");
    REQUIRE(pipe != nullptr);
    std::string out;
    std::array<char, 4096> buf;
    while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
    const int status = pclose(pipe);
    CHECK(status != 0);
    CHECK(contains(out, "checked calls, 3 violations (1 distinct)"));
    if (api == "uncaught") CHECK(contains(out, "the program's own error"));  // the runtime's handler still ran
    const nlohmann::json j = nlohmann::json::parse(lg::testing::read_text(report.str()));
    REQUIRE(j["violations"].size() == 1);
    CHECK(j["violations"][0]["count"] == 3);
  }
}

TEST_CASE("unset, off and 0 are silent") {
  for (const char* env : {"", "LAYOUTGUARD=off", "LAYOUTGUARD=0"}) {
    CAPTURE(env);
    const std::string out = run_probe(env);
    CHECK(count_of(out, "call: ok") == 3);
    CHECK_FALSE(contains(out, "[layoutguard]"));
  }
}

TEST_CASE("warn logs once and the exit summary counts all three") {
  const std::string out = run_probe("LAYOUTGUARD=warn");
  CHECK(count_of(out, "call: ok") == 3);
  CHECK(count_of(out, "[warning] probe.drop_layout lost channels_last") == 1);
  CHECK(contains(out, "stack trace (most recent call first):"));
  // Checked calls include the ops inside the kernel (clone, copy_, ...), so only the violations
  // are exact here.
  CHECK(contains(out, "checked calls, 3 violations (1 distinct)"));
  CHECK(contains(out, "violation: probe.drop_layout @ (no module): channels_last -> contiguous (x3)"));
}

TEST_CASE("a log_path that fails to take a warning (a full disk) is named once, in layoutguard's words") {
  if (!std::filesystem::exists("/dev/full")) {
    MESSAGE("skipped: no /dev/full on this machine to stand for a full disk");
    return;
  }
  const std::string out = run_probe("LAYOUTGUARD=warn LAYOUTGUARD_OPTIONS=log_path=/dev/full", "modules");
  CHECK(count_of(out, "[layoutguard] log_path=/dev/full: a warning could not be written (") == 1);
  CHECK(contains(out, "No space left on device); the warnings sent there are lost, the exit summary and report= "
                      "still count every violation"));
  CHECK_FALSE(contains(out, "LOG ERROR"));  // spdlog's own line
  CHECK(contains(out, "3 violations (3 distinct)"));  // three warnings failed, one line said so
}

TEST_CASE("record writes the JSON report at exit, silently with summary=0") {
  lg::testing::TempPath report("lg-env-report");
  const std::string out = run_probe("LAYOUTGUARD=record LAYOUTGUARD_OPTIONS=summary=0:report=" + report.str());
  CHECK(count_of(out, "call: ok") == 3);
  CHECK_FALSE(contains(out, "[layoutguard]"));
  const nlohmann::json j = nlohmann::json::parse(lg::testing::read_text(report.str()));
  REQUIRE(j["violations"].size() == 1);
  CHECK(j["violations"][0]["op"] == "probe.drop_layout");
  CHECK(j["violations"][0]["count"] == 3);
  const auto& ops = j["ops"];
  const auto probe = std::find_if(ops.begin(), ops.end(), [](const auto& o) { return o["op"] == "probe.drop_layout"; });
  REQUIRE(probe != ops.end());
  CHECK((*probe)["calls"] == 3);
  CHECK((*probe)["violations"] == 3);
}

TEST_CASE("write_suppressions= writes a baseline at exit that silences the run's losses when read back") {
  lg::testing::TempPath file("lg-env-baseline");
  const std::string out = run_probe("LAYOUTGUARD=record LAYOUTGUARD_OPTIONS=summary=0:write_suppressions=" + file.str());
  CHECK(count_of(out, "call: ok") == 3);
  CHECK(contains(out, "[layoutguard] wrote 1 suppressions line to " + file.str()));
  const std::string baseline = lg::testing::read_text(file.str());
  // A call outside every module is keyed by its call site: the probe calls the op from main.
  CHECK(contains(baseline, "\nprobe.drop_layout:(top)@main\n"));
  CHECK(baseline.starts_with("# Known layout losses"));
  CHECK(count_of(run_probe("LAYOUTGUARD=throw LAYOUTGUARD_OPTIONS=suppressions=" + file.str()), "call: ok") == 3);
}

TEST_CASE("allow= and a suppressions file silence the op under throw") {
  CHECK(count_of(run_probe("LAYOUTGUARD=throw LAYOUTGUARD_OPTIONS=allow=probe.drop_layout"), "call: ok") == 3);
  lg::testing::TempPath file("lg-env-suppressions");
  std::FILE* f = std::fopen(file.str().c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs("probe.drop_layout  # known\n", f);
  std::fclose(f);
  CHECK(count_of(run_probe("LAYOUTGUARD=throw LAYOUTGUARD_OPTIONS=suppressions=" + file.str()), "call: ok") == 3);
}

TEST_CASE("an invalid value raises ConfigError on every op call") {
  const std::string out = run_probe("LAYOUTGUARD=loud");
  CHECK(count_of(out, "call: ConfigError: LAYOUTGUARD") == 3);
  CHECK(contains(out, "'loud'"));
  const std::string out2 = run_probe("LAYOUTGUARD=throw LAYOUTGUARD_OPTIONS=colour=1");
  CHECK(count_of(out2, "call: ConfigError: LAYOUTGUARD_OPTIONS") == 3);
}

TEST_CASE("the API replaces an invalid value: set_mode the mode, set_options both variables") {
  // A bad LAYOUTGUARD stops mattering once set_mode replaces it...
  std::string out = run_probe("LAYOUTGUARD=loud", "set_mode");
  CHECK(count_of(out, "call: ConfigError: LAYOUTGUARD=") == 1);
  CHECK(count_of(out, kViolationLine) == 2);
  // ...but set_mode leaves LAYOUTGUARD_OPTIONS in force, so its error stays.
  out = run_probe("LAYOUTGUARD=throw LAYOUTGUARD_OPTIONS=colour=1", "set_mode");
  CHECK(count_of(out, "call: ConfigError: LAYOUTGUARD_OPTIONS") == 3);
  // set_options replaces everything the environment says.
  out = run_probe("LAYOUTGUARD=loud LAYOUTGUARD_OPTIONS=colour=1", "set_options");
  CHECK(count_of(out, "call: ConfigError: LAYOUTGUARD") == 1);
  CHECK(count_of(out, kViolationLine) == 2);
}

TEST_CASE("help=1 prints every option once at first use") {
  const std::string out = run_probe("LAYOUTGUARD=record LAYOUTGUARD_OPTIONS=help=1:summary=0");
  CHECK(count_of(out, "max_reports") == 1);
  CHECK(contains(out, "allow"));
  CHECK(contains(out, "suppressions"));
  CHECK(count_of(out, "call: ok") == 3);
}

}  // TEST_SUITE
