// The layoutguard command-line tool.
//
//   layoutguard audit [--model M] [--format F] [--convert C] [--dtype D] [--device cpu|cuda]
//                     [--batch N] [--size H[xW]] [--weights W] [--report R] [--dot G]
//                     [--max-conversion-bytes N] [--write-suppressions FILE]
//                                       one forward pass under the guard: per-op table,
//                                       violations, totals (docs/cli.md)
//   layoutguard run --model M --input X --output Y [--weights W] [...]
//                                       runs a model on a saved input, saves the output
//   layoutguard diff A.jsonl B.jsonl [--depth 0|all]
//                                       two event streams (events=FILE) compared call by call:
//                                       the calls whose outputs took another layout
//   layoutguard explain SIZES STRIDES   what PyTorch's rules make of a layout, e.g.
//                                       layoutguard explain 2,3,1,1 3,1,1,1
//   layoutguard ops [--markdown]        the operator catalogue (--markdown: docs/operators.md)
//   layoutguard version (--version)     version, build options and the CUDA probe
//   layoutguard [VERB] --help           the usage of one verb (no verb, or no arguments: all)
//
// Exit status: 0 on success, 1 when audit finds violations or diff differences, 2 on bad usage or input (with the
// reason on stderr), 3 on an internal error (a bug: please report it).
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <layoutguard/layoutguard.h>

#include "arguments.h"

#include "audit_command.h"
#include "diff_command.h"
#include "ops_command.h"

namespace {

using lg::MemoryFormat;

// Each verb's usage, one string a verb: `layoutguard VERB --help` prints its own, a bare
// `layoutguard` (or --help) all of them.
struct Verb {
  std::string_view name;
  std::string_view usage;
};
constexpr Verb kVerbs[] = {
    {"audit",
     "usage: layoutguard audit [--model resnet18|resnet50|resnext50_32x4d|mobilenet_v2|densenet121|r3d_18|unet|unet_legacy]\n"
     "                         [--format channels_last|contiguous] [--convert weights|module|none]\n"
     "                         [--dtype float32|float16|bfloat16] [--device cpu|cuda] [--batch N]\n"
     "                         [--size H[xW]] [--weights FILE.safetensors] [--report OUT.json] [--dot OUT.dot]\n"
     "                         [--max-conversion-bytes N] [--write-suppressions FILE]\n"
     "  One forward pass of a model under the guard: where channels_last is kept or lost, op by op.\n"
     "  Defaults: resnet50, channels_last, --convert weights, float32, cpu, batch 1, 224x224, random weights.\n"},
    {"run",
     "usage: layoutguard run [--model M] --input X.safetensors --output Y.safetensors [--weights W]\n"
     "                       [--format F] [--convert C] [--dtype D] [--device D]\n"
     "  Runs a model on a saved input and saves its output (to compare with PyTorch).\n"},
    {"diff",
     "usage: layoutguard diff A.jsonl B.jsonl [--depth 0|all]\n"
     "  Two event streams (LAYOUTGUARD_OPTIONS=events=FILE) compared call by call: the calls whose\n"
     "  outputs took another layout. Default --depth 0 (user-level calls). Exit 1 when they differ.\n"},
    {"explain",
     "usage: layoutguard explain SIZES STRIDES   (comma-separated, e.g. 2,3,4,5 60,1,15,3)\n"
     "  What PyTorch's memory-format rules make of one layout.\n"},
    {"ops", "usage: layoutguard ops [--markdown]\n  The operator catalogue (--markdown: docs/operators.md).\n"},
    {"version", "usage: layoutguard version   (or --version)\n  Version, build options and the CUDA probe.\n"},
};

constexpr std::string_view kCommon =
    "exit status: 0 success; 1 audit found violations or went over --max-conversion-bytes, or diff found\n"
    "  differences; 2 bad usage or input (the reason on stderr); 3 internal error (a bug: please report it)\n"
    "environment: LAYOUTGUARD, LAYOUTGUARD_OPTIONS (help=1 lists every key), LAYOUTGUARD_LOG_LEVEL,\n"
    "  LAYOUTGUARD_CUDA_CACHE (docs/guard.md)\n";

std::string usage_of(std::string_view verb) {
  for (const Verb& v : kVerbs)
    if (v.name == verb) return std::string(v.usage) + std::string(kCommon);
  std::string all;
  for (const Verb& v : kVerbs) all += std::string(v.usage);
  return all + std::string(kCommon);
}

// Messages of lg errors may start with "[layoutguard VERB] "; main adds its own prefix.
std::string_view without_prefix(std::string_view message) {
  if (message.rfind("[layoutguard", 0) == 0) {
    const size_t end = message.find("] ");
    if (end != std::string_view::npos) return message.substr(end + 2);
  }
  return message;
}

std::vector<int64_t> parse_list(std::string_view text, std::string_view what) {
  std::vector<int64_t> out;
  if (text == "()" || text.empty()) return out;
  if (text.front() == '(' && text.back() == ')') text = text.substr(1, text.size() - 2);
  while (true) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || item.empty())
      throw lg::ValueError("[layoutguard explain] " + std::string(what) + " must be comma-separated integers, got \"" +
                           std::string(item) + "\"");
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  return out;
}

std::string yes(bool b) { return b ? "yes" : "no"; }

// What a conversion returns: the input itself, or a new tensor with these strides.
struct Outcome {
  bool same = false;
  std::vector<int64_t> strides;
};

// One line per conversion: the resulting layout and whether it is the same tensor.
void show(const char* name, const std::vector<int64_t>& sizes, const Outcome& out) {
  std::cout << "  " << name << std::string(28 - std::string_view(name).size(), ' ') << lg::to_string(sizes) << ":"
            << lg::to_string(out.strides) << (out.same ? "  (returns the input itself)" : "  (copy)") << "  suggests "
            << lg::layout::suggest_memory_format(sizes, out.strides) << "\n";
}

// explain reads layouts only, so it never allocates the tensor: any sizes work, even ones no
// machine could hold. The tensor views a one-element buffer that nothing here reads, and each
// conversion's outcome comes from the layout rules the ops themselves use: contiguous(fmt)
// returns its input when it is already contiguous in fmt, to(fmt) when its suggested format
// is fmt (ATen's to_will_alias), and new tensors get strides_for(fmt), or
// preserved_strides for clone(); tests/core/test_properties.cpp holds the ops to these rules.
int explain(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  if (sizes.size() != strides.size())
    throw lg::ValueError("[layoutguard explain] SIZES has " + std::to_string(sizes.size()) +
                         " entries but STRIDES has " + std::to_string(strides.size()) +
                         "; required: one stride for each size");
  (void)lg::layout::required_storage_elements(sizes, strides, "layoutguard explain");  // validates
  // One byte per element: the rules read sizes and strides only, and a layout whose elements
  // int64 can count is explained whatever their dtype's size.
  static uint8_t unread;
  const lg::Tensor t = lg::from_blob(&unread, sizes, strides, lg::TensorOptions().dtype(lg::kUInt8));
  const auto as_copy = [&](MemoryFormat f) { return Outcome{false, lg::layout::strides_for(sizes, f, "explain")}; };
  const auto to = [&](MemoryFormat f) { return t.suggest_memory_format() == f ? Outcome{true, strides} : as_copy(f); };
  const auto contiguous = [&](MemoryFormat f) { return t.is_contiguous(f) ? Outcome{true, strides} : as_copy(f); };
  // The layout alone: no dtype or device, which the rules do not read.
  std::cout << lg::to_string(sizes) << ":" << lg::to_string(strides) << " order=" << t.dim_order() << " "
            << lg::layout::format_name(sizes, strides) << "\n\n";
  std::cout << "predicates\n";
  std::cout << "  is_contiguous()                 " << yes(t.is_contiguous()) << "\n";
  std::cout << "  is_contiguous(channels_last)    " << yes(t.is_contiguous(MemoryFormat::ChannelsLast)) << "\n";
  std::cout << "  is_contiguous(channels_last_3d) " << yes(t.is_contiguous(MemoryFormat::ChannelsLast3d)) << "\n";
  std::cout << "  non-overlapping and dense       " << yes(t.is_non_overlapping_and_dense()) << "\n";
  std::cout << "  suggest_memory_format()         " << t.suggest_memory_format()
            << "   <- what conv, pooling, upsample and cat follow\n\n";
  std::cout << "conversions\n";
  show("to(contiguous_format)", sizes, to(MemoryFormat::Contiguous));
  show("contiguous()", sizes, contiguous(MemoryFormat::Contiguous));
  show("clone() / empty_like()", sizes, Outcome{false, lg::layout::preserved_strides(sizes, strides)});
  for (MemoryFormat f : {MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d}) {
    if (t.dim() != (f == MemoryFormat::ChannelsLast ? 4 : 5)) continue;
    const std::string n(lg::memory_format_name(f));
    show(("to(" + n + ")").c_str(), sizes, to(f));
    show(("contiguous(" + n + ")").c_str(), sizes, contiguous(f));
  }
  const bool cl_contig = t.is_contiguous(MemoryFormat::ChannelsLast) || t.is_contiguous(MemoryFormat::ChannelsLast3d);
  if (t.is_contiguous() && cl_contig) {
    const MemoryFormat cl = t.dim() == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
    if (lg::layout::strides_for(sizes, cl, "explain") == lg::layout::strides_for(sizes, MemoryFormat::Contiguous, "explain"))
      std::cout << "\nnote: this buffer is contiguous in more than one format, and both formats give these sizes\n"
                   "the same strides: there is no layout to keep or to lose.\n";
    else
      std::cout << "\nnote: this buffer is contiguous in more than one format (size-1 dims have no place in\n"
                   "memory). contiguous(fmt) returns it unchanged; to(fmt) restrides it so that\n"
                   "suggest_memory_format() agrees. Use to() to tag a tensor channels_last.\n";
  }
  return 0;
}

int version() {
  std::cout << "layoutguard " << LG_VERSION << "\n"
            << "hooks compiled in: " << (LG_ENABLE_HOOKS ? "yes" : "no") << "\n"
            << "cuda: " << lg::cuda::probe_report() << "\n";
  return 0;
}

bool is_verb(std::string_view word) {
  return std::any_of(std::begin(kVerbs), std::end(kVerbs), [&](const Verb& v) { return v.name == word; });
}

bool is_help(std::string_view word) { return word == "--help" || word == "-h"; }

int run(int argc, char** argv) {
  try {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    // No arguments, --help, -h or `help`: the usage text on stdout, with success; `help VERB`,
    // or --help after a verb (before any "--", after which every word is a file): that verb's
    // alone. An unknown verb with --help is still an unknown verb.
    if (args.empty() || (args.size() == 1 && (args[0] == "help" || is_help(args[0])))) {
      std::cout << usage_of("");
      return 0;
    }
    if (args.size() == 2 && args[0] == "help" && is_verb(args[1])) {
      std::cout << usage_of(args[1]);
      return 0;
    }
    if (is_verb(args[0]))
      for (std::string_view a : args) {
        if (a == "--") break;
        if (is_help(a)) {
          std::cout << usage_of(args[0]);
          return 0;
        }
      }
    if (args.size() == 1 && (args[0] == "--version" || args[0] == "-V")) return version();
    if (args[0] == "audit") return lg::tools::audit_command(std::span(args).subspan(1));
    if (!args.empty() && args[0] == "run") return lg::tools::run_command(std::span(args).subspan(1));
    if (!args.empty() && args[0] == "diff") return lg::tools::diff_command(std::span(args).subspan(1));
    if (args.size() == 3 && args[0] == "explain")
      return explain(parse_list(args[1], "SIZES"), parse_list(args[2], "STRIDES"));
    if (args.size() == 1 && args[0] == "version") return version();
    if (args.size() == 1 && args[0] == "ops") {
      lg::tools::print_ops_table(std::cout);
      return 0;
    }
    if (args.size() == 2 && args[0] == "ops" && args[1] == "--markdown") {
      lg::tools::print_ops_markdown(std::cout);
      return 0;
    }
    const std::string_view command = args[0] == "help" && args.size() == 2 ? args[1] : args[0];
    std::string why = "unknown command '" + std::string(command) + "'";
    std::vector<std::string_view> verbs;
    for (const Verb& v : kVerbs) verbs.push_back(v.name);
    why += lg::tools::did_you_mean(command, verbs);
    if (command == "explain")
      why = "explain takes SIZES and STRIDES, got " + std::to_string(args.size() - 1) + " argument(s)";
    else if (command == "ops")
      why = "ops takes no argument but --markdown";
    else if (command == "version")
      why = "version takes no argument";
    std::cerr << "layoutguard: " << why << "\n" << usage_of(command);
    return 2;
  } catch (const lg::tools::UsageError& e) {
    std::cerr << "layoutguard: " << without_prefix(e.what()) << "\n" << usage_of(argc > 1 ? argv[1] : "");
    return 2;
  } catch (const lg::Error& e) {
    // LG_ASSERT's errors (a broken invariant: our bug) say "[layoutguard internal]".
    const bool internal = std::string_view(e.what()).rfind("[layoutguard internal]", 0) == 0;
    std::cerr << "layoutguard: " << (internal ? "internal error: " : "") << without_prefix(e.what()) << "\n";
    return internal ? 3 : 2;
  } catch (const std::exception& e) {  // not expected: every input error is an lg::Error
    std::cerr << "layoutguard: internal error: " << e.what() << "\n";
    return 3;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int status = run(argc, argv);
  // What the command printed must have arrived: `layoutguard ops --markdown > docs/operators.md`
  // on a full disk, or with standard output closed, is a failure, not a short file.
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "layoutguard: cannot write to standard output (" << std::strerror(errno)
              << "); required: a standard output that accepts the command's output\n";
    return status == 0 || status == 1 ? 2 : status;
  }
  return status;
}
