// events=FILE: the JSON Lines writer (see events.h).
#include "guard/events.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

#include <layoutguard/error.h>

#include "core/atomic_file.h"
#include "core/json_text.h"
#include "guard/inherited_files.h"

namespace lg::guard::detail {
namespace {

nlohmann::json operand(const Tensor& t) {
  if (!t.defined()) return {{"defined", false}};
  return {{"dtype", dtype_name(t.dtype())},
          {"sizes", t.sizes().vec()},
          {"strides", t.strides().vec()},
          {"format", layout::format_name(t.sizes(), t.strides())}};
}

// A small number per thread, in order of each thread's first event: readable, and stable
// across two runs of a single-threaded program (std::thread::id is neither).
uint64_t thread_number() {
  static std::atomic<uint64_t> next{0};
  thread_local const uint64_t mine = next.fetch_add(1, std::memory_order_relaxed);
  return mine;
}

}  // namespace

void write_event(const std::string& path, const hooks::OpCall& call, const Finding* finding, int64_t conversion_bytes,
                 const ExpectedLoss* expected) {
  // Before the lock: a thread of the parent may have held it at the fork.
  watch_forks();
  if (parents_file(path)) return;
  nlohmann::json line{{"thread", thread_number()},
                      {"op", call.op},
                      {"policy", layout_policy_name(call.policy)},
                      {"module", call.module_path},
                      {"depth", call.depth},
                      {"root_op", call.root_op},
                      {"device", call.device.str()},
                      {"kernel", call.kernel},
                      {"conversion_bytes", conversion_bytes},
                      {"violation", finding != nullptr && expected == nullptr}};
  line["inputs"] = nlohmann::json::array();
  for (const Tensor& t : call.inputs) line["inputs"].push_back(operand(t));
  line["outputs"] = nlohmann::json::array();
  for (const Tensor& t : call.outputs) line["outputs"].push_back(operand(t));
  if (finding) line["rule"] = finding->rule;
  if (expected) line["expected_loss"] = expected->reason();

  // Never destroyed: ops in static destructors still write events (each line is written whole
  // and the file committed at its first line, so the process's exit loses nothing).
  static auto& mutex = *new std::mutex;
  static auto& files = *new std::map<std::string, std::unique_ptr<lg::detail::ReplacingFile>>;
  static uint64_t sequence = 0;
  std::lock_guard lock(mutex);
  line["seq"] = sequence++;
  // Unbuffered whole-line writes: the stream is read while the program runs, or after it
  // crashed. It replaces the old file once its first line is written (a run that cannot write
  // the stream at all leaves the old one as it was); from then on it grows in place, and a
  // failed write is cut back to the last whole line (core/atomic_file.h).
  try {
    std::unique_ptr<lg::detail::ReplacingFile>& file = files[path];
    if (!file) {
      auto fresh = std::make_unique<lg::detail::ReplacingFile>("LAYOUTGUARD_OPTIONS events=", "the event stream", path);
      fresh->write(lg::detail::json_text(line) + '\n');
      fresh->commit();
      file = std::move(fresh);
    } else {
      file->write(lg::detail::json_text(line) + '\n');
    }
  } catch (const Error&) {
    if (!files[path]) files.erase(path);  // never started: the next event tries afresh
    throw;
  }
}

}  // namespace lg::guard::detail
