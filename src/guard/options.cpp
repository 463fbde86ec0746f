// Parsing and describing the guard's settings (LAYOUTGUARD, LAYOUTGUARD_OPTIONS). Pure: the
// process-wide state that reads the environment lives in config.cpp.
#include <layoutguard/guard.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <utility>

#include <unistd.h>

#include <layoutguard/error.h>

#include "core/atomic_file.h"
#include "core/input_file.h"
#include "core/printable_text.h"
#include "guard/op_name.h"
#include "guard/options_fields.h"

namespace lg::guard {
namespace {

constexpr std::string_view kModeVar = "LAYOUTGUARD";
constexpr std::string_view kOptionsVar = "LAYOUTGUARD_OPTIONS";

enum class Kind { Bool, Count, List, Path, Ambiguity, Suppressions };

// One key: its name, the kind of value it takes, what it means, and the Options field it sets
// (the member of its kind's type; the kinds that have one key each -- List, Suppressions,
// Ambiguity -- name their fields in apply() and value_text()).
struct Key {
  std::string_view name;
  Kind kind;
  std::string_view meaning;
  bool Options::*flag = nullptr;          // Kind::Bool
  int64_t Options::*count = nullptr;      // Kind::Count
  std::string Options::*path = nullptr;   // Kind::Path
};

constexpr Key flag_key(std::string_view name, bool Options::*field, std::string_view meaning) {
  return {name, Kind::Bool, meaning, field, nullptr, nullptr};
}
constexpr Key count_key(std::string_view name, int64_t Options::*field, std::string_view meaning) {
  return {name, Kind::Count, meaning, nullptr, field, nullptr};
}
constexpr Key path_key(std::string_view name, std::string Options::*field, std::string_view meaning) {
  return {name, Kind::Path, meaning, nullptr, nullptr, field};
}

// The one table behind the parser, its error messages and help=1.
constexpr Key kKeys[] = {
    {"allow", Kind::List, "op names that are never flagged"},
    {"suppressions", Kind::Suppressions,
     "file of op[[signature-glob]][:module-glob][@function-glob] lines (# comments; op:(top): top level only) "
     "never flagged"},
    {"ambiguous", Kind::Ambiguity, "tensors both contiguous and channels_last: skip or check"},
    count_key("min_bytes", &Options::min_bytes, "outputs smaller than this many bytes are not flagged"),
    flag_key("hidden_views", &Options::hidden_views, "flag views that hide channels-last data, as x[0].unsqueeze(0)"),
    flag_key("backtrace", &Options::backtrace, "capture a stack trace with each violation"),
    flag_key("summary", &Options::summary, "print a table of recorded events at exit"),
    flag_key("spans", &Options::spans, "follow each loss to the ops that ran on its NCHW data (warn/record report)"),
    path_key("report", &Options::report_path, "write a JSON report to this file at exit (%p: process id, %r: RANK)"),
    path_key("write_suppressions", &Options::write_suppressions_path,
             "write the run's violations at exit as a suppressions file (a baseline)"),
    path_key("log_path", &Options::log_path, "write warn-mode reports to this file"),
    path_key("events", &Options::events_path, "write one JSON line per checked op call to this file"),
    flag_key("shadow", &Options::shadow, "re-run checked ops on contiguous copies and compare values"),
    count_key("max_reports", &Options::max_reports, "distinct warnings logged before going quiet"),
    flag_key("nested", &Options::nested,
             "PyTorch bridge: also intercept the ATen calls inside each user-level op, to name a loss's root cause "
             "and charge nested conversions to it (0: user-level calls only, cheaper)"),
    flag_key("forward_calls", &Options::forward_calls,
             "PyTorch bridge: keep the Python line of each forward call that makes autograd nodes, to name it in "
             "its backward ops' reports (a frame lookup per such call)"),
    flag_key("grad_format", &Options::grad_format,
             "PyTorch bridge: the gradient of each channels-last forward output must reach its autograd node "
             "channels-last, naming the backward op that made it (a hook on each node of a channels-last output)"),
    flag_key("help", &Options::help, "print every option, its value and source at first use"),
};
// Every key of a kind with many keys names its field: a key added without one fails to compile.
constexpr bool every_key_has_its_field() {
  for (const Key& k : kKeys) {
    if ((k.kind == Kind::Bool) != (k.flag != nullptr)) return false;
    if ((k.kind == Kind::Count) != (k.count != nullptr)) return false;
    if ((k.kind == Kind::Path) != (k.path != nullptr)) return false;
  }
  return true;
}
static_assert(every_key_has_its_field(), "a Bool, Count or Path key without its Options field");
constexpr size_t kNumKeys = std::size(kKeys);

std::string_view allowed_values(Kind kind) {
  switch (kind) {
    case Kind::Bool: return "0, 1 (or false, true)";
    case Kind::Count: return "an integer from 0 to 9223372036854775807";
    case Kind::List: return "comma-separated names";
    case Kind::Path: return "a writable file path, in which %p, %r and %% stand for the process id, RANK and '%'";
    case Kind::Suppressions: return "a file path";
    case Kind::Ambiguity: return "skip, check";
  }
  return "";
}

[[noreturn]] void bad_value(const Key& key, std::string_view value, std::string_view why = {}) {
  throw ConfigError(detail::str(kOptionsVar, ": key '", key.name, "' got '", lg::detail::shown_value(value), "'",
                                why.empty() ? "" : " (", why, why.empty() ? "" : ")",
                                "; allowed values: ", allowed_values(key.kind)));
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// text split at its first field separator: a lone ':' or a run of three or more. "::" is part
// of a name (namespaced custom ops such as "ns::drop"), never a separator. {text, {}} when
// there is none; the rest starts after the whole run.
std::pair<std::string_view, std::string_view> split_field(std::string_view text) {
  size_t i = 0;
  while ((i = text.find(':', i)) != std::string_view::npos) {
    size_t run = 1;
    while (i + run < text.size() && text[i + run] == ':') ++run;
    if (run != 2) return {text.substr(0, i), text.substr(i + run)};
    i += run;
  }
  return {text, {}};
}

// Where a suppressions line's [signature-glob] opens: a '[' inside the op name, which ends at
// the first single ':' (an op's own "::" stays), '@' or blank. npos when the op has none (a
// '[' later on the line, as in a call site's "operator[]", is the glob's own).
size_t signature_open(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[') return i;
    if (c == '@' || c == ' ' || c == '\t') break;
    if (c == ':') {  // a run of exactly two is the op's own "::", as split_field reads it
      size_t run = 1;
      while (i + run < text.size() && text[i + run] == ':') ++run;
      if (run != 2) break;
      i += run - 1;
    }
  }
  return std::string_view::npos;
}

// A relative path, taken from the working directory now: the files are checked and read with
// the settings but written at exit, after a program may have changed directory (Hydra runs
// each job in a directory of its own). As given when the directory cannot be asked.
std::string absolute_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.string();
}

// Why the file of path key `key` cannot be written at `path`, or "", and where `path` leads.
// The log is opened in place (it may be /dev/stderr); the other files replace the old one by a
// rename (core/atomic_file.h), which needs a regular file and a writable directory. A symbolic
// link is checked where it leads: the file it names is what gets written. Only looks: the file
// is not created here (parse_options has no side effects).
struct OutputProblem {
  std::string problem, target;
};
OutputProblem output_problem(const Key& key, const std::string& path) {
  std::string target = detail::followed_link(path);
  std::string problem =
      key.name == "log_path" ? detail::output_path_problem(target) : detail::replaceable_path_problem(target);
  return {std::move(problem), std::move(target)};
}

// report= and log_path= are written later (at exit, at the first warning); a path that cannot
// be written is refused now, with the settings, instead of failing inside some op or at exit.
void check_writable(const Key& key, std::string_view value, const std::string& path) {
  const auto [problem, target] = output_problem(key, path);
  if (!problem.empty())
    bad_value(key, value, value == target ? problem : detail::str(lg::detail::shown_value(target), ": ", problem));
}

// Output paths may name the process, so that the processes of one job (the ranks of a
// distributed run, a pool's workers) do not overwrite each other's files: %p becomes the
// process id, %r the RANK variable's value (torch.distributed's launchers set it; "0" when
// unset), %% a '%'. Any other '%' is refused: a placeholder the writer thought existed
// (%h, %t) would otherwise name one file for every process.
std::string expand_placeholders(const Key& key, std::string_view value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '%') {
      out += value[i];
      continue;
    }
    const char c = i + 1 < value.size() ? value[++i] : '\0';
    if (c == 'p') {
      out += std::to_string(getpid());
    } else if (c == 'r') {
      const char* rank = std::getenv("RANK");
      out += rank && *rank ? rank : "0";
    } else if (c == '%') {
      out += '%';
    } else {
      bad_value(key, value, c == '\0' ? std::string("a '%' at the end") : "unknown placeholder '%" + std::string(1, c) + "'");
    }
  }
  return out;
}

// Suppressions files are short lists: a FIFO, a device or a big file is a wrong path, refused
// before it is read (core/input_file.h).
std::vector<Suppression> read_suppressions(const std::string& path) {
  std::string text;
  try {
    text = detail::read_regular_file(
        path, detail::kMaxSuppressionsFileBytes, detail::str(kOptionsVar, " suppressions="),
        detail::str("a suppressions file of op[:module-glob] lines: a readable regular file of at most ",
                    detail::kMaxSuppressionsFileBytes, " bytes"));
  } catch (const ValueError& e) {
    throw ConfigError(e.message());  // a bad setting, like every other key's
  }
  // Editors on Windows start UTF-8 files with a byte-order mark, which would join the first
  // line's op name and never match.
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
  std::istringstream in(text);
  std::vector<Suppression> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string_view full = line;
    full = trim(full.substr(0, full.find('#')));
    if (full.empty()) continue;
    const auto bad_line = [&](std::string_view why) {
      return ConfigError(detail::str(kOptionsVar, ": suppressions file '", lg::detail::shown_value(path), "' line ", number, ": '",
                                     lg::detail::shown_value(full), "' ", why));
    };
    // A carriage return inside a line: a file whose lines end in CR alone, read as one line.
    if (std::any_of(full.begin(), full.end(), [](char c) { return c != '\t' && lg::detail::is_control_byte(c); }))
      throw bad_line("holds a control byte (lines end in LF or CRLF; a lone CR does not end one)");
    // op[signature-glob]: the brackets right after the op name are cut out first, since a
    // layout name can hold ':' ("contiguous (ambiguous: also ...)"), which separates the module.
    std::string signature_glob, rest(full);
    if (const size_t open = signature_open(full); open != std::string_view::npos) {
      const size_t close = full.find(']', open);
      if (close == std::string_view::npos) throw bad_line("has '[' without ']' after the op");
      signature_glob = std::string(trim(full.substr(open + 1, close - open - 1)));
      const std::string_view after = trim(full.substr(close + 1));
      if (signature_glob.empty()) throw bad_line("has an empty [signature]; leave the brackets out for any layouts");
      if (!after.empty() && after.front() != ':' && after.front() != '@')
        throw bad_line("has text after ']' that is not ':module-glob' or '@function-glob'");
      rest = std::string(full.substr(0, open)) + std::string(after);
    }
    const std::string_view text = rest;
    const auto [op_text, glob] = split_field(text);
    const std::string_view op = trim(op_text);
    if (op.empty() || op.find_first_of(" \t") != std::string_view::npos)
      throw bad_line("is not op[[signature-glob]][:module-glob][@function-glob]");
    // "op:" would read as "every module" or as "no module"; make the writer say which.
    if (trim(glob).empty() && text.find(':', op_text.size()) != std::string_view::npos)
      throw bad_line(detail::str("has an empty module after ':'; write '", op, "' for every module or '", op, ":",
                                 kTopLevelModule, "' for calls outside every module"));
    // op[:module-glob]@function-glob: the call site follows the first '@' (no op or module
    // name holds one).
    std::string_view op_part = op, module_part = trim(glob), frame_part;
    if (const size_t at = module_part.find('@'); at != std::string_view::npos) {  // op:module@function
      frame_part = trim(module_part.substr(at + 1));
      module_part = trim(module_part.substr(0, at));
    } else if (const size_t at_op = op_part.find('@'); at_op != std::string_view::npos) {  // op@function
      frame_part = trim(op_part.substr(at_op + 1));
      op_part = op_part.substr(0, at_op);
    }
    std::string op_name(op_part), module_glob(module_part), frame_glob(frame_part);
    if ((text.find('@') != std::string_view::npos && frame_glob.empty()) || op_name.empty())
      throw bad_line("is not op[[signature-glob]][:module-glob][@function-glob]");
    // The op is matched by its exact name: one that no op can have (a control character, an
    // empty part around "::") would silence nothing and only show as unused.
    if (!is_op_name(op_name))
      throw bad_line(detail::str("names no op: '", lg::detail::shown_value(op_name),
                                 "' is not an op name (a name or namespace::name, e.g. aten::softmax)"));
    out.push_back({std::move(op_name), std::move(module_glob), std::move(frame_glob), std::move(signature_glob)});
  }
  return out;
}

void apply(Options& o, const Key& key, std::string_view value) {
  switch (key.kind) {
    case Kind::Bool: {
      bool b;
      if (value == "1" || value == "true") b = true;
      else if (value == "0" || value == "false") b = false;
      else bad_value(key, value);
      o.*key.flag = b;
      return;
    }
    case Kind::Count: {
      int64_t n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size() || n < 0)
        bad_value(key, value);
      o.*key.count = n;
      return;
    }
    case Kind::List: {
      // Repeated, the key's lists add up (allow=aten::softmax:allow=aten::cumsum).
      std::string_view rest = value;
      while (!rest.empty()) {
        const size_t comma = rest.find(',');
        const std::string_view item = trim(rest.substr(0, comma));
        // "allow=cat,min_bytes=10" is how sanitizer options are written; here keys are
        // separated by ':', and an op name never holds '='.
        if (item.find('=') != std::string_view::npos) {
          const size_t before = static_cast<size_t>(rest.data() - value.data());  // this item's start
          const std::string_view ops = trim(value.substr(0, before == 0 ? 0 : before - 1));
          bad_value(key, value,
                    detail::str("'", lg::detail::shown_value(item), "' is not an op name: keys are separated by ':', as in ",
                                lg::detail::shown_value(detail::str(ops.empty() ? "" : detail::str("allow=", ops, ":"),
                                                                    value.substr(before)))));
        }
        if (!item.empty() && !is_op_name(item))
          bad_value(key, value,
                    detail::str("'", lg::detail::shown_value(item), "' is not an op name: names are separated by ',', and each is a name ",
                                "or namespace::name without spaces (aten::softmax, softmax)"));
        if (!item.empty()) o.allow.emplace_back(item);
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
      }
      return;
    }
    case Kind::Path: {
      if (value.empty()) bad_value(key, value, "empty");
      const std::string path = absolute_path(expand_placeholders(key, value));
      check_writable(key, value, path);
      o.*key.path = path;
      return;
    }
    case Kind::Suppressions:
      if (value.empty()) bad_value(key, value, "empty");
      o.suppressions_path = absolute_path(std::string(value));
      o.suppressions = read_suppressions(o.suppressions_path);
      return;
    case Kind::Ambiguity:
      if (value == "skip") o.ambiguous = Ambiguous::Skip;
      else if (value == "check") o.ambiguous = Ambiguous::Check;
      else bad_value(key, value);
      return;
  }
}

std::string value_text(const Options& o, const Key& key) {
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
    return s;
  };
  switch (key.kind) {
    case Kind::Bool: return o.*key.flag ? "1" : "0";
    case Kind::Count: return std::to_string(o.*key.count);
    case Kind::Path: return o.*key.path;
    case Kind::List: return join(o.allow);
    case Kind::Suppressions:
      return o.suppressions_path.empty() ? "" : o.suppressions_path + " (" + std::to_string(o.suppressions.size()) + " entries)";
    case Kind::Ambiguity: return o.ambiguous == Ambiguous::Skip ? "skip" : "check";
  }
  return "";
}

std::string_view source_name(Source s) {
  switch (s) {
    case Source::Default: return "default";
    case Source::Environment: return "environment";
    case Source::Api: return "api";
  }
  return "";
}

// Two keys that write one file would lose one's contents to the other (the report replaces
// the event stream at exit; the log's lines would land among the events). `source` heads the
// message: "LAYOUTGUARD_OPTIONS:", or the API function given the fields, "[lg::guard::set_options]".
void check_distinct_outputs(const Options& o, std::string_view source) {
  std::vector<std::pair<const Key*, std::string>> outputs;
  for (const Key& key : kKeys) {
    if (key.kind != Kind::Path || (o.*key.path).empty()) continue;
    const std::string same = detail::file_identity(o.*key.path);
    for (const auto& [other, other_file] : outputs)
      if (other_file == same)
        throw ConfigError(detail::str(source, " keys '", other->name, "' and '", key.name, "' name one file, '",
                                      lg::detail::shown_value(same), "'; required: a file of its own for each"));
    outputs.emplace_back(&key, same);
  }
}

}  // namespace

void check_options_fields(const Options& o, std::string_view where) {
  const auto refuse = [&](std::string_view field, const std::string& got, std::string_view required) {
    throw ConfigError(detail::str("[", where, "] ", field, " got '", lg::detail::shown_value(got),
                                  "'; required: ", required));
  };
  // What the parser makes sure of for text, asked of fields a program filled in itself: C
  // functions read paths and names only up to a NUL ("r\0.json" would write "r").
  const auto text = [&](std::string_view field, const std::string& value) {
    if (value.find('\0') != std::string::npos) refuse(field, value, "text without a NUL character");
  };
  for (const std::string& op : o.allow)
    if (text("allow", op), !is_op_name(op)) refuse("allow", op, "op names, each a name or namespace::name without spaces");
  text("suppressions_path", o.suppressions_path);
  for (const Suppression& line : o.suppressions) {
    for (const std::string* glob : {&line.module_glob, &line.frame_glob, &line.signature_glob})
      text("suppressions", *glob);
    if (text("suppressions", line.op), !is_op_name(line.op))
      refuse("suppressions", line.op, "lines naming an op (a name or namespace::name, e.g. aten::softmax)");
  }
  if (o.ambiguous != Ambiguous::Skip && o.ambiguous != Ambiguous::Check)
    refuse("ambiguous", std::to_string(static_cast<int>(o.ambiguous)), "Ambiguous::Skip or Ambiguous::Check");
  for (const Key& key : kKeys) {
    if (key.kind == Kind::Count && o.*key.count < 0)
      refuse(key.name, std::to_string(o.*key.count), allowed_values(Kind::Count));
    if (key.kind != Kind::Path || (o.*key.path).empty()) continue;
    const std::string& path = o.*key.path;
    text(key.name, path);
    if (const std::string problem = output_problem(key, path).problem; !problem.empty())
      refuse(key.name, path, detail::str("a writable file path (", problem, ")"));
  }
  check_distinct_outputs(o, detail::str("[", where, "]"));
}

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::Off: return "off";
    case Mode::Warn: return "warn";
    case Mode::Throw: return "throw";
    case Mode::Record: return "record";
  }
  return "";
}

const std::vector<std::string_view>& option_keys() {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> k;
    for (const Key& key : kKeys) k.push_back(key.name);
    return k;
  }();
  return keys;
}

Options parse_options(std::string_view mode_text, std::string_view options_text) {
  // Paths and op names go on to C functions, where a NUL would end them early: "report=r\0.json"
  // would write "r". The environment cannot hold one; a string from an API can.
  for (const auto& [name, text] : {std::pair{kModeVar, mode_text}, std::pair{kOptionsVar, options_text}})
    if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
      throw ConfigError(detail::str(name, " holds a NUL character at offset ", nul,
                                    "; required: text without one"));
  Options o;
  o.sources.assign(kNumKeys + 1, Source::Default);
  mode_text = trim(mode_text);
  if (!mode_text.empty()) {
    if (mode_text == "off" || mode_text == "0") o.mode = Mode::Off;
    else if (mode_text == "warn") o.mode = Mode::Warn;
    else if (mode_text == "throw" || mode_text == "1") o.mode = Mode::Throw;
    else if (mode_text == "record") o.mode = Mode::Record;
    else
      throw ConfigError(detail::str(kModeVar, "='", lg::detail::shown_value(mode_text), "' is not a mode; allowed values: ",
                                    "off, warn, throw, record, 1 (= throw), 0 (= off)"));
    o.sources[0] = Source::Environment;
  }
  std::string_view rest = options_text;
  while (!rest.empty()) {
    const auto [field, after] = split_field(rest);
    const std::string_view pair = trim(field);
    rest = after;
    if (pair.empty()) continue;  // tolerate "a=1:::b=2" and a leading or trailing ':'
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos)
      throw ConfigError(detail::str(kOptionsVar, ": '", lg::detail::shown_value(pair),
                                    "' is not key=value (pairs are separated by ':')"));
    const std::string_view name = trim(pair.substr(0, eq)), value = trim(pair.substr(eq + 1));
    const auto* key = std::find_if(std::begin(kKeys), std::end(kKeys), [&](const Key& k) { return k.name == name; });
    if (key == std::end(kKeys)) {
      std::string all;
      for (const Key& k : kKeys) all += (all.empty() ? "" : ", ") + std::string(k.name);
      throw ConfigError(detail::str(kOptionsVar, ": unknown key '", lg::detail::shown_value(name), "'; allowed keys: ", all));
    }
    apply(o, *key, value);
    o.sources[1 + static_cast<size_t>(key - std::begin(kKeys))] = Source::Environment;
  }
  check_distinct_outputs(o, detail::str(kOptionsVar, ":"));
  return o;
}

std::string describe_options(const Options& o) {
  std::ostringstream out;
  auto source = [&](size_t i) { return source_name(i < o.sources.size() ? o.sources[i] : Source::Default); };
  out << "layoutguard settings (value [source]: meaning)\n";
  out << "  " << kModeVar << " = " << mode_name(o.mode) << " [" << source(0)
      << "]: off, warn, throw or record\n";
  for (size_t i = 0; i < kNumKeys; ++i)
    out << "  " << kKeys[i].name << " = " << value_text(o, kKeys[i]) << " [" << source(i + 1)
        << "]: " << kKeys[i].meaning << "\n";
  // The guard reads the two above; these belong to the logger, the CUDA allocator and the
  // PyTorch bridge.
  out << "other variables:\n"
         "  LAYOUTGUARD_LOG_LEVEL: trace, debug, info, warn (default), error, critical or off; the level of "
         "layoutguard's log (warn mode's reports are warnings)\n"
         "  LAYOUTGUARD_CUDA_CACHE: 1 (default) keeps freed CUDA blocks for reuse; 0 frees each at once (for "
         "memory checkers)\n"
         "  LAYOUTGUARD_TORCH_UNBOXED: 1 (default) gives the PyTorch bridge's most called ops unboxed kernels; 0 sends "
         "every ATen op through its boxed fallback (the same checks, slower)\n";
  return out.str();
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matching with one backtrack point: the last '*' seen.
  size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p, ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool allow_names(std::string_view name, std::string_view op) {
  // A name without a namespace names ATen's op too: allow=upsample_bicubic2d, as layoutguard's
  // own ops are written, also allows aten::upsample_bicubic2d.
  constexpr std::string_view kAten = "aten::";
  return name == op ||
         (op.starts_with(kAten) && name.find("::") == std::string_view::npos && op.substr(kAten.size()) == name);
}

bool Options::allows(std::string_view op) const {
  return std::any_of(allow.begin(), allow.end(), [&](const std::string& name) { return allow_names(name, op); });
}

bool Options::is_exempt(std::string_view op, std::string_view module_path) const {
  if (allows(op)) return true;
  return suppression_for(op, module_path) != nullptr;
}

bool Suppression::matches(std::string_view op_name, std::string_view module_path) const {
  return op == op_name &&
         (module_glob.empty() ||
          (module_glob == kTopLevelModule ? module_path.empty() : glob_match(module_glob, module_path)));
}

const Suppression* Options::suppression_for(std::string_view op, std::string_view module_path) const {
  for (const Suppression& s : suppressions)
    if (s.frame_glob.empty() && s.signature_glob.empty() && s.matches(op, module_path)) return &s;
  return nullptr;
}

bool Options::has_loss_line(std::string_view op) const {
  for (const Suppression& s : suppressions)
    if ((!s.frame_glob.empty() || !s.signature_glob.empty()) && s.op == op) return true;
  return false;
}

}  // namespace lg::guard
