// The guard's settings: LAYOUTGUARD / LAYOUTGUARD_OPTIONS parsing, errors, help text, glob
// matching, precedence of environment, API and Scope.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <layoutguard/layoutguard.h>

#include "support/file_testing.h"
#include "support/guard_testing.h"

namespace {

using lg::guard::Mode;
using lg::guard::parse_options;
using lg::testing::contains;
using lg::testing::EnvVar;

std::string config_error(std::string_view mode, std::string_view opts) {
  try {
    parse_options(mode, opts);
  } catch (const lg::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("guard") {

TEST_CASE("LAYOUTGUARD accepts the four modes and 1/0, and nothing else") {
  CHECK(parse_options("", "").mode == Mode::Off);
  CHECK(parse_options("warn", "").mode == Mode::Warn);
  CHECK(parse_options("throw", "").mode == Mode::Throw);
  CHECK(parse_options("record", "").mode == Mode::Record);
  CHECK(parse_options("1", "").mode == Mode::Throw);
  CHECK(parse_options("0", "").mode == Mode::Off);
  CHECK(parse_options(" off ", "").mode == Mode::Off);
  const std::string e = config_error("loud", "");
  CHECK(contains(e, "LAYOUTGUARD='loud' is not a mode"));
  CHECK(contains(e, "off, warn, throw, record"));
}

TEST_CASE("LAYOUTGUARD_OPTIONS sets every key") {
  const lg::guard::Options o = parse_options(
      "record", "allow=pad,upsample_bicubic2d:ambiguous=check:min_bytes=4096:backtrace=0:summary=0:"
                "report=/tmp/r.json:log_path=/tmp/l.txt:events=/tmp/e.jsonl:shadow=1:max_reports=7:help=1:"
                "nested=0:forward_calls=1:grad_format=1");
  CHECK(o.allow == std::vector<std::string>{"pad", "upsample_bicubic2d"});
  CHECK(o.ambiguous == lg::guard::Ambiguous::Check);
  // "::" belongs to a value (namespaced custom ops); single colons and runs of three separate.
  const lg::guard::Options ns = parse_options("", "allow=ns::drop,a::b::c:summary=0:::min_bytes=8:");
  CHECK(ns.allow == std::vector<std::string>{"ns::drop", "a::b::c"});
  // Repeated, allow= adds up; a name without a namespace also names ATen's op, not another's.
  const lg::guard::Options twice = parse_options("", "allow=softmax:allow=aten::cumsum,ns::drop");
  CHECK(twice.allow == std::vector<std::string>{"softmax", "aten::cumsum", "ns::drop"});
  CHECK(twice.allows("softmax"));
  CHECK(twice.allows("aten::softmax"));
  CHECK(twice.allows("aten::cumsum"));
  CHECK_FALSE(twice.allows("cumsum"));
  CHECK_FALSE(twice.allows("other::softmax"));
  CHECK_FALSE(twice.allows("aten::drop"));
  CHECK(twice.is_exempt("aten::softmax", ""));
  CHECK_FALSE(ns.summary);
  CHECK(ns.min_bytes == 8);
  CHECK(ns.is_exempt("ns::drop", ""));
  CHECK(o.min_bytes == 4096);
  CHECK_FALSE(o.backtrace);
  CHECK_FALSE(o.summary);
  CHECK(o.report_path == "/tmp/r.json");
  CHECK(o.log_path == "/tmp/l.txt");
  CHECK(o.events_path == "/tmp/e.jsonl");
  CHECK(o.shadow);
  CHECK(o.max_reports == 7);
  CHECK(o.help);
  CHECK_FALSE(o.nested);
  CHECK(o.forward_calls);
  CHECK(o.grad_format);
  // Defaults.
  const lg::guard::Options d = parse_options("", "");
  CHECK(d.ambiguous == lg::guard::Ambiguous::Skip);
  CHECK(d.backtrace);
  CHECK(d.summary);
  CHECK(d.max_reports == 100);
  CHECK(d.allow.empty());
  CHECK(d.nested);  // the PyTorch bridge's own keys: the native guard reads none of them
  CHECK_FALSE(d.forward_calls);
  CHECK_FALSE(d.grad_format);
}

TEST_CASE("bad options are ConfigErrors naming the variable, the key and the allowed values") {
  std::string e = config_error("", "colour=red");
  CHECK(contains(e, "LAYOUTGUARD_OPTIONS: unknown key 'colour'"));
  CHECK(contains(e, "allowed keys: allow, suppressions, ambiguous, min_bytes"));
  e = config_error("", "ambiguous=maybe");
  CHECK(contains(e, "key 'ambiguous' got 'maybe'; allowed values: skip, check"));
  e = config_error("", "min_bytes=-5");
  CHECK(contains(e, "key 'min_bytes' got '-5'; allowed values: an integer from 0 to 9223372036854775807"));
  CHECK(contains(config_error("", "min_bytes=9223372036854775808"), "got '9223372036854775808'; allowed values: an integer from 0"));
  // Control bytes in a value are shown, not left to move the cursor or start a false line.
  CHECK(contains(config_error("", "summary=\x1b[2J"), "key 'summary' got '\\x1b[2J'"));
  CHECK(contains(config_error("", "colour\x1b=red"), "unknown key 'colour\\x1b'"));
  // The sanitizers' ',' between keys: rejected with the ':' form, not read as an op name.
  const std::string comma = config_error("", "allow=cat,min_bytes=10");
  CHECK(contains(comma, "'min_bytes=10' is not an op name"));
  CHECK(contains(comma, "as in allow=cat:min_bytes=10"));
  CHECK(contains(config_error("", "allow=min_bytes=10"), "as in min_bytes=10"));
  // An op name has no spaces or control characters and no empty part around "::".
  // (A control byte is shown escaped.)
  for (const auto& [name, shown] : {std::pair{"a b", "a b"}, {"::", "::"}, {"aten::", "aten::"}, {"::softmax", "::softmax"},
                                    {"ns:: drop", "ns:: drop"}, {"aten::\x7f", "aten::\\x7f"}})
    CHECK_MESSAGE(contains(config_error("", std::string("allow=softmax,") + name),
                           std::string("'") + shown + "' is not an op name"), name);
  CHECK(parse_options("", "allow=proj::gr\xc3\xb6\xc3\x9f" "e").allow == std::vector<std::string>{"proj::gr\xc3\xb6\xc3\x9f" "e"});
  // A NUL would end a path or a name early where C reads it.
  using namespace std::string_view_literals;
  CHECK(contains(config_error("", "report=r\0.json"sv), "LAYOUTGUARD_OPTIONS holds a NUL character at offset 8"));
  CHECK(contains(config_error("warn\0"sv, ""), "LAYOUTGUARD holds a NUL character at offset 4"));
  CHECK(contains(config_error("", "max_reports=12abc"), "key 'max_reports'"));
  CHECK(contains(config_error("", "backtrace=yes"), "allowed values: 0, 1"));
  CHECK(contains(config_error("", "hidden_views=2"), "key 'hidden_views' got '2'; allowed values: 0, 1"));
  CHECK(contains(config_error("", "spans=yes"), "key 'spans' got 'yes'; allowed values: 0, 1"));
  CHECK(contains(config_error("", "grad_format=on"), "key 'grad_format' got 'on'; allowed values: 0, 1"));
  CHECK(contains(config_error("", "write_suppressions="), "key 'write_suppressions'"));
  CHECK(contains(config_error("", "write_suppressions=/nonexistent-dir/known.txt"), "key 'write_suppressions'"));
  CHECK(contains(config_error("", "report="), "key 'report' got '' (empty)"));
  // Paths written later are checked now: a missing directory, a directory, an unwritable file.
  CHECK(contains(config_error("", "log_path=/proc/x/y.log"), "key 'log_path' got '/proc/x/y.log' (its directory does not exist)"));
  CHECK(contains(config_error("", "report=/nonexistent-dir/r.json"), "allowed values: a writable file path"));
  CHECK(contains(config_error("", "report=/tmp"), "(a directory)"));
  // Placeholders are %p, %r and %%: any other '%' would name one file for every process.
  CHECK(contains(config_error("", "report=/tmp/r-%x.json"), "key 'report' got '/tmp/r-%x.json' (unknown placeholder '%x')"));
  CHECK(contains(config_error("", "events=/tmp/e-%.jsonl"), "(unknown placeholder '%.')"));
  CHECK(contains(config_error("", "log_path=/tmp/l%"), "(a '%' at the end)"));
  CHECK(contains(config_error("", "report=/tmp/r%x.json"), "%p, %r and %% stand for the process id, RANK and '%'"));
  CHECK(parse_options("", "report=/tmp/r-%%-%p-%r.json").report_path ==
        "/tmp/r-%-" + std::to_string(getpid()) + "-" + (std::getenv("RANK") && *std::getenv("RANK") ? std::getenv("RANK") : "0") + ".json");
  // Flags take 0 and 1, and false and true.
  CHECK(parse_options("", "grad_format=true:nested=false").grad_format);
  CHECK_FALSE(parse_options("", "grad_format=true:nested=false").nested);
  CHECK(contains(config_error("", "events=/tmp"), "key 'events' got '/tmp' (a directory)"));
  CHECK(contains(config_error("", "events=/proc/x/e.jsonl"), "(its directory does not exist)"));
  if (access("/proc/version", W_OK) != 0)  // root may write anywhere, but not into /proc
    CHECK(contains(config_error("", "log_path=/proc/version"), "not writable"));
  // A path through a regular file (ENOTDIR), and one under a directory we may not enter (EACCES).
  lg::testing::TempPath file("lg-not-a-dir");
  std::ofstream(file.str()) << "x";
  CHECK(contains(config_error("", "report=" + file.str() + "/r.json"), "cannot be reached"));
  if (geteuid() == 0) {
    MESSAGE("EACCES case skipped: running as root, which may enter any directory");
  } else {
    lg::testing::TempPath locked("lg-locked-dir");
    REQUIRE(mkdir(locked.str().c_str(), 0) == 0);
    CHECK(contains(config_error("", "report=" + locked.str() + "/sub/r.json"), "cannot be reached"));
    rmdir(locked.str().c_str());
  }
  CHECK(contains(config_error("", "summary"), "'summary' is not key=value"));
  {
    // A value is quoted up to 512 bytes, then its length: a setting of megabytes would make a
    // message of megabytes.
    const std::string message = config_error(std::string(100000, 'w'), "");
    CHECK(contains(message, "LAYOUTGUARD='" + std::string(512, 'w') + "... (100000 bytes)' is not a mode"));
    CHECK(message.size() < 1000);
    // So for a path, an op name and a suppressions path.
    for (const std::string& options : {"report=/tmp/" + std::string(100000, 'a'), "allow=a b" + std::string(100000, 'c'),
                                       "suppressions=/nonexistent/" + std::string(100000, 'a')}) {
      CAPTURE(options.substr(0, 20));
      const std::string long_message = config_error("", options);
      CHECK(contains(long_message, " bytes)"));
      CHECK(long_message.size() < 2000);
    }
  }
  {
    // A symbolic link is checked where it leads, also to a file not made yet; a FIFO as the log
    // would hold the first warning until some process reads it; two keys may not share a file.
    lg::testing::TempDir dir;
    REQUIRE(::symlink("/nonexistent-dir/r.json", (dir / "dangling").c_str()) == 0);
    CHECK(contains(config_error("", "log_path=" + (dir / "dangling")),
                   "/nonexistent-dir/r.json: its directory does not exist"));
    REQUIRE(::symlink("later.json", (dir / "to-later").c_str()) == 0);
    CHECK(parse_options("", "report=" + (dir / "to-later")).report_path == dir / "to-later");
    lg::testing::make_fifo(dir / "log");
    CHECK(contains(config_error("", "log_path=" + (dir / "log")), "(a FIFO, which would hold the first write"));
    // A pipe reached through /proc (as /dev/stderr on a pipe): the fd entry's target,
    // "pipe:[N]", names no file; the entry is a FIFO, which events= cannot replace.
    int ends[2];
    REQUIRE(::pipe(ends) == 0);
    CHECK(contains(config_error("", "events=/proc/self/fd/" + std::to_string(ends[1])),
                   "got '/proc/self/fd/" + std::to_string(ends[1]) + "' (not a regular file (a FIFO))"));
    // The log is opened in place: the process's own pipe is taken (its reader is there).
    CHECK(parse_options("", "log_path=/proc/self/fd/" + std::to_string(ends[1])).log_path ==
          "/proc/self/fd/" + std::to_string(ends[1]));
    CHECK(parse_options("", "log_path=/dev/fd/" + std::to_string(ends[1])).log_path == "/dev/fd/" + std::to_string(ends[1]));
    CHECK(contains(config_error("", "report=/dev/fd/" + std::to_string(ends[1])), "(not a regular file (a FIFO))"));
    ::close(ends[0]);
    ::close(ends[1]);
    CHECK(contains(config_error("", "report=" + (dir / "x.json") + ":events=" + dir.str() + "/./x.json"),
                   "keys 'report' and 'events' name one file"));
    CHECK(contains(config_error("", "report=" + (dir / "x.json") + ":log_path=" + (dir / "to-later") +
                                        ":write_suppressions=" + (dir / "later.json")),
                   "keys 'write_suppressions' and 'log_path' name one file"));
  }
  CHECK(contains(config_error("", "suppressions=/nonexistent/lg.supp"),
                 "[LAYOUTGUARD_OPTIONS suppressions=] /nonexistent/lg.supp: cannot open: No such file or directory; "
                 "required: a suppressions file"));
  // Not a list of suppressions: a device, a directory, a FIFO (reading it would wait for a
  // writer forever), a file too big to be one.
  CHECK(contains(config_error("", "suppressions=/dev/zero"), "not a regular file (a character device)"));
  CHECK(contains(config_error("", "suppressions=/tmp"), "/tmp: not a regular file (a directory)"));
  lg::testing::TempDir fifo_dir;
  lg::testing::make_fifo(fifo_dir / "supp");
  CHECK(contains(config_error("", "suppressions=" + (fifo_dir / "supp")), "supp: not a regular file (a FIFO)"));
  lg::testing::TempPath big("lg-big-suppressions");
  std::ofstream(big.str()) << std::string((1 << 20) + 1, '#');
  CHECK(contains(config_error("", "suppressions=" + big.str()), "1048577 bytes, more than the limit of 1048576 bytes"));
  // A file of the kernel's says it has 0 bytes: it is read to its end all the same, and its
  // lines are no suppressions (read as empty, it silenced nothing and said nothing).
  CHECK(contains(config_error("", "suppressions=/proc/version"), "suppressions file '/proc/version' line 1: 'Linux"));
}

TEST_CASE("a suppressions file lists op[:module-glob] lines with # comments") {
  const std::string path = "lg_test_suppressions.txt";
  {
    std::ofstream f(path);
    f << "# known NCHW fallbacks\n\nupsample_bicubic2d\npad : decoder.*  # reflect padding\n  cat:*.skip?\n"
      << "ns::drop\nproj::v2::act:head.*\ncat:::tail.*\n";
  }
  const lg::guard::Options o = parse_options("", "suppressions=" + path);
  REQUIRE(o.suppressions.size() == 6);
  CHECK(o.suppressions[5].op == "cat");
  CHECK(o.suppressions[5].module_glob == "tail.*");  // a ":::" run separates like ':'
  // Namespaced custom op names keep their "::"; a lone ':' starts the module glob.
  CHECK(o.suppressions[3].op == "ns::drop");
  CHECK(o.suppressions[3].module_glob.empty());
  CHECK(o.suppressions[4].op == "proj::v2::act");
  CHECK(o.suppressions[4].module_glob == "head.*");
  CHECK(o.is_exempt("ns::drop", "any.module"));
  CHECK(o.is_exempt("proj::v2::act", "head.fc"));
  CHECK_FALSE(o.is_exempt("proj::v2::act", "body.fc"));
  CHECK(o.suppressions[0].op == "upsample_bicubic2d");
  CHECK(o.suppressions[0].module_glob.empty());
  CHECK(o.suppressions[1].op == "pad");
  CHECK(o.suppressions[1].module_glob == "decoder.*");
  CHECK(o.is_exempt("upsample_bicubic2d", "anything"));
  CHECK(o.is_exempt("pad", "decoder.up1.pad"));
  CHECK_FALSE(o.is_exempt("pad", "encoder.pad"));
  CHECK(o.is_exempt("cat", "unet.skip1"));
  CHECK_FALSE(o.is_exempt("cat", "unet.skip12"));
  CHECK_FALSE(o.is_exempt("conv2d", "decoder.conv"));
  {
    std::ofstream f(path);  // a UTF-8 byte-order mark before the first line is not part of it
    f << "\xEF\xBB\xBFsoftmax:head\r\npad\n";
  }
  const lg::guard::Options marked = parse_options("", "suppressions=" + path);
  REQUIRE(marked.suppressions.size() == 2);
  CHECK(marked.suppressions[0].op == "softmax");
  CHECK(marked.is_exempt("softmax", "head"));
  {
    std::ofstream f(path, std::ios::binary);  // control bytes are shown, not left to end the message
    f << std::string("a\0b c\tx:y\n", 10);
  }
  CHECK(contains(config_error("", "suppressions=" + path), "line 1: 'a\\x00b c\\x09x:y' holds a control byte"));
  {
    std::ofstream f(path, std::ios::binary);  // lines ended by CR alone read as one line
    f << "pad:head\rcat\r";
  }
  CHECK(contains(config_error("", "suppressions=" + path), "line 1: 'pad:head\\x0dcat' holds a control byte (lines end in LF"));
  {
    std::ofstream f(path);
    f << "pad\nbad op:x\n";
  }
  CHECK(contains(config_error("", "suppressions=" + path),
                 "line 2: 'bad op:x' is not op[[signature-glob]][:module-glob][@function-glob]"));
  // A call site after '@', with or without a module; namespaces keep their "::" on both sides.
  {
    std::ofstream f(path);
    f << "pad@app::preprocess*\ncat:decoder.* @ *::merge\nns::drop:(top)@main\n";
  }
  const lg::guard::Options sites = parse_options("", "suppressions=" + path);
  REQUIRE(sites.suppressions.size() == 3);
  CHECK(sites.suppressions[0].op == "pad");
  CHECK(sites.suppressions[0].module_glob.empty());
  CHECK(sites.suppressions[0].frame_glob == "app::preprocess*");
  CHECK(sites.suppressions[1].op == "cat");
  CHECK(sites.suppressions[1].module_glob == "decoder.*");
  CHECK(sites.suppressions[1].frame_glob == "*::merge");
  CHECK(sites.suppressions[2].op == "ns::drop");
  CHECK(sites.suppressions[2].module_glob == "(top)");
  CHECK(sites.suppressions[2].frame_glob == "main");
  // Call-site lines never exempt without a stack: check_layout asks them for a real loss only.
  CHECK_FALSE(sites.is_exempt("pad", ""));
  CHECK(sites.has_loss_line("pad"));
  CHECK_FALSE(sites.has_loss_line("conv2d"));
  for (const char* bad : {"pad@\n", "pad:decoder@\n", "@main\n"}) {
    {
      std::ofstream f(path);
      f << bad;
    }
    CAPTURE(bad);
    CHECK(contains(config_error("", "suppressions=" + path), "is not op[[signature-glob]][:module-glob][@function-glob]"));
  }
  // A layout signature in brackets right after the op; a layout name's own ':' stays inside it,
  // and a '[' in a call site's glob is the glob's.
  {
    std::ofstream f(path);
    f << "add[channels_last,contiguous->contiguous]\n"
         "cat[*ambiguous: also*]:decoder.*\n"
         "ns::pad[*->permuted]:(top)@app::run\n"
         "mul@*operator[]\n"
         "sub[*] :m @ app::f\n";
  }
  const lg::guard::Options sigs = parse_options("", "suppressions=" + path);
  REQUIRE(sigs.suppressions.size() == 5);
  CHECK(sigs.suppressions[0].op == "add");
  CHECK(sigs.suppressions[0].signature_glob == "channels_last,contiguous->contiguous");
  CHECK(sigs.suppressions[0].module_glob.empty());
  CHECK(sigs.suppressions[1].op == "cat");
  CHECK(sigs.suppressions[1].signature_glob == "*ambiguous: also*");
  CHECK(sigs.suppressions[1].module_glob == "decoder.*");
  CHECK(sigs.suppressions[2].op == "ns::pad");
  CHECK(sigs.suppressions[2].signature_glob == "*->permuted");
  CHECK(sigs.suppressions[2].module_glob == "(top)");
  CHECK(sigs.suppressions[2].frame_glob == "app::run");
  CHECK(sigs.suppressions[3].op == "mul");
  CHECK(sigs.suppressions[3].signature_glob.empty());
  CHECK(sigs.suppressions[3].frame_glob == "*operator[]");
  CHECK(sigs.suppressions[4].signature_glob == "*");  // blanks around the separators, as elsewhere
  CHECK(sigs.suppressions[4].module_glob == "m");
  CHECK(sigs.suppressions[4].frame_glob == "app::f");
  // Signature lines never exempt before the call: they need the loss's operands.
  CHECK_FALSE(sigs.is_exempt("add", ""));
  CHECK(sigs.has_loss_line("add"));
  CHECK(sigs.has_loss_line("cat"));
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {"add[channels_last\n", "has '[' without ']' after the op"},
           {"add[ ]:x\n", "has an empty [signature]"},
           {"add[*]x\n", "has text after ']' that is not ':module-glob' or '@function-glob'"},
           {"[*]:x\n", "is not op[[signature-glob]][:module-glob][@function-glob]"},
           // The op is matched by its exact name: one no op can have is refused, not left unused.
           {"aten::\n", "names no op: 'aten::' is not an op name"},
           {"::softmax:layer1\n", "names no op: '::softmax' is not an op name"},
           {"soft\x01max\n", "'soft\\x01max' holds a control byte"}}) {
    {
      std::ofstream f(path);
      f << bad;
    }
    CAPTURE(bad);
    CHECK(contains(config_error("", "suppressions=" + path), why));
  }
  std::remove(path.c_str());
}

TEST_CASE("glob_match handles * and ?") {
  using lg::guard::glob_match;
  CHECK(glob_match("*", ""));
  CHECK(glob_match("layer*.conv?", "layer3.4.conv2"));
  CHECK_FALSE(glob_match("layer*.conv?", "layer3.4.conv"));
  CHECK(glob_match("a*b*c", "aXXbYYc"));
  CHECK_FALSE(glob_match("a*b*c", "aXXbYY"));
  CHECK(glob_match("**a", "bba"));
  CHECK(glob_match("exact", "exact"));
  CHECK_FALSE(glob_match("exact", "exact2"));
}

TEST_CASE("help text lists every option with its value and source") {
  const std::string help = lg::guard::describe_options(parse_options("warn", "min_bytes=64"));
  CHECK(contains(help, "LAYOUTGUARD = warn [environment]"));
  CHECK(contains(help, "min_bytes = 64 [environment]"));
  CHECK(contains(help, "summary = 1 [default]"));
  for (std::string_view key : lg::guard::option_keys()) CHECK(contains(help, "  " + std::string(key) + " = "));
  // All five variables: the two above, and the logger's, the CUDA allocator's and the bridge's.
  CHECK(contains(help, "LAYOUTGUARD_LOG_LEVEL: "));
  CHECK(contains(help, "LAYOUTGUARD_CUDA_CACHE: "));
  CHECK(contains(help, "LAYOUTGUARD_TORCH_UNBOXED: "));
}

TEST_CASE("random option strings give a ConfigError or a valid result, never a crash") {
  std::mt19937 rng(5);
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyz_=:,01-9 ";
  const std::vector<std::string> pieces{"allow=", "ambiguous=", "min_bytes=", "help=", "shadow=",
                                        "max_reports=", "report=", ":", "=", ",", "1", "check"};
  int valid = 0, errors = 0;
  for (int i = 0; i < 10000; ++i) {
    std::string text;
    const int n = static_cast<int>(rng() % 8);
    for (int k = 0; k < n; ++k)
      text += rng() % 2 ? pieces[rng() % pieces.size()] : std::string(1, alphabet[rng() % alphabet.size()]);
    try {
      parse_options(rng() % 4 ? "" : text, text);
      ++valid;
    } catch (const lg::ConfigError&) {
      ++errors;
    }
  }
  CHECK(valid > 100);
  CHECK(errors > 100);
}

TEST_CASE("the environment is read on first use; set_mode and Scope override it") {
  EnvVar mode("LAYOUTGUARD", "record");
  EnvVar opts("LAYOUTGUARD_OPTIONS", "min_bytes=10");
  lg::guard::reset_to_environment();
  CHECK(lg::guard::mode() == Mode::Record);
  CHECK(lg::guard::options().min_bytes == 10);
  {
    lg::guard::Scope outer(Mode::Throw);
    CHECK(lg::guard::mode() == Mode::Throw);
    {
      lg::guard::Scope inner(Mode::Off);
      CHECK(lg::guard::mode() == Mode::Off);
      CHECK(lg::guard::options().sources[0] == lg::guard::Source::Api);
      // A Scope belongs to its thread.
      Mode other = Mode::Off;
      std::thread([&] { other = lg::guard::mode(); }).join();
      CHECK(other == Mode::Record);
    }
    CHECK(lg::guard::mode() == Mode::Throw);
  }
  CHECK(lg::guard::mode() == Mode::Record);
  lg::guard::set_mode(Mode::Warn);
  CHECK(lg::guard::mode() == Mode::Warn);
  CHECK(lg::guard::options().min_bytes == 10);  // set_mode leaves the other settings alone
  lg::guard::Options api = lg::guard::parse_options("", "");
  api.mode = Mode::Throw;
  api.max_reports = 3;
  lg::guard::set_options(api);
  CHECK(lg::guard::mode() == Mode::Throw);
  CHECK(lg::guard::options().max_reports == 3);
  CHECK(lg::guard::options().sources[4] == lg::guard::Source::Api);
  lg::guard::reset_to_environment();
  CHECK(lg::guard::mode() == Mode::Record);
}

TEST_CASE("set_options_keeping_mode keeps the process-wide mode, not a Scope's, and replaces a bad LAYOUTGUARD_OPTIONS") {
  {
    EnvVar mode("LAYOUTGUARD", "warn");
    EnvVar opts("LAYOUTGUARD_OPTIONS", "min_bytes=ten");  // replaced, so never raised
    lg::guard::reset_to_environment();
    {
      lg::guard::Scope scope(Mode::Throw);
      lg::guard::set_options_keeping_mode("max_reports=4");
      CHECK(lg::guard::mode() == Mode::Throw);
    }
    CHECK(lg::guard::mode() == Mode::Warn);  // LAYOUTGUARD's, not the Scope's
    CHECK(lg::guard::options().max_reports == 4);
    lg::guard::set_mode(Mode::Record);
    lg::guard::set_options_keeping_mode("min_bytes=8");
    CHECK(lg::guard::mode() == Mode::Record);  // the API's mode
    CHECK(lg::guard::options().min_bytes == 8);
    CHECK(lg::guard::options().max_reports != 4);  // replaced, not merged
    CHECK_THROWS_WITH_AS(lg::guard::set_options_keeping_mode("max_reports=many"), doctest::Contains("max_reports"),
                         lg::ConfigError);
    CHECK(lg::guard::options().min_bytes == 8);  // a refused text changes nothing
    // Without an API mode, the mode is LAYOUTGUARD's as it was read, not as it is now.
    EnvVar no_options("LAYOUTGUARD_OPTIONS", nullptr);
    lg::guard::reset_to_environment();
    CHECK(lg::guard::mode() == Mode::Warn);
    EnvVar changed("LAYOUTGUARD", "sometimes");
    lg::guard::set_options_keeping_mode("min_bytes=2");
    CHECK(lg::guard::mode() == Mode::Warn);
    EnvVar bad_mode("LAYOUTGUARD", "sometimes");
    lg::guard::reset_to_environment();
    CHECK_THROWS_WITH_AS(lg::guard::set_options_keeping_mode("min_bytes=8"), doctest::Contains("sometimes"),
                         lg::ConfigError);
  }
  lg::guard::reset_to_environment();  // after the variables are put back
}

TEST_CASE("a Mode cast from an integer is refused by set_mode, set_options and Scope") {
  lg::guard::reset_to_environment();
  const Mode before = lg::guard::mode();
  const auto bad = static_cast<Mode>(7);
  CHECK_THROWS_WITH_AS(lg::guard::set_mode(bad), doctest::Contains("[lg::guard::set_mode] mode 7 is not a guard::Mode"),
                       lg::ValueError);
  lg::guard::Options options = lg::guard::parse_options("", "");
  options.mode = bad;
  CHECK_THROWS_WITH_AS(lg::guard::set_options(options), doctest::Contains("[lg::guard::set_options] mode 7"),
                       lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::guard::Scope{bad}, doctest::Contains("[lg::guard::Scope] mode 7"), lg::ValueError);
  CHECK(lg::guard::mode() == before);
}

TEST_CASE("set_options refuses the fields that parse_options would, and changes nothing then") {
  lg::guard::reset_to_environment();
  const lg::guard::Options before = lg::guard::options();
  lg::testing::TempDir dir;
  const auto refused = [](const std::function<void(lg::guard::Options&)>& change) {
    lg::guard::Options o = lg::guard::parse_options("record", "");
    change(o);
    try {
      lg::guard::set_options(o);
    } catch (const lg::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  using O = lg::guard::Options;
  CHECK(refused([&](O& o) { o.report_path = dir / std::string("r\0x.json", 8); }) ==
        "[lg::guard::set_options] report got '" + (dir / "r") + "\\x00x.json'; required: text without a NUL character");
  CHECK(contains(refused([](O& o) { o.allow = {"aten::"}; }), "allow got 'aten::'; required: op names"));
  CHECK(contains(refused([](O& o) { o.allow = {std::string("ab\0cd", 5)}; }), "required: text without a NUL"));
  CHECK(contains(refused([](O& o) { o.suppressions = {{"soft max", "", "", ""}}; }),
                 "suppressions got 'soft max'; required: lines naming an op"));
  CHECK(contains(refused([](O& o) { o.min_bytes = -1; }), "min_bytes got '-1'; required: an integer from 0"));
  CHECK(contains(refused([](O& o) { o.max_reports = -5; }), "max_reports got '-5'"));
  CHECK(contains(refused([](O& o) { o.ambiguous = static_cast<lg::guard::Ambiguous>(9); }), "ambiguous got '9'"));
  CHECK(contains(refused([](O& o) { o.events_path = "/nonexistent-dir/e.jsonl"; }),
                 "events got '/nonexistent-dir/e.jsonl'; required: a writable file path (its directory does not exist)"));
  CHECK(contains(refused([&](O& o) { o.report_path = o.events_path = dir / "same.json"; }),
                 "[lg::guard::set_options] keys 'report' and 'events' name one file"));
  CHECK(lg::guard::options().mode == before.mode);
  CHECK(lg::guard::options().report_path == before.report_path);
  CHECK(refused([&](O& o) { o.report_path = dir / "r.json"; }) == "accepted");
  CHECK(lg::guard::options().report_path == dir / "r.json");
  lg::guard::reset_to_environment();
}

TEST_CASE("an invalid environment raises ConfigError on every use until fixed") {
  {
    EnvVar mode("LAYOUTGUARD", "sometimes");
    lg::guard::reset_to_environment();
    CHECK_THROWS_AS(lg::guard::mode(), lg::ConfigError);
    CHECK_THROWS_AS(lg::guard::options(), lg::ConfigError);
  }
  {
    EnvVar mode("LAYOUTGUARD", nullptr);
    EnvVar opts("LAYOUTGUARD_OPTIONS", nullptr);
    lg::guard::reset_to_environment();
    CHECK(lg::guard::mode() == Mode::Off);
  }
}

}  // TEST_SUITE
