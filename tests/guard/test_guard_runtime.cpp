// The guard on live ops: throw, warn, record and off; what a violation says; allow and
// suppressions; multi-output, in-place/out=, ConvLike, ambiguous, 5-D; the conversion ledger;
// shadow; the report; threads; custom-op errors; the fast path coming back.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <layoutguard/testing/doctest.h>

#include "dispatch/dispatcher.h"
#include "guard/call_stack.h"
#include "support/guard_testing.h"
#include "support/tensor_testing.h"
#include "support/test_ops.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using lg::guard::Mode;
using namespace lg::testing;

constexpr auto CL = MemoryFormat::ChannelsLast;
constexpr auto CL3 = MemoryFormat::ChannelsLast3d;

Tensor cl4() { return lg::arange(2 * 8 * 4 * 4).to(lg::kFloat32).reshape({2, 8, 4, 4}).contiguous(CL); }

std::string golden(const std::string& name) { return read_text(std::string(LG_TESTS_DIR) + "/guard/golden/" + name); }

// The lines of an events= file, parsed.
std::vector<nlohmann::json> read_events(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// The violation `fn` raises under throw mode (fails the test if none).
template <typename Fn>
lg::LayoutViolation expect_violation(Fn&& fn) {
  lg::guard::Scope scope(Mode::Throw);
  try {
    fn();
  } catch (const lg::LayoutViolation& e) {
    return e;
  }
  FAIL("no LayoutViolation was raised");
  throw;  // unreachable
}

}  // namespace

TEST_SUITE("guard") {

TEST_CASE("throw mode raises LayoutViolation with the facts as data") {
  CleanGuard clean;
  lg::guard::set_mode(Mode::Throw);
  const Tensor x = cl4();
  lg::LayoutViolation v = [&] {
    lg::guard::ModuleScope layer("layer1");
    lg::guard::ModuleScope block("0");
    try {
      drop_layout()({x});
    } catch (const lg::LayoutViolation& e) {
      return e;
    }
    FAIL("no violation");
    throw;
  }();
  const lg::ViolationInfo& info = v.info();
  CHECK(info.op == "test.drop_layout");
  CHECK(info.lost == CL);
  CHECK(info.policy == lg::LayoutPolicy::Preserve);
  CHECK(info.output_index == 0);
  CHECK(info.input_index == 0);
  REQUIRE(info.inputs.size() == 1);
  REQUIRE(info.outputs.size() == 1);
  CHECK(info.inputs[0].format == "channels_last");
  CHECK(info.inputs[0].strides == std::vector<int64_t>{128, 1, 32, 8});
  CHECK(info.outputs[0].format == "contiguous");
  CHECK(info.outputs[0].dim_order == "abcd");
  CHECK(info.kernel == "test.drop_layout:cpu");
  CHECK(info.module_path == "layer1.0");
  CHECK(v.module_path() == "layer1.0");
  CHECK(info.depth == 0);
  // backtrace=1 is the default: the trace is in what() and reaches this test file.
  CHECK(contains(v.what(), "stack trace (most recent call first):"));
  CHECK(contains(info.backtrace, "test_guard_runtime.cpp"));
  CHECK_FALSE(contains(info.backtrace.substr(0, info.backtrace.find('\n')), "lg::guard::detail"));
  CHECK_FALSE(contains(info.backtrace.substr(0, info.backtrace.find('\n')), "lg::dispatch::"));
  CHECK(dynamic_cast<const lg::Error*>(&v) != nullptr);
}

TEST_CASE("a Scope switches the guard on for its thread only, and the fast path comes back") {
  CleanGuard clean;
  const Tensor x = cl4();
  CHECK_NOTHROW(drop_layout()({x}));  // off by default
  {
    lg::guard::Scope scope(Mode::Throw);
    CHECK_THROWS_AS(drop_layout()({x}), lg::LayoutViolation);
    std::thread([&] { CHECK_NOTHROW(drop_layout()({x})); }).join();
  }
  CHECK_NOTHROW(drop_layout()({x}));
  CHECK(lg::dispatch::detail::g_slow_reasons.load() == 0);
}

TEST_CASE("the violation text matches the golden files (4-D in a module, 5-D at top level)") {
  CleanGuard clean;
  lg::guard::set_options(options_with(Mode::Throw, "backtrace=0"));
  {
    lg::guard::ModuleScope m("layer1.0.conv2");
    const lg::LayoutViolation v = expect_violation([] { drop_layout()({cl4()}); });
    CHECK(std::string(v.what()) == golden("violation_4d.txt"));
    CHECK(v.info().backtrace.empty());
  }
  const Tensor x5 = lg::zeros({2, 3, 2, 2, 2}).contiguous(CL3);
  const lg::LayoutViolation v5 = expect_violation([&] { drop_layout()({x5}); });
  CHECK(v5.info().lost == CL3);
  // The call site (the test's lambda) is named as the compiler mangled it: the golden file
  // holds a placeholder for it.
  REQUIRE_FALSE(v5.info().call_site.empty());
  std::string text = v5.what();
  const std::string line = lg::guard::suppression_line_for(v5.info());
  REQUIRE(line.starts_with("test.drop_layout:(top)@"));
  REQUIRE(text.find(line) != std::string::npos);
  const std::string site = line.substr(line.find('@') + 1);
  for (size_t at; (at = text.find(site)) != std::string::npos;) text.replace(at, site.size(), "<call site>");
  CHECK(text == golden("violation_5d.txt"));
  CHECK(v5.info().signature == "channels_last_3d->contiguous");
}

TEST_CASE("layouts the contract allows raise nothing") {
  CleanGuard clean;
  lg::guard::set_mode(Mode::Throw);
  const Tensor x = cl4();
  LG_CHECK_NO_LAYOUT_VIOLATIONS(keep_layout()({x}));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(drop_layout()({x.contiguous()}));  // contiguous in, contiguous out
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)x.contiguous());              // Explicit
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)x.permute({0, 2, 3, 1}));     // Explicit
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)x.flatten(1));                // RankChanging
  LG_CHECK_LAYOUT_VIOLATION(drop_layout()({x}), "test.drop_layout");
}

TEST_CASE("allow= and suppressions silence an op, suppressions per module glob") {
  CleanGuard clean;
  const Tensor x = cl4();
  lg::guard::set_options(options_with(Mode::Throw, "allow=test.keep_layout,test.drop_layout"));
  CHECK_NOTHROW(drop_layout()({x}));
  TempPath file("lg-suppressions");
  std::ofstream(file.str()) << "# known: the decoder's upsample\ntest.drop_layout:decoder.*\n";
  lg::guard::set_options(options_with(Mode::Throw, "suppressions=" + file.str()));
  {
    lg::guard::ModuleScope m("decoder");
    lg::guard::ModuleScope up("up1");
    CHECK_NOTHROW(drop_layout()({x}));
  }
  lg::guard::ModuleScope m("encoder");
  CHECK_THROWS_AS(drop_layout()({x}), lg::LayoutViolation);
}

TEST_CASE("a suppressions line op:(top) silences the op at top level only; 'op:' is refused") {
  CleanGuard clean;
  const Tensor x = cl4();
  TempPath file("lg-suppressions-top");
  std::ofstream(file.str()) << "test.drop_layout:(top)\n";
  lg::guard::set_options(options_with(Mode::Throw, "suppressions=" + file.str()));
  CHECK_NOTHROW(drop_layout()({x}));
  {
    lg::guard::ModuleScope m("decoder");
    CHECK_THROWS_AS(drop_layout()({x}), lg::LayoutViolation);
  }
  std::ofstream(file.str()) << "test.drop_layout:\n";
  CHECK_THROWS_WITH_AS(lg::guard::parse_options("throw", "suppressions=" + file.str()),
                       doctest::Contains("has an empty module after ':'; write 'test.drop_layout' for every module "
                                         "or 'test.drop_layout:(top)' for calls outside every module"),
                       lg::ConfigError);
}

}  // TEST_SUITE

namespace {
// Two call sites of the same loss, for op@function suppressions (kept out of line so that each
// is a frame of its own).
[[gnu::noinline]] void lose_in_preprocess(const Tensor& x) { drop_layout()({x}); }
[[gnu::noinline]] void lose_in_postprocess(const Tensor& x) { drop_layout()({x}); }
// A lambda's demangled name holds '#' ("{lambda(...)#1}"), which a suppressions file would
// read as the start of a comment.
const auto lose_in_lambda = [](const Tensor& x) __attribute__((noinline)) { drop_layout()({x}); };
// A caller of a call site: on the stack, but not the call site (no tail call: a frame of its own).
[[gnu::noinline]] void caller_of_postprocess(const Tensor& x) {
  lose_in_postprocess(x);
  asm volatile("" ::: "memory");
}
// Function templates: their demangled names start with the return type, a library's
// ("std::vector<lg::Tensor, ...> (anonymous namespace)::lose_in_template<int>"), which says
// nothing of whose code they are.
template <typename T>
[[gnu::noinline]] auto lose_in_template(const Tensor& x) {
  auto out = drop_layout()({x});
  asm volatile("" ::: "memory");  // no tail call: a frame of its own
  return out;
}
template <typename T>
[[gnu::noinline]] void lose_in_void_template(const Tensor& x) {
  drop_layout()({x});
  asm volatile("" ::: "memory");
}
}  // namespace

TEST_SUITE("guard") {

TEST_CASE("a suppressions line op@function-glob silences the loss at that call site only") {
  CleanGuard clean;
  const Tensor x = cl4();
  TempPath file("lg-suppressions-site");
  std::ofstream(file.str()) << "test.drop_layout@*lose_in_preprocess\n";
  lg::guard::set_options(options_with(Mode::Throw, "suppressions=" + file.str()));
  CHECK_NOTHROW(lose_in_preprocess(x));
  CHECK_THROWS_AS(lose_in_postprocess(x), lg::LayoutViolation);
  CHECK_THROWS_AS(drop_layout()({x}), lg::LayoutViolation);
  // Record mode counts the line's losses; the audit's check agrees with the guard.
  lg::guard::clear_report();
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0:suppressions=" + file.str()));
  lose_in_preprocess(x);
  lose_in_preprocess(x);
  lose_in_postprocess(x);
  const lg::guard::Report r = lg::guard::report();
  REQUIRE(r.suppressions.size() == 1);
  CHECK(lg::guard::suppression_line(r.suppressions[0]) == "test.drop_layout@*lose_in_preprocess");
  CHECK(r.suppressions[0].suppressed == 2);
  CHECK(r.violation_count() == 1);
}

TEST_CASE("op@function matches the call site only; op@...function any function of the stack") {
  CleanGuard clean;
  const Tensor x = cl4();
  TempPath file("lg-suppressions-any-frame");
  std::ofstream(file.str()) << "test.drop_layout@*caller_of_postprocess\n";
  lg::guard::set_options(options_with(Mode::Throw, "suppressions=" + file.str()));
  CHECK_THROWS_AS(caller_of_postprocess(x), lg::LayoutViolation);  // its call site is lose_in_postprocess
  std::ofstream(file.str()) << "test.drop_layout@...*caller_of_postprocess\n";
  lg::guard::set_options(options_with(Mode::Throw, "suppressions=" + file.str()));
  CHECK_NOTHROW(caller_of_postprocess(x));
  CHECK_THROWS_AS(lose_in_postprocess(x), lg::LayoutViolation);  // called from elsewhere
}

TEST_CASE("module scopes may end in any order: the path keeps a live scope's until it ends") {
  CleanGuard clean;
  auto outer = std::make_unique<lg::guard::ModuleScope>("outer");
  auto inner = std::make_unique<lg::guard::ModuleScope>("inner");
  auto innermost = std::make_unique<lg::guard::ModuleScope>("innermost");
  CHECK(lg::guard::module_path() == "outer.inner.innermost");
  outer.reset();  // inner ones still live: their path stays
  CHECK(lg::guard::module_path() == "outer.inner.innermost");
  innermost.reset();
  CHECK(lg::guard::module_path() == "outer.inner");
  {
    lg::guard::ModuleScope again("again");  // pushed above an entry that ended below a live one
    CHECK(lg::guard::module_path() == "outer.inner.again");
  }
  CHECK(lg::guard::module_path() == "outer.inner");
  inner.reset();  // and with it the ended outer
  CHECK(lg::guard::module_path().empty());
  lg::guard::ModuleScope fresh("fresh");
  CHECK(lg::guard::module_path() == "fresh");
}

TEST_CASE("a function template is the call site, named without its return type, and its key silences it") {
  CleanGuard clean;
  const Tensor x = cl4();
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0"));
  (void)lose_in_template<int>(x);
  lose_in_void_template<float>(x);
  const lg::guard::Report r = lg::guard::report();
  REQUIRE(r.violations.size() == 2);
  std::vector<std::string> sites{r.violations[0].first.call_site, r.violations[1].first.call_site};
  std::sort(sites.begin(), sites.end());
  CHECK(sites[0] == "(anonymous namespace)::lose_in_template<int>");
  CHECK(sites[1] == "(anonymous namespace)::lose_in_void_template<float>");
  TempPath file("lg-suppressions-template");
  CHECK(lg::guard::write_baseline(file.str(), "a test") == 2);
  lg::guard::set_options(options_with(Mode::Throw, "suppressions=" + file.str()));
  CHECK_NOTHROW((void)lose_in_template<int>(x));
  CHECK_NOTHROW(lose_in_void_template<float>(x));
  CHECK_THROWS_AS(lose_in_preprocess(x), lg::LayoutViolation);  // the caller's own loss is not silenced
}

TEST_CASE("write_baseline: a line break in the writer's text or the path stays inside the comment") {
  CleanGuard clean;
  const Tensor x = cl4();
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0"));
  {
    lg::guard::ModuleScope m("decoder");
    drop_layout()({x});
  }
  TempPath file("lg-baseline-newline");
  // "test.drop_layout" alone on a line would silence that op everywhere.
  CHECK(lg::guard::write_baseline(file.str(), "layoutguard audit --dot g.dot\ntest.drop_layout") == 1);
  std::ifstream in(file.str());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "# Known layout losses, written by: layoutguard audit --dot g.dot\\x0atest.drop_layout");
  CHECK(lines[2] == "test.drop_layout:decoder");
  lg::guard::clear_report();
  lg::guard::set_options(options_with(Mode::Throw, "suppressions=" + file.str()));
  CHECK_THROWS_AS(drop_layout()({x}), lg::LayoutViolation);  // outside decoder: not silenced
}

TEST_CASE("record mode keeps one record per call site for losses outside every module") {
  CleanGuard clean;
  const Tensor x = cl4();
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0"));
  lose_in_preprocess(x);
  lose_in_preprocess(x);
  lose_in_postprocess(x);
  const lg::guard::Report r = lg::guard::report();
  REQUIRE(r.violations.size() == 2);
  CHECK(r.violations[0].first.call_site.ends_with("lose_in_preprocess"));
  CHECK(r.violations[0].count == 2);
  CHECK(r.violations[1].first.call_site.ends_with("lose_in_postprocess"));
  CHECK(r.violations[1].count == 1);
  const std::vector<std::string> lines = lg::guard::baseline_lines(r);
  REQUIRE(lines.size() == 2);  // a baseline from this run silences both sites
  CHECK(lines[0].ends_with("lose_in_postprocess"));
  CHECK(lines[1].ends_with("lose_in_preprocess"));
}

TEST_CASE("baseline_lines: a loss outside every module is keyed by its call site; read back, it silences that site only") {
  CleanGuard clean;
  const Tensor x = cl4();
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0"));
  lose_in_preprocess(x);
  {
    lg::guard::ModuleScope m("decoder");
    lg::guard::ModuleScope up("up*1");  // a glob character in a module name
    drop_layout()({x});
  }
  lg::guard::Report r = lg::guard::report();
  REQUIRE(r.violations.size() == 2);
  CHECK(r.violations[0].first.call_site.ends_with("lose_in_preprocess"));
  CHECK(r.violations[1].first.call_site.empty());  // inside a module: the module keys it
  std::vector<std::string> lines = lg::guard::baseline_lines(r);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "test.drop_layout:(top)@" + r.violations[0].first.call_site);
  CHECK(lines[1] == "test.drop_layout:decoder.up?1");
  CHECK(nlohmann::json::parse(lg::guard::report_json(r))["violations"][0]["call_site"] == r.violations[0].first.call_site);

  TempPath file("lg-baseline");
  CHECK(lg::guard::write_baseline(file.str(), "a test") == 2);
  lg::guard::clear_report();
  lg::guard::set_options(options_with(Mode::Throw, "suppressions=" + file.str()));
  CHECK_NOTHROW(lose_in_preprocess(x));
  CHECK_THROWS_AS(lose_in_postprocess(x), lg::LayoutViolation);  // a new call site is a new loss
  CHECK_THROWS_AS(drop_layout()({x}), lg::LayoutViolation);
  {
    lg::guard::ModuleScope m("decoder");
    lg::guard::ModuleScope up("up*1");
    CHECK_NOTHROW(drop_layout()({x}));
  }

  // Rewriting from a run under the baseline keeps the lines that silenced a loss and adds the
  // new losses; the line that silenced nothing this time (decoder.up?1) is dropped.
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0:suppressions=" + file.str()));
  lose_in_preprocess(x);
  lose_in_postprocess(x);
  r = lg::guard::report();
  lines = lg::guard::baseline_lines(r);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].ends_with("lose_in_postprocess"));
  CHECK(lines[1].ends_with("lose_in_preprocess"));
  // The line a violation suggests silences its call site, even a lambda's.
  lg::guard::clear_report();
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0"));
  lose_in_lambda(x);
  r = lg::guard::report();
  REQUIRE(r.violations.size() == 1);
  CAPTURE(r.violations[0].first.call_site);
  CHECK(r.violations[0].first.call_site.find("lambda") != std::string::npos);
  const std::string line = lg::guard::suppression_line_for(r.violations[0].first);
  CHECK(line.find('#') == std::string::npos);
  CHECK(lg::format_violation(r.violations[0].first).find("silences it here: " + line + "\n") !=
        std::string::npos);
  TempPath lambda_file("lg-baseline-lambda");
  std::ofstream(lambda_file.str()) << line << "\n";
  lg::guard::set_options(options_with(Mode::Throw, "suppressions=" + lambda_file.str()));
  CHECK_NOTHROW(lose_in_lambda(x));
  CHECK_THROWS_AS(lose_in_postprocess(x), lg::LayoutViolation);
  // A module name with '@' (a ModuleDict key): the line keeps it in the module glob.
  lg::ViolationInfo at_sign = r.violations[0].first;
  at_sign.module_path = "heads.cls@2";
  at_sign.call_site.clear();
  const std::string at_line = lg::guard::suppression_line_for(at_sign);
  CHECK(at_line.ends_with(":heads.cls?2"));
  TempPath at_file("lg-baseline-at");
  std::ofstream(at_file.str()) << at_line << "\n";
  const lg::guard::Options at_options = lg::guard::parse_options("", "suppressions=" + at_file.str());
  REQUIRE(at_options.suppressions.size() == 1);
  CHECK(at_options.suppressions[0].frame_glob.empty());
  CHECK(at_options.is_exempt(at_sign.op, "heads.cls@2"));
  // A line break in a name would end the line early: it becomes '?', as any control character.
  lg::ViolationInfo broken = at_sign;
  broken.module_path = "new\nline\r.x";
  CHECK(lg::guard::suppression_line_for(broken).ends_with(":new?line?.x"));

  CHECK_THROWS_WITH_AS(lg::guard::write_baseline("", "a test"), doctest::Contains("received an empty path"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::guard::write_baseline("/nonexistent-dir/known.txt", "a test"),
                       doctest::Contains("cannot write the suppressions baseline to '/nonexistent-dir/known.txt'"), lg::Error);
}

TEST_CASE("the report lists each suppressions line with the losses it silenced; a line that silenced none is unused") {
  CleanGuard clean;
  const Tensor x = cl4();
  TempPath file("lg-suppressions-use");
  std::ofstream(file.str()) << "test.drop_layout:decoder.*\ntest.keep_layout\ncat:(top)\ntest.drop_layout:decoder.*\n";
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0:suppressions=" + file.str()));
  {
    lg::guard::ModuleScope m("decoder");
    lg::guard::ModuleScope up("up1");
    drop_layout()({x});
    drop_layout()({x});
    keep_layout()({x});  // matches its line, but keeps the layout: no loss silenced
  }
  const lg::guard::Report r = lg::guard::report();
  CHECK(r.violations.empty());
  REQUIRE(r.suppressions.size() == 4);
  CHECK(r.suppressions[3].suppressed == 0);  // a repeated line never matches: the first takes the losses
  CHECK(lg::guard::suppression_line(r.suppressions[0]) == "test.drop_layout:decoder.*");
  CHECK(r.suppressions[0].suppressed == 2);
  CHECK(lg::guard::suppression_line(r.suppressions[1]) == "test.keep_layout");
  CHECK(r.suppressions[1].suppressed == 0);
  CHECK(lg::guard::suppression_line(r.suppressions[2]) == "cat:(top)");
  CHECK(r.suppressions[2].suppressed == 0);
  const std::string summary = lg::guard::summary_text(r);
  CHECK(summary.find("  suppressed: test.drop_layout:decoder.* (x2)\n") != std::string::npos);
  CHECK(summary.find("  unused suppression: test.keep_layout (matched no loss; remove it?)\n") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(lg::guard::report_json(r));
  CHECK(j["suppressions"][0]["suppressed"] == 2);
  CHECK(j["suppressions"][2]["module"] == "(top)");
  CHECK(j["suppressions"][0]["function"] == "");
  // allow= wins over a suppressions line: the loss is not the line's.
  lg::guard::clear_report();
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0:allow=test.drop_layout:suppressions=" + file.str()));
  {
    lg::guard::ModuleScope m("decoder");
    drop_layout()({x});
  }
  CHECK(lg::guard::report().suppressions.at(0).suppressed == 0);
}

TEST_CASE("allow= entries that name no op checked in the run are listed: a misspelt name silences nothing") {
  CleanGuard clean;
  const Tensor x = cl4();
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0:allow=test.drop_layout,test.drop_layuot:allow=test.drop_layuot"));
  CHECK(lg::guard::report().unmatched_allow.empty());  // no call counted yet: nothing to say
  drop_layout()({x});
  keep_layout()({x});
  lg::guard::Report r = lg::guard::report();
  CHECK(r.violations.empty());
  CHECK(r.unmatched_allow == std::vector<std::string>{"test.drop_layuot"});  // once, though twice listed
  CHECK(lg::guard::summary_text(r).find(
            "  allow=test.drop_layuot names no op checked in this run (misspelt? it silences nothing)\n") !=
        std::string::npos);
  CHECK(nlohmann::json::parse(lg::guard::report_json(r))["unmatched_allow"] == nlohmann::json{"test.drop_layuot"});
  // A name without a namespace names ATen's op of that name, in a foreign program's report too.
  CHECK(lg::guard::allow_names("softmax", "aten::softmax"));
  CHECK_FALSE(lg::guard::allow_names("softmax", "other::softmax"));
  CHECK_FALSE(lg::guard::allow_names("aten::softmax", "softmax"));
}

TEST_CASE("a suppressions line with a [signature] silences only losses with those operand layouts") {
  CleanGuard clean;
  const Tensor x = cl4(), plain = lg::zeros({2, 8, 4, 4});
  TempPath file("lg-suppressions-signature");
  std::ofstream(file.str()) << "test.drop_layout[channels_last->contiguous]:decoder*\n"
                               "test.drop_layout[*,contiguous->*]:encoder\n";
  lg::guard::set_options(options_with(Mode::Throw, "backtrace=0:suppressions=" + file.str()));
  std::string narrow_line;
  {
    lg::guard::ModuleScope m("decoder");
    CHECK_NOTHROW(drop_layout()({x}));
    // The same op at the same place with another operand: a loss the line does not know.
    const lg::LayoutViolation v = expect_violation([&] { drop_layout()({x, plain}); });
    CHECK(v.info().signature == "channels_last,contiguous->contiguous");
    narrow_line = lg::guard::signature_suppression_line_for(v.info());
    CHECK(narrow_line == "test.drop_layout[channels_last,contiguous->contiguous]:decoder");
    CHECK(std::string(v.what()).find("(with these layouts only: " + narrow_line + ")\n") != std::string::npos);
  }
  {
    lg::guard::ModuleScope m("encoder");
    CHECK_NOTHROW(drop_layout()({x, plain}));
    CHECK_THROWS_AS(drop_layout()({x}), lg::LayoutViolation);
  }
  // The narrowed line a violation suggests silences that loss and no other.
  TempPath narrow("lg-suppressions-narrow");
  std::ofstream(narrow.str()) << narrow_line << "\n";
  lg::guard::set_options(options_with(Mode::Throw, "backtrace=0:suppressions=" + narrow.str()));
  {
    lg::guard::ModuleScope m("decoder");
    CHECK_NOTHROW(drop_layout()({x, plain}));
    CHECK_THROWS_AS(drop_layout()({x}), lg::LayoutViolation);
  }
  // Record mode counts each signature line's losses, and a baseline rewritten from the run
  // keeps the line that silenced some.
  lg::guard::clear_report();
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0:suppressions=" + file.str()));
  {
    lg::guard::ModuleScope m("decoder");
    drop_layout()({x});
    drop_layout()({x});
  }
  const lg::guard::Report r = lg::guard::report();
  CHECK(r.violations.empty());
  REQUIRE(r.suppressions.size() == 2);
  CHECK(lg::guard::suppression_line(r.suppressions[0]) == "test.drop_layout[channels_last->contiguous]:decoder*");
  CHECK(r.suppressions[0].suppressed == 2);
  CHECK(r.suppressions[1].suppressed == 0);
  const std::vector<std::string> lines = lg::guard::baseline_lines(r);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "test.drop_layout[channels_last->contiguous]:decoder*");
  const nlohmann::json j = nlohmann::json::parse(lg::guard::report_json(r));
  CHECK(j["suppressions"][0]["signature"] == "channels_last->contiguous");
  CHECK(j["suppressions"][1]["signature"] == "*,contiguous->*");
}

TEST_CASE("ExpectedLoss: a loss in its scope is no violation, in every mode, and is reported with its reason") {
  CleanGuard clean;
  const Tensor x = cl4();
  {
    lg::guard::Scope scope(Mode::Throw);
    lg::guard::ExpectedLoss expected("no NHWC kernel for the test op");
    CHECK_NOTHROW(drop_layout()({x}));
    CHECK_NOTHROW(drop_layout()({x}));
    CHECK(expected.count() == 2);
  }
  {  // the scope has ended: the loss raises again
    lg::guard::Scope scope(Mode::Throw);
    CHECK_THROWS_AS(drop_layout()({x}), lg::LayoutViolation);
  }
  // An op filter: only that op's loss is expected.
  {
    lg::guard::Scope scope(Mode::Throw);
    lg::guard::ExpectedLoss only_cat("cat of mixed layouts", "cat");
    CHECK_THROWS_AS(drop_layout()({x}), lg::LayoutViolation);
    CHECK_NOTHROW((void)lg::cat({x, x.contiguous()}, 1));
    CHECK(only_cat.count() == 1);
  }
  // Record mode: an expected loss is listed with its reason, and is not a violation; a scope
  // that took nothing is listed as unused.
  lg::guard::clear_report();
  {
    lg::guard::Scope scope(Mode::Record);
    lg::guard::ModuleScope m("decoder");
    {
      LG_EXPECT_LAYOUT_LOSS("bicubic upsample stays NCHW");
      drop_layout()({x});
      drop_layout()({x});
    }
    { LG_EXPECT_LAYOUT_LOSS("a loss that was fixed", "test.drop_layout"); }
    LG_CHECK_NO_LAYOUT_VIOLATIONS({
      LG_EXPECT_LAYOUT_LOSS("inside an assertion");
      drop_layout()({x});
    });
  }
  const lg::guard::Report r = lg::guard::report();
  CHECK(r.violations.empty());
  REQUIRE(r.expected_losses.size() == 1);
  CHECK(r.expected_losses[0].reason == "bicubic upsample stays NCHW");
  CHECK(r.expected_losses[0].op == "test.drop_layout");
  CHECK(r.expected_losses[0].module_path == "decoder");
  CHECK(r.expected_losses[0].count == 2);
  REQUIRE(r.unused_expectations.size() == 1);
  CHECK(r.unused_expectations[0].reason == "a loss that was fixed");
  CHECK(r.unused_expectations[0].op == "test.drop_layout");
  CHECK(r.unused_expectations[0].scopes == 1);
  const std::string summary = lg::guard::summary_text(r);
  CHECK(summary.find("expected loss: test.drop_layout @ decoder (x2): bicubic upsample stays NCHW") != std::string::npos);
  CHECK(summary.find("unused expected loss of test.drop_layout (1 scope took no loss; remove it?): a loss that was fixed") !=
        std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(lg::guard::report_json(r));
  CHECK(j["expected_losses"][0]["count"] == 2);
  CHECK(j["unused_expectations"][0]["reason"] == "a loss that was fixed");
  CHECK(j["violation_count"] == 0);
}

TEST_CASE("ExpectedLoss: nested scopes, the innermost match takes the loss; bad arguments are refused") {
  CleanGuard clean;
  const Tensor x = cl4();
  lg::guard::Scope scope(Mode::Throw);
  lg::guard::ExpectedLoss outer("any op");
  {
    lg::guard::ExpectedLoss inner("cat only", "cat");
    drop_layout()({x});  // inner does not match: outer takes it
    (void)lg::cat({x, x.contiguous()}, 1);
    CHECK(inner.count() == 1);
    CHECK(lg::guard::ExpectedLoss::innermost_for("cat") == &inner);
    CHECK(lg::guard::ExpectedLoss::innermost_for("test.drop_layout") == &outer);
  }
  CHECK(outer.count() == 1);
  CHECK_THROWS_WITH_AS(lg::guard::ExpectedLoss(""), doctest::Contains("[ExpectedLoss] received an empty reason"),
                       lg::Error);
  CHECK_NOTHROW(lg::guard::ExpectedLoss("why", "mylib::resize"));  // namespaced custom ops keep "::"
  CHECK_THROWS_WITH_AS(lg::guard::ExpectedLoss("why", "cat:decoder"),
                       doctest::Contains("[ExpectedLoss] received op 'cat:decoder'; required: an op name"), lg::Error);
  for (const char* bad : {"mylib::", "::resize", "a:::b", "re\x01size"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(lg::guard::ExpectedLoss("why", bad), doctest::Contains("required: an op name"), lg::Error);
  }
}

TEST_CASE("ExpectedLoss: the event stream marks the loss expected, with its reason, and no violation") {
  CleanGuard clean;
  TempPath events("lg-events-expected");
  const Tensor x = cl4();
  lg::guard::set_options(options_with(Mode::Throw, "backtrace=0:events=" + events.str()));
  {
    LG_EXPECT_LAYOUT_LOSS("known", "test.drop_layout");
    drop_layout()({x});
  }
  const std::vector<nlohmann::json> lines = read_events(events.str());
  const auto drop = std::find_if(lines.begin(), lines.end(),
                                 [](const nlohmann::json& l) { return l["op"] == "test.drop_layout"; });
  REQUIRE(drop != lines.end());
  CHECK((*drop)["violation"] == false);
  CHECK((*drop)["expected_loss"] == "known");
  CHECK((*drop)["rule"].get<std::string>().size() > 0);
}

TEST_CASE("ExpectedLoss: a loss expected on one thread still fails on another") {
  CleanGuard clean;
  const Tensor x = cl4();
  lg::guard::ExpectedLoss here("this thread only");
  bool raised = false;
  std::thread other([&] {
    lg::guard::Scope scope(Mode::Throw);
    try {
      drop_layout()({x});
    } catch (const lg::LayoutViolation&) {
      raised = true;
    }
  });
  other.join();
  CHECK(raised);
}

TEST_CASE("a forked child keeps checking but writes none of the parent's files") {
  CleanGuard clean;
  TempPath events("lg-events-fork"), report("lg-report-fork");
  const Tensor x = cl4();
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0:summary=0:events=" + events.str() + ":report=" + report.str()));
  (void)lg::relu(x);
  const size_t before = read_events(events.str()).size();
  REQUIRE(before > 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child checks and records its calls, then exits through the exit handlers, which
    // would write the report: none of it may reach the parent's files.
    const int64_t inherited = lg::guard::report().checked_calls;
    (void)lg::relu(x);
    drop_layout()({x});
    const lg::guard::Report r = lg::guard::report();
    std::exit(r.checked_calls > inherited && !r.violations.empty() ? 0 : 3);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // the child's calls were checked
  CHECK(read_events(events.str()).size() == before);
  CHECK_FALSE(std::filesystem::exists(report.str()));
  (void)lg::relu(x);  // the parent's stream goes on
  CHECK(read_events(events.str()).size() == before + 1);
}

TEST_CASE("events=FILE writes one JSON line per checked call, conversions and violations included") {
  CleanGuard clean;
  TempPath events("lg-events");
  const Tensor x = cl4();  // made before the stream starts: its ops are not in it
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0:events=" + events.str()));
  {
    lg::guard::ModuleScope m("block1");
    (void)lg::relu(x);
    (void)x.contiguous();  // a conversion: contiguous at depth 0, copy_ inside it
    drop_layout()({x});    // a violation
  }
  const std::vector<nlohmann::json> lines = read_events(events.str());
  REQUIRE(lines.size() >= 4);
  for (size_t i = 0; i < lines.size(); ++i) {
    CHECK(lines[i]["seq"].get<uint64_t>() == lines[0]["seq"].get<uint64_t>() + i);  // in order, none lost
    CHECK(lines[i]["module"] == "block1");
    CHECK(lines[i]["thread"] == lines[0]["thread"]);
  }
  // Ops inside an op finish first, so their lines come before it.
  const auto relu = std::find_if(lines.begin(), lines.end(), [](const nlohmann::json& l) { return l["op"] == "relu"; });
  REQUIRE(relu != lines.end());
  CHECK((*relu)["policy"] == "Preserve");
  CHECK((*relu)["depth"] == 0);
  CHECK((*relu)["inputs"][0]["strides"] == std::vector<int64_t>{128, 1, 32, 8});
  CHECK((*relu)["outputs"][0]["format"] == "channels_last");
  CHECK((*relu)["violation"] == false);
  int64_t converted = 0;
  for (const nlohmann::json& l : lines)
    if (l["op"] == "copy_" && l["root_op"] == "contiguous") {
      CHECK(l["depth"] == 1);
      converted += l["conversion_bytes"].get<int64_t>();
    }
  CHECK(converted == static_cast<int64_t>(x.nbytes()));
  const nlohmann::json& last = lines.back();
  CHECK(last["op"] == "test.drop_layout");
  CHECK(last["violation"] == true);
  CHECK(contains(last["rule"].get<std::string>(), "policy Preserve requires a channels_last output"));
  // Throw mode writes the violating call's line before raising.
  lg::guard::set_options(options_with(Mode::Throw, "backtrace=0:events=" + events.str()));
  CHECK_THROWS_AS(drop_layout()({x}), lg::LayoutViolation);
  const std::string text = read_text(events.str());
  const std::string final_line = text.substr(text.rfind('\n', text.size() - 2) + 1);
  CHECK(nlohmann::json::parse(final_line)["violation"] == true);
}

TEST_CASE("a module name with control characters is shown with escapes, whole, in the dump and the summary") {
  CleanGuard clean;
  lg::guard::set_options(options_with(Mode::Throw, "backtrace=0"));
  const Tensor x = cl4();
  using namespace std::string_view_literals;
  std::string text;
  {
    lg::guard::ModuleScope m("head\0\nfc"sv);
    try {
      drop_layout()({x});
    } catch (const lg::LayoutViolation& v) {
      text = v.what();  // a C string: a NUL in it would end it
    }
  }
  CHECK(contains(text, "module: head\\x00\\x0afc\n"));
  CHECK(contains(text, "suppressions line that silences it here: test.drop_layout:head??fc\n"));
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0"));
  {
    lg::guard::ModuleScope m("head\0\nfc"sv);
    drop_layout()({x});
  }
  CHECK(contains(lg::guard::summary_text(lg::guard::report()), "violation: test.drop_layout @ head\\x00\\x0afc: "));
}

TEST_CASE("warn logs each distinct violation once, counts repeats, and stops at max_reports") {
  CleanGuard clean;
  TempPath log("lg-warn-log");
  lg::guard::set_options(options_with(Mode::Warn, "backtrace=0:max_reports=2:log_path=" + log.str()));
  const Tensor x = cl4();
  for (int i = 0; i < 3; ++i) CHECK_NOTHROW(drop_layout()({x}));
  std::string text = read_text(log.str());
  CHECK(count_of(text, "[warning] test.drop_layout lost channels_last") == 1);
  {
    lg::guard::ModuleScope m("block2");  // another module: a distinct violation
    drop_layout()({x});
  }
  text = read_text(log.str());
  CHECK(count_of(text, "[warning] test.drop_layout lost channels_last") == 2);
  CHECK(contains(text, "module: block2"));
  {
    lg::guard::ModuleScope m("block3");  // third distinct: over max_reports=2
    drop_layout()({x});
    lg::guard::ModuleScope m4("deeper");  // fourth: counted, not logged
    drop_layout()({x});
  }
  text = read_text(log.str());
  CHECK(count_of(text, "[warning] test.drop_layout lost channels_last") == 2);
  CHECK(count_of(text, "max_reports=2 distinct violations logged") == 1);
  const lg::guard::Report r = lg::guard::report();
  REQUIRE(r.violations.size() == 4);
  CHECK(r.violations[0].count == 3);
  CHECK(r.violation_count() == 6);
}

TEST_CASE("record is silent and fills the report; report_json and write_report agree") {
  CleanGuard clean;
  TempPath log("lg-record-log");
  lg::guard::set_options(options_with(Mode::Record, "log_path=" + log.str()));
  const Tensor x = cl4();
  for (int i = 0; i < 4; ++i) drop_layout()({x});
  keep_layout()({x});
  CHECK(read_text(log.str()).empty());
  const lg::guard::Report r = lg::guard::report();
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].count == 4);
  CHECK(contains(r.violations[0].first.backtrace, "test_guard_runtime.cpp"));
  // The trace starts at the op call: no frame of the guard or the dispatcher leads it.
  const std::string& trace = r.violations[0].first.backtrace;
  const std::string first_frame = trace.substr(0, trace.find('\n'));
  CHECK(first_frame.rfind("    #0 ", 0) == 0);  // indented as the dump's other lines, as Python frames are
  CHECK_FALSE(contains(first_frame, "lg::guard::detail"));
  CHECK_FALSE(contains(first_frame, "lg::dispatch::"));
  const auto op = std::find_if(r.ops.begin(), r.ops.end(), [](auto& o) { return o.op == "test.drop_layout"; });
  REQUIRE(op != r.ops.end());
  CHECK(op->calls == 4);
  CHECK(op->violations == 4);

  TempPath json("lg-report-json");
  lg::guard::write_report(json.str());
  const nlohmann::json j = nlohmann::json::parse(read_text(json.str()));
  CHECK(j["violation_count"] == 4);
  REQUIRE(j["violations"].size() == 1);
  const auto& v = j["violations"][0];
  CHECK(v["op"] == "test.drop_layout");
  CHECK(v["count"] == 4);
  CHECK(v["formats_in"] == "channels_last");
  CHECK(v["formats_out"] == "contiguous");
  CHECK(v["inputs"][0]["strides"] == std::vector<int64_t>{128, 1, 32, 8});
  CHECK(v["outputs"][0]["sizes"] == std::vector<int64_t>{2, 8, 4, 4});
  CHECK(v["lost"] == "channels_last");
  CHECK(!v["first_backtrace"].get<std::string>().empty());
  CHECK(contains(lg::guard::summary_text(r), "violation: test.drop_layout @ (no module): channels_last -> contiguous (x4)"));
  CHECK_THROWS_AS(lg::guard::write_report("/nonexistent-dir/report.json"), lg::Error);
  CHECK_THROWS_AS(lg::guard::write_report(""), lg::ValueError);
}

TEST_CASE("off and exempt calls leave the report empty") {
  CleanGuard clean;
  drop_layout()({cl4()});
  CHECK(lg::guard::report().checked_calls == 0);
  CHECK(lg::guard::report().violations.empty());
}

TEST_CASE("the layout fallback converts channels-last inputs, is flagged, and is in the ledger") {
  CleanGuard clean;
  const Tensor x = cl4();
  lg::guard::set_mode(Mode::Record);
  const Tensor out = contiguous_only()({x})[0];
  CHECK(out.is_contiguous());
  const lg::guard::Report r = lg::guard::report();
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].first.kernel == "test.contiguous_only:cpu (contiguous only)");
  REQUIRE(r.conversions.size() == 1);
  CHECK(r.conversions[0].op == "test.contiguous_only");
  CHECK(r.conversions[0].from == "channels_last");
  CHECK(r.conversions[0].to == "contiguous");
  CHECK(r.conversions[0].bytes == static_cast<int64_t>(x.nbytes()));
  CHECK(r.ops.front().op == "test.contiguous_only");  // sorted by conversion bytes
  CHECK(r.ops.front().conversions == 1);
  CHECK(values(out) == values(x));
  // A user's explicit conversion is in the ledger under its own op.
  lg::guard::clear_report();
  (void)x.contiguous();
  const lg::guard::Report r2 = lg::guard::report();
  REQUIRE(r2.conversions.size() == 1);
  CHECK(r2.conversions[0].op == "contiguous");
  CHECK(r2.violations.empty());
}

TEST_CASE("add(cf, cl): the violation names the first operand as the one that decided the layout") {
  CleanGuard clean;
  const Tensor cl = cl4(), cf = cl4().contiguous();
  const lg::LayoutViolation v = expect_violation([&] { (void)lg::add(cf, cl); });
  CHECK(v.info().op == "add");
  CHECK(v.info().input_index == 1);
  CHECK(std::string(v.what()).find("the output took the layout of input 0 (contiguous)") != std::string::npos);
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)lg::add(cl, cf));  // channels_last first: kept
  // cat follows a rule of its own (any contiguous input makes it contiguous): no such note.
  const lg::LayoutViolation c = expect_violation([&] { (void)lg::cat({cl, cf}, 1); });
  CHECK(c.info().op == "cat");
  CHECK(std::string(c.what()).find("took the layout") == std::string::npos);
}

TEST_CASE("ConversionTally counts a block's conversions in throw mode too, nested, and not N1HW copies") {
  CleanGuard clean;
  const Tensor x = cl4();  // 2x8x4x4 float32: 1024 bytes
  lg::guard::Scope scope(Mode::Throw);
  lg::guard::ConversionTally outer;
  (void)x.contiguous();  // NHWC -> NCHW: Explicit, never flagged, but 1024 bytes copied
  {
    lg::guard::ConversionTally inner;
    (void)x.contiguous().contiguous(CL);  // and back
    CHECK(inner.count() == 2);
    CHECK(inner.bytes() == 2048);
    const std::vector<lg::guard::ConversionRecord> rows = inner.records();
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].from != rows[1].from);
    CHECK(rows[0].bytes == 1024);
  }
  CHECK(outer.count() == 3);
  CHECK(outer.bytes() == 3072);
  const std::vector<lg::guard::ConversionRecord> grouped = outer.records();
  REQUIRE(grouped.size() == 2);  // (contiguous, channels_last -> contiguous) twice, grouped
  CHECK(grouped[0].op == "contiguous");
  CHECK(grouped[0].count == 2);
  CHECK(grouped[0].bytes == 2048);
  // Same-order copies are no conversions: a plain clone, and NCHW <-> NHWC with C = 1, where
  // both hold the bytes in one order.
  lg::guard::ConversionTally quiet;
  (void)x.clone();
  const Tensor one_channel = lg::ones({2, 1, 4, 4});
  (void)one_channel.to(CL);
  CHECK(one_channel.to(CL).strides() != one_channel.strides());  // a real copy, new strides
  CHECK(quiet.count() == 0);
  // Throw mode leaves the process ledger alone.
  CHECK(lg::guard::report().conversions.empty());
}

TEST_CASE("ConversionTally: tallies kept on the heap may end in any order") {
  CleanGuard clean;
  const Tensor x = cl4();
  lg::guard::Scope scope(Mode::Record);
  auto first = std::make_unique<lg::guard::ConversionTally>();
  auto second = std::make_unique<lg::guard::ConversionTally>();
  auto third = std::make_unique<lg::guard::ConversionTally>();
  second.reset();  // the middle one first
  (void)x.contiguous();
  CHECK(first->count() == 1);
  CHECK(third->count() == 1);
  first.reset();
  (void)x.contiguous();
  CHECK(third->count() == 2);
  third.reset();
  lg::guard::ConversionTally last;
  (void)x.contiguous();
  CHECK(last.count() == 1);
}

TEST_CASE("is_layout_conversion: another memory order of the dims of size > 1") {
  const Tensor cf = lg::empty({2, 3, 4, 5}), cl = lg::empty({2, 3, 4, 5}, {}, CL);
  CHECK(lg::guard::is_layout_conversion(cf, cl));
  CHECK(lg::guard::is_layout_conversion(cl, cf));
  CHECK_FALSE(lg::guard::is_layout_conversion(cf, lg::empty({2, 3, 4, 5})));
  CHECK_FALSE(lg::guard::is_layout_conversion(lg::empty({2, 1, 4, 5}), lg::empty({2, 1, 4, 5}, {}, CL)));  // C = 1
  CHECK_FALSE(lg::guard::is_layout_conversion(cf, lg::empty({1, 3, 4, 5}, {}, CL)));  // broadcast: other sizes
  CHECK_FALSE(lg::guard::is_layout_conversion(lg::empty({1, 1, 1, 1}), lg::empty({1, 1, 1, 1}, {}, CL)));
  CHECK_FALSE(lg::guard::is_layout_conversion(Tensor(), cl));
  CHECK(lg::guard::is_layout_conversion(cf, cl.narrow(0, 0, 2)));  // a slice is read in its own order
}

TEST_CASE("ConversionTally sees nothing while the guard is off") {
  CleanGuard clean;
  lg::guard::ConversionTally tally;
  (void)cl4().contiguous();
  CHECK(tally.count() == 0);
}

TEST_CASE("multi-output ops: each output is checked") {
  CleanGuard clean;
  const lg::LayoutViolation v = expect_violation([] { split_two()({cl4()}); });
  CHECK(v.info().output_index == 1);
  CHECK(v.info().outputs.size() == 2);
  CHECK(v.info().outputs[0].format == "channels_last");
}

TEST_CASE("in-place and out= tensors are checked as outputs") {
  CleanGuard clean;
  const Tensor x = cl4();
  Tensor out_cf = lg::empty({2, 8, 4, 4});
  const lg::LayoutViolation v = expect_violation([&] { copy_into()({x, out_cf}); });
  CHECK(v.info().outputs[0].format == "contiguous");
  CHECK(values(out_cf) == values(x));  // the op ran before the check
  Tensor out_cl = lg::empty({2, 8, 4, 4}, {}, CL);
  LG_CHECK_NO_LAYOUT_VIOLATIONS(copy_into()({x, out_cl}));
}

TEST_CASE("ConvLike: a channels-last input or weight expects a channels-last output") {
  CleanGuard clean;
  const Tensor x_cl = lg::zeros({1, 3, 5, 5}).contiguous(CL), x_cf = lg::zeros({1, 3, 5, 5});
  const Tensor w_cl = lg::zeros({4, 3, 3, 3}).contiguous(CL), w_cf = lg::zeros({4, 3, 3, 3});
  CHECK(expect_violation([&] { fake_conv()({x_cl, w_cf}); }).info().input_index == 0);
  CHECK(expect_violation([&] { fake_conv()({x_cf, w_cl}); }).info().input_index == 1);
  LG_CHECK_NO_LAYOUT_VIOLATIONS(fake_conv()({x_cf, w_cf}));
  // A third input (a bias, say) never sets the expectation.
  LG_CHECK_NO_LAYOUT_VIOLATIONS(fake_conv()({x_cf, w_cf, lg::zeros({1, 4, 5, 5}).contiguous(CL)}));
}

TEST_CASE("View policy on built-in views: an expand over the batch loses the format, slices keep it") {
  CleanGuard clean;
  const Tensor one = lg::empty({1, 3, 4, 5}, {}, CL);
  const lg::LayoutViolation v = expect_violation([&] { (void)one.expand({2, 3, 4, 5}); });
  CHECK(v.info().op == "expand");
  CHECK(v.info().kernel == "view (metadata only)");
  CHECK(v.info().outputs[0].strides == std::vector<int64_t>{0, 1, 15, 3});
  const Tensor x = lg::empty({2, 3, 4, 5}, {}, CL);
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)x.narrow(2, 0, 1));
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)x.view({2, 3, 4, 5}));
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)x.reshape({2, 3, 20, 1}));
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)x.transpose(1, 3));  // Explicit: the caller asked
}

TEST_CASE("View policy: x[0].unsqueeze(0) hides channels_last behind a contiguous suggestion (pytorch#68430)") {
  CleanGuard clean;
  const Tensor x = lg::empty({2, 3, 4, 5}, {}, CL);
  const Tensor image = x.select(0, 1);  // rank 3: no format to lose, nothing flagged
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)x.select(0, 1));
  const lg::LayoutViolation v = expect_violation([&] { (void)image.unsqueeze(0); });
  CHECK(v.info().op == "unsqueeze");
  CHECK(v.info().input_index == 0);
  CHECK(v.info().outputs[0].strides == std::vector<int64_t>{3, 1, 15, 3});
  const std::string text = v.what();
  CHECK(text.rfind("[layoutguard] unsqueeze lost channels_last: output 0 is permuted (ambiguous: also "
                   "channels_last-contiguous): its channels_last data suggests contiguous_format\n", 0) == 0);
  CHECK(text.find("take x.narrow(0, i, 1) instead") != std::string::npos);
  // The fix it names keeps the format; unsqueeze of NCHW data and a 4-D -> 5-D unsqueeze of
  // NHWC data (channels_last_3d with D = 1) are fine.
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)x.narrow(0, 1, 1));
  CHECK(x.narrow(0, 1, 1).suggest_memory_format() == CL);
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)lg::empty({2, 3, 4, 5}).select(0, 1).unsqueeze(0));
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)x.unsqueeze(2));
  CHECK(x.unsqueeze(2).is_contiguous(CL3));
  // squeeze of a channels_last_3d tensor's size-1 depth keeps the format; view does not
  // change rank here.
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)lg::empty({2, 3, 1, 4, 5}, {}, CL3).squeeze(2));
  // An HWC image permuted to CHW holds the same NHWC bytes, and is flagged the same way
  // (image.unsqueeze(0).permute({0, 3, 1, 2}) gives it channels_last strides); hidden_views=0
  // turns the rule off. The library's own views of it (conv2d on the unbatched image makes it
  // 4-D, then 5-D) are not the user's: not flagged.
  const Tensor hwc = lg::zeros({4, 5, 3}).permute({2, 0, 1});
  CHECK(expect_violation([&] { (void)hwc.unsqueeze(0); }).info().op == "unsqueeze");
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)lg::zeros({4, 5, 3}).unsqueeze(0).permute({0, 3, 1, 2}));
  CHECK(lg::zeros({4, 5, 3}).unsqueeze(0).permute({0, 3, 1, 2}).suggest_memory_format() == CL);
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)lg::conv2d(hwc, lg::zeros({2, 3, 1, 1})));
  lg::guard::set_options(options_with(Mode::Throw, "hidden_views=0"));
  CHECK_NOTHROW((void)hwc.unsqueeze(0));
}

TEST_CASE("ambiguous inputs: skipped by default, judged by their suggestion with ambiguous=check") {
  CleanGuard clean;
  const Tensor nc11 = lg::empty({2, 3, 1, 1}, {}, CL).fill_(0);  // NC11 with channels-last strides
  lg::guard::set_options(options_with(Mode::Throw));
  CHECK_NOTHROW(drop_layout()({nc11}));
  lg::guard::set_options(options_with(Mode::Throw, "ambiguous=check"));
  CHECK_THROWS_AS(drop_layout()({nc11}), lg::LayoutViolation);
}

TEST_CASE("min_bytes exempts small outputs") {
  CleanGuard clean;
  lg::guard::set_options(options_with(Mode::Throw, "min_bytes=100000"));
  CHECK_NOTHROW(drop_layout()({cl4()}));
  lg::guard::set_options(options_with(Mode::Throw, "min_bytes=1024"));
  CHECK_THROWS_AS(drop_layout()({cl4()}), lg::LayoutViolation);  // 1 KiB of float32
}

TEST_CASE("shadow=1 catches wrong values of a channels-last kernel") {
  CleanGuard clean;
  const Tensor x = cl4();
  CHECK_NOTHROW(wrong_nhwc()({x}));  // shadow off: the wrong value goes unnoticed
  lg::guard::set_options(options_with(Mode::Record, "shadow=1"));
  try {
    wrong_nhwc()({x});
    FAIL("no ShadowMismatch");
  } catch (const lg::ShadowMismatch& e) {
    CHECK(e.op() == "test.wrong_nhwc");
    CHECK(e.output_index() == 0);
    CHECK(e.max_abs_diff() == doctest::Approx(1000.0 - 16.0));  // memory element 1 is x[0,1,0,0] = 16
    CHECK(contains(e.what(), "flat index 16"));
  }
  CHECK_NOTHROW(wrong_nhwc()({x.contiguous()}));
  CHECK_NOTHROW(keep_layout()({x}));
  CHECK_NOTHROW(copy_into()({x, lg::empty({2, 8, 4, 4}, {}, CL)}));  // in place: copies, not callers' tensors
  lg::guard::set_options(options_with(Mode::Record, "shadow=1:allow=test.wrong_nhwc"));
  CHECK_NOTHROW(wrong_nhwc()({x}));  // allow= leaves the op out of the comparison too
  lg::guard::set_options(options_with(Mode::Record, "shadow=1:allow=test.keep_layout"));
  CHECK_THROWS_AS(wrong_nhwc()({x}), lg::ShadowMismatch);  // only the ops it names
}

TEST_CASE("record from 8 threads gives exact counts") {
  CleanGuard clean;
  lg::guard::set_mode(Mode::Record);
  constexpr int kThreads = 8, kCalls = 200;
  const Tensor x = cl4();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      lg::guard::ModuleScope m(t % 2 ? "odd" : "even");
      for (int i = 0; i < kCalls; ++i) {
        drop_layout()({x});
        keep_layout()({x});
      }
    });
  for (auto& th : threads) th.join();
  const lg::guard::Report r = lg::guard::report();
  REQUIRE(r.violations.size() == 2);  // one per module
  CHECK(r.violation_count() == kThreads * kCalls);
  for (const auto& v : r.violations) CHECK(v.count == kThreads / 2 * kCalls);
  int64_t drop_calls = 0, keep_calls = 0;
  for (const auto& o : r.ops) {
    if (o.op == "test.drop_layout") drop_calls = o.calls;
    if (o.op == "test.keep_layout") keep_calls = o.calls;
  }
  CHECK(drop_calls == kThreads * kCalls);
  CHECK(keep_calls == kThreads * kCalls);
}

TEST_CASE("an invalid LAYOUTGUARD makes every op raise ConfigError until fixed") {
  CleanGuard clean;
  {
    EnvVar mode("LAYOUTGUARD", "loud");
    lg::guard::reset_to_environment();
    for (int i = 0; i < 2; ++i) {
      try {
        (void)lg::zeros({2, 2}).clone();
        FAIL("no ConfigError");
      } catch (const lg::ConfigError& e) {
        CHECK(contains(e.what(), "LAYOUTGUARD"));
        CHECK(contains(e.what(), "loud"));
      }
    }
  }
  lg::guard::reset_to_environment();
  CHECK_NOTHROW((void)lg::zeros({2, 2}).clone());
}

TEST_CASE("hooks see custom ops with their name, policy and kernel") {
  CleanGuard clean;
  std::vector<std::string> seen;
  lg::hooks::ScopedHook hook([&](const lg::hooks::OpCall& c) {
    if (c.depth == 0) seen.push_back(std::string(c.op) + "/" + std::string(c.kernel) + "/" +
                                     std::string(lg::layout_policy_name(c.policy)));
  });
  keep_layout()({cl4()});
  REQUIRE(seen.size() >= 1);
  CHECK(seen.back() == "test.keep_layout/test.keep_layout:cpu/Preserve");
}

TEST_CASE("custom op registration and calls validate their input") {
  using lg::register_op;
  auto id = [](const Tensors& in) { return in; };
  CHECK_THROWS_WITH_AS(register_op("", lg::LayoutPolicy::Preserve, id), doctest::Contains("non-empty name"), lg::ValueError);
  CHECK_THROWS_WITH_AS(register_op("bad name", lg::LayoutPolicy::Preserve, id), doctest::Contains("'bad name'"), lg::ValueError);
  // Colons only as "::": a lone ':' (or ":::") would split the name in LAYOUTGUARD_OPTIONS.
  for (const char* name : {"a:b", "ns:::x", "trailing:", ":lead", "ns::"})
    CHECK_THROWS_WITH_AS(register_op(name, lg::LayoutPolicy::Preserve, id), doctest::Contains("'::'"), lg::ValueError);
  CHECK(register_op("test_ns::v2::identity", lg::LayoutPolicy::Preserve, id).name() == "test_ns::v2::identity");
  CHECK_THROWS_WITH_AS(register_op("clone", lg::LayoutPolicy::Preserve, id), doctest::Contains("built-in op"), lg::ValueError);
  CHECK_THROWS_WITH_AS(register_op("test.bad_policy", static_cast<lg::LayoutPolicy>(99), id),
                       doctest::Contains("received layout policy 99; required Preserve, ConvLike"), lg::ValueError);
  CHECK_THROWS_WITH_AS(register_op("test.bad_layouts", lg::LayoutPolicy::Preserve, static_cast<lg::KernelLayouts>(9), id),
                       doctest::Contains("received kernel layouts 9; required Any or ContiguousOnly"), lg::ValueError);
  CHECK_THROWS_WITH_AS(register_op("test.no_kernel", lg::LayoutPolicy::Preserve, nullptr),
                       doctest::Contains("empty cpu_kernel"), lg::ValueError);
  (void)drop_layout();
  CHECK_THROWS_WITH_AS(register_op("test.drop_layout", lg::LayoutPolicy::Preserve, id),
                       doctest::Contains("already registered"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::CustomOp()({}), doctest::Contains("empty CustomOp"), lg::ValueError);
  static const lg::CustomOp undefined_out = register_op("test.undefined_out", lg::LayoutPolicy::Preserve,
                                                        [](const Tensors&) { return Tensors{Tensor()}; });
  CHECK_THROWS_WITH_AS(undefined_out({lg::zeros({2})}), doctest::Contains("undefined tensor as output 0"), lg::ValueError);
  // An error inside the kernel reaches the caller unchanged, and the guard stays usable.
  static const lg::CustomOp failing = register_op("test.failing", lg::LayoutPolicy::Preserve, [](const Tensors& in) {
    return Tensors{in.at(3)};
  });
  CHECK_THROWS_AS(failing({lg::zeros({2})}), std::out_of_range);
  CHECK(drop_layout().name() == "test.drop_layout");
  CHECK(drop_layout().policy() == lg::LayoutPolicy::Preserve);
}

TEST_CASE("function names from stacks: parameter lists go, operator() stays, locators' text is read") {
  using lg::guard::detail::functions_of_stack_text;
  using lg::guard::detail::without_parameters;
  CHECK(without_parameters("app::merge(at::Tensor const&, int)") == "app::merge");
  CHECK(without_parameters("main::{lambda()#1}::operator()() const") == "main::{lambda()#1}::operator()");
  CHECK(without_parameters("main::{lambda()#1}::operator()()") == "main::{lambda()#1}::operator()");
  CHECK(without_parameters("operator()") == "operator()");  // a lambda's name in debug information
  CHECK(without_parameters("preprocess") == "preprocess");
  const std::string python =
      "    (no frame of the user's on this thread; the work was handed to it at a.py:3 in main)\n"
      "    #0 cumsum_twice at /srv/app/steps.py:12\n"
      "    #1 <module> at /srv/app/main.py:40\n"
      "    #2 broken line without the word\n";
  CHECK(functions_of_stack_text(python) == std::vector<std::string>{"cumsum_twice", "<module>"});
  CHECK(functions_of_stack_text("").empty());
}

}  // TEST_SUITE
