// layoutguard diff: two event streams compared call by call. Each thread's calls of one run are
// aligned with the same thread's calls of the other by (op, module); where the op sequences part
// (a model edit, an op only one device has), a short look-ahead finds where they meet again.
// Two runs on CPU and CUDA, or before and after a change, then show the calls whose outputs
// took another layout.
#include "diff_command.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <layoutguard/int_array_ref.h>

#include "arguments.h"
#include "core/input_file.h"
#include "core/printable_text.h"

namespace lg::tools {
namespace {

// How far ahead the alignment looks for the op sequences to meet again.
constexpr size_t kResyncWindow = 64;
// Lines printed (differences and calls only one run made) before the rest are only counted.
constexpr size_t kShown = 40;

struct Output {
  bool defined = false;
  std::string format;
  std::vector<int64_t> sizes, strides;
};

struct Call {
  int64_t seq = 0;
  std::string op, module, kernel, device;
  std::vector<Output> outputs;
  std::string key() const { return op + "|" + module; }
};

// Calls per thread, in order; threads in order of their first call.
struct Run {
  std::string path;
  std::vector<uint64_t> threads;
  std::map<uint64_t, std::vector<Call>> calls;
};

Run read_run(const std::string& path, bool all_depths) {
  // A regular file of bounded size: a FIFO or a device named by mistake is refused, not read
  // without end (core/input_file.h).
  std::istringstream in(lg::detail::read_regular_file(
      path, lg::detail::kMaxEventsFileBytes, "layoutguard diff",
      "an events file (events=FILE): a regular file of at most " + std::to_string(lg::detail::kMaxEventsFileBytes) +
          " bytes"));
  Run run{path, {}, {}};
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const auto bad = [&](const std::string& why) {
      return ValueError("[layoutguard diff] " + path + " line " + std::to_string(number) + ": " + why +
                        "; required: one JSON event per line, as LAYOUTGUARD_OPTIONS=events=FILE writes them");
    };
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {  // text that is not UTF-8 too
      throw bad(lg::detail::printable_text(std::string("not JSON (") + e.what() + ")"));
    } catch (const nlohmann::json::out_of_range& e) {  // a number past double's range (1e400)
      throw bad(lg::detail::printable_text(std::string("a number out of range (") + e.what() + ")"));
    }
    if (!j.is_object()) throw bad("not a JSON object");
    std::string field;  // the one being read, for the error
    // Read as they are written: the text with its control bytes escaped (it is printed), each
    // number an integer in range (nlohmann would take 1.5 for 1, and 2^63 for -2^63).
    const auto text = [&field](const nlohmann::json& object, const char* name) {
      field = name;
      return lg::detail::printable_text(object.at(name).get<std::string>());
    };
    const auto integer = [&](const nlohmann::json& v, int64_t low) {
      if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) ||
          v.get<int64_t>() < low)
        throw bad("field '" + field + "' is " + lg::detail::printable_text(v.dump()) + "; required: an integer from " +
                  std::to_string(low) + " to " + std::to_string(INT64_MAX));
      return v.get<int64_t>();
    };
    const auto count = [&](const nlohmann::json& object, const char* name, int64_t low) {
      field = name;
      return integer(object.at(name), low);
    };
    const auto counts = [&](const nlohmann::json& object, const char* name, int64_t low) {
      field = name;
      std::vector<int64_t> out;
      for (const nlohmann::json& v : object.at(name).get_ref<const nlohmann::json::array_t&>()) out.push_back(integer(v, low));
      return out;
    };
    try {
      const int64_t depth = count(j, "depth", 0);
      if (!all_depths && depth != 0) continue;
      Call c;
      c.seq = count(j, "seq", 0);
      c.op = text(j, "op");
      c.module = text(j, "module");
      c.kernel = text(j, "kernel");
      c.device = text(j, "device");
      field = "outputs";
      for (const nlohmann::json& o : j.at("outputs").get_ref<const nlohmann::json::array_t&>()) {
        Output out;
        out.defined = o.value("defined", true);
        if (out.defined) {
          out.format = text(o, "format");
          out.sizes = counts(o, "sizes", 0);
          out.strides = counts(o, "strides", INT64_MIN);
        }
        c.outputs.push_back(std::move(out));
      }
      const auto thread = static_cast<uint64_t>(count(j, "thread", 0));
      if (!run.calls.count(thread)) run.threads.push_back(thread);
      run.calls[thread].push_back(std::move(c));
    } catch (const nlohmann::json::exception& e) {
      throw bad("field '" + field + "' is missing or of another type (" + e.what() + ")");
    }
  }
  // An empty stream is a run without the guard, or events= pointing elsewhere: comparing it
  // would report every call of the other run as missing.
  if (run.threads.empty())
    throw ValueError("[layoutguard diff] '" + path + "' holds no " + (all_depths ? "" : "user-level (depth 0) ") +
                     "call; required: the events of a run with LAYOUTGUARD set and LAYOUTGUARD_OPTIONS=events=FILE");
  return run;
}

std::string describe(const Output& o) {
  return o.defined ? o.format + " " + to_string(o.sizes) + ":" + to_string(o.strides) : std::string("undefined");
}

std::string label(const Call& c) { return c.op + " (" + (c.module.empty() ? std::string("(top)") : c.module) + ")"; }

// What differs between two calls of the same (op, module): "" when their outputs agree.
std::string output_difference(const Call& a, const Call& b) {
  if (a.outputs.size() != b.outputs.size())
    return std::to_string(a.outputs.size()) + " outputs vs " + std::to_string(b.outputs.size());
  std::string why;
  for (size_t k = 0; k < a.outputs.size(); ++k) {
    const Output &x = a.outputs[k], &y = b.outputs[k];
    if (x.defined == y.defined && x.format == y.format && x.sizes == y.sizes && x.strides == y.strides) continue;
    why += (why.empty() ? "" : "; ") + std::string("output ") + std::to_string(k) + " " + describe(x) + " vs " +
           describe(y);
  }
  if (!why.empty() && a.kernel != b.kernel) why += "  [kernel " + a.kernel + " vs " + b.kernel + "]";
  return why;
}

struct Tally {
  size_t compared = 0, differ = 0, only_a = 0, only_b = 0, shown = 0;
  void print(const std::string& line) {
    if (shown++ < kShown) std::cout << line << "\n";
  }
};

void diff_thread(const std::vector<Call>& a, const std::vector<Call>& b, Tally& t) {
  size_t i = 0, j = 0;
  const auto only = [&](const std::vector<Call>& calls, size_t from, size_t to, const char* side, size_t& count) {
    for (size_t k = from; k < to; ++k, ++count)
      t.print(std::string("  only in ") + side + ": #" + std::to_string(k) + " " + label(calls[k]) + " (seq " +
              std::to_string(calls[k].seq) + ")");
  };
  while (i < a.size() && j < b.size()) {
    if (a[i].key() == b[j].key()) {
      ++t.compared;
      if (const std::string why = output_difference(a[i], b[j]); !why.empty()) {
        ++t.differ;
        t.print("  #" + std::to_string(i) + (i == j ? "" : "/#" + std::to_string(j)) + " " + label(a[i]) + ": " + why);
      }
      ++i, ++j;
      continue;
    }
    // The sequences part here: the nearest (da, db) with a[i + da] matching b[j + db]; among
    // equally near ones, the one followed by the longest run of matches (a relu that
    // matches by chance is followed by a mismatch).
    size_t best_da = 0, best_db = 0, best_run = 0;
    for (size_t d = 1; d <= kResyncWindow && best_run == 0; ++d)
      for (size_t da = 0; da <= d; ++da) {
        const size_t db = d - da;
        size_t run = 0;
        while (run < kResyncWindow && i + da + run < a.size() && j + db + run < b.size() &&
               a[i + da + run].key() == b[j + db + run].key())
          ++run;
        if (run > best_run) best_da = da, best_db = db, best_run = run;
      }
    if (best_run == 0) break;
    only(a, i, i + best_da, "A", t.only_a);
    only(b, j, j + best_db, "B", t.only_b);
    i += best_da, j += best_db;
  }
  only(a, i, a.size(), "A", t.only_a);
  only(b, j, b.size(), "B", t.only_b);
}

}  // namespace

int diff_command(std::span<const std::string_view> args) {
  // The two files and the flags in any order: a "--name" takes the word after it. After "--"
  // every word is a file (one whose name starts with "--").
  std::vector<std::string_view> files, flag_args;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      files.insert(files.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (!args[i].starts_with("--")) {
      files.push_back(args[i]);
      continue;
    }
    flag_args.push_back(args[i]);
    // "--depth=all" carries its value; only "--depth all" takes the next word.
    if (args[i].find('=') == std::string_view::npos && i + 1 < args.size()) flag_args.push_back(args[++i]);
  }
  const Flags flags("diff", flag_args, {"depth"});  // an unknown or valueless flag first
  if (files.size() != 2)
    throw UsageError("[layoutguard diff] needs two events files, got " + std::to_string(files.size()) +
                     ": layoutguard diff A.jsonl B.jsonl [--depth 0|all]");
  const bool all_depths = flags.choice("depth", "0", {"0", "all"}) == "all";
  const Run a = read_run(std::string(files[0]), all_depths), b = read_run(std::string(files[1]), all_depths);
  std::cout << "layoutguard diff: A = " << a.path << ", B = " << b.path << " ("
            << (all_depths ? "every call" : "user-level calls") << ")\n";
  Tally t;
  const size_t threads = std::max(a.threads.size(), b.threads.size());
  for (size_t k = 0; k < threads; ++k) {
    static const std::vector<Call> none;
    const std::vector<Call>& ca = k < a.threads.size() ? a.calls.at(a.threads[k]) : none;
    const std::vector<Call>& cb = k < b.threads.size() ? b.calls.at(b.threads[k]) : none;
    if (threads > 1) std::cout << "thread " << k << ": " << ca.size() << " calls in A, " << cb.size() << " in B\n";
    diff_thread(ca, cb, t);
  }
  if (t.shown > kShown) std::cout << "  ... " << t.shown - kShown << " more not shown\n";
  std::cout << "compared " << t.compared << " calls: " << t.differ << " with outputs in another layout, " << t.only_a
            << " only in A, " << t.only_b << " only in B\n";
  const bool same = t.differ == 0 && t.only_a == 0 && t.only_b == 0;
  std::cout << (same ? "result: the runs agree on every layout\n" : "result: the layouts differ\n");
  return same ? 0 : 1;
}

}  // namespace lg::tools
