// What every benchmark program shares besides timing.h: its command line (--quick, --smoke,
// --json PATH) and its results as JSON for scripts/bench and bench/report.py -- the machine
// (CPU model, cores, threads, load average, OS), the library versions, and one record per
// measurement. Records are flat objects; "section" says which table of docs/performance.md
// they belong to, and timings carry median, min, max and the number of timed runs.
#pragma once

#include <dlfcn.h>
#include <omp.h>
#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <layoutguard/layoutguard.h>

#include "timing.h"

namespace lg::bench {

struct CommonArgs {
  bool quick = false;
  bool smoke = false;     // the smallest case of --quick only: checks the program runs
  std::string json_path;  // where to write the results ("" = nowhere)
  std::vector<std::string_view> rest;  // the program's own arguments, in order
};

// Takes --quick, --smoke (which implies --quick) and --json PATH out of argv.
inline CommonArgs parse_common(int argc, char** argv) {
  CommonArgs a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      a.quick = true;
    } else if (arg == "--smoke") {
      a.quick = a.smoke = true;
    } else if (arg == "--json") {
      if (i + 1 >= argc) throw std::invalid_argument("--json needs a file name");
      a.json_path = argv[++i];
    } else {
      a.rest.push_back(arg);
    }
  }
  return a;
}

inline std::string first_line_with(const char* path, std::string_view key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      const size_t at = line.find_first_of(":=", key.size());
      std::string value = at == std::string::npos ? line : line.substr(at + 1);
      value.erase(0, value.find_first_not_of(" \t\""));
      while (!value.empty() && (value.back() == '"' || value.back() == ' ')) value.pop_back();
      return value;
    }
  return "unknown";
}

// The machine and the software, recorded with every result.
inline nlohmann::json machine_info() {
  nlohmann::json m;
  m["cpu"] = first_line_with("/proc/cpuinfo", "model name");
  m["logical_cores"] = std::thread::hardware_concurrency();
  m["omp_threads"] = omp_get_max_threads();
  std::ifstream load("/proc/loadavg");
  double l1 = 0, l5 = 0, l15 = 0;
  load >> l1 >> l5 >> l15;
  m["load_average"] = {l1, l5, l15};
  m["os"] = first_line_with("/etc/os-release", "PRETTY_NAME");
  m["layoutguard"] = LG_VERSION;
  m["compiler"] = __VERSION__;
  // OpenBLAS is liblayoutguard's; its config string names version and kernel.
  using ConfigFn = char* (*)();
  if (auto fn = reinterpret_cast<ConfigFn>(dlsym(RTLD_DEFAULT, "openblas_get_config")); fn != nullptr)
    m["openblas"] = fn();
  m["cuda"] = lg::cuda::probe_report();
  return m;
}

inline nlohmann::json timing_json(const Timing& t) {
  return {{"median_ms", t.median_ms}, {"min_ms", t.min_ms}, {"max_ms", t.max_ms}, {"runs", t.runs}};
}

// Peak resident memory of this process so far, in MiB.
inline double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

class Results {
 public:
  Results(std::string program, const CommonArgs& args) : path_(args.json_path) {
    doc_["program"] = std::move(program);
    doc_["mode"] = args.smoke ? "smoke" : args.quick ? "quick" : "full";
    doc_["machine"] = machine_info();
    doc_["records"] = nlohmann::json::array();
  }
  // Extra facts about the run (e.g. "onednn": "2.7.3").
  void set(const std::string& key, nlohmann::json value) { doc_[key] = std::move(value); }
  void add(nlohmann::json record) { doc_["records"].push_back(std::move(record)); }
  // Writes the JSON when --json was given; an unwritable path is an error (exit 2).
  int finish() const {
    if (path_.empty()) return 0;
    std::ofstream out(path_);
    out << doc_.dump(1) << "\n";
    if (!out) {
      std::cerr << "cannot write " << path_ << "\n";
      return 2;
    }
    return 0;
  }

 private:
  std::string path_;
  nlohmann::json doc_;
};

}  // namespace lg::bench
