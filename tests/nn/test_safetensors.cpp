// safetensors: round trips of every dtype (also channels_last, sliced and zero-size tensors),
// the file reader against the in-memory parser, aligned writing, files changed after loading, and every kind of corrupt file, each
// of which must raise lg::ValueError naming the file and the problem.
#include <cstring>
#include <fstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn.h>

#include "support/file_testing.h"
#include "support/guard_testing.h"
#include "support/tensor_testing.h"

namespace {

using lg::Tensor;
using lg::nn::StateDict;
using namespace lg::testing;

std::string header_of(const std::string& json) {
  std::string out(8, '\0');
  const uint64_t n = json.size();
  std::memcpy(out.data(), &n, 8);
  return out + json;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Both readers must reject `bytes` with a ValueError mentioning `problem` (and the file).
void check_rejects(const std::string& bytes, const std::string& problem) {
  CAPTURE(problem);
  TempPath path("lg-bad.safetensors");
  write_bytes(path.str(), bytes);
  try {
    lg::nn::load_safetensors(path.str());
    FAIL("load_safetensors accepted a corrupt file");
  } catch (const lg::ValueError& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(contains(what, path.str()));
    CHECK(contains(what, problem));
    CHECK(what.starts_with("[nn::load_safetensors] "));  // named after the call, then the reader
  }
  CHECK_THROWS_WITH_AS(lg::nn::parse_safetensors({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "m"),
                       doctest::Contains("[nn::parse_safetensors] "), lg::ValueError);
}

}  // namespace

TEST_SUITE("nn") {

TEST_CASE("safetensors: every dtype round-trips through a file and through memory, values and shapes exact") {
  lg::manual_seed(7);
  StateDict sd;
  sd["a.f32"] = lg::randn({2, 3, 4, 5}).to(lg::MemoryFormat::ChannelsLast);  // stored row-major
  sd["b.f16"] = lg::randn({7}).to(lg::kFloat16);
  sd["c.bf16"] = lg::randn({3, 3}).to(lg::kBFloat16);
  sd["d.f64"] = lg::randn({2, 2, 2}).to(lg::kFloat64);
  sd["e.i64"] = lg::randint(-1000, 1000, {5}).to(lg::kInt64);
  sd["f.i32"] = lg::randint(-1000, 1000, {4, 1}).to(lg::kInt32);
  sd["g.u8"] = lg::randint(0, 255, {9}).to(lg::kUInt8);
  sd["h.bool"] = lg::randint(0, 2, {6}).to(lg::kBool);
  sd["i.scalar"] = lg::full({}, 42, lg::TensorOptions().dtype(lg::kInt64));
  sd["j.empty"] = lg::zeros({0, 3});
  sd["k.slice"] = lg::randn({4, 6}).narrow(1, 1, 3);  // non-contiguous source
  TempPath path("lg-roundtrip.safetensors");
  lg::nn::save_safetensors(path.str(), sd, {{"format", "pt"}});

  const lg::nn::TensorFile loaded = lg::nn::load_safetensors(path.str());
  const std::string bytes = lg::nn::safetensors_bytes(sd, {{"format", "pt"}});
  const lg::nn::TensorFile parsed =
      lg::nn::parse_safetensors({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  CHECK(loaded.metadata.at("format") == "pt");
  REQUIRE(loaded.tensors.size() == sd.size());
  for (const auto& [name, t] : sd) {
    CAPTURE(name);
    for (const lg::nn::StateDict* got : {&loaded.tensors, &parsed.tensors}) {
      const Tensor& g = got->at(name);
      CHECK(g.dtype() == t.dtype());
      CHECK(g.sizes() == t.sizes());
      CHECK(g.is_contiguous());
      CHECK(values(g) == values(t));
    }
  }
  // Loaded tensors own their bytes: writing into one leaves the file alone.
  loaded.tensors.at("a.f32").fill_(0);
  CHECK(values(lg::nn::load_safetensors(path.str()).tensors.at("a.f32")) == values(sd["a.f32"]));
  // The writer puts the widest elements first, so every tensor starts aligned for its dtype.
  const uint64_t header_len = [&] {
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    return n;
  }();
  CHECK((8 + header_len) % 8 == 0);
  const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, header_len));
  for (const auto& [name, t] : sd) {
    CAPTURE(name);
    CHECK(header[name]["data_offsets"][0].get<uint64_t>() % t.itemsize() == 0);
  }
}

TEST_CASE("safetensors: a model's state dict round-trips and loads strictly into a fresh model") {
  lg::manual_seed(1);
  auto a = lg::models::resnet18(10);
  TempPath path("lg-resnet18.safetensors");
  lg::nn::save_safetensors(path.str(), a->state_dict());
  lg::manual_seed(2);
  auto b = lg::models::resnet18(10);
  b->load_state_dict(lg::nn::load_safetensors(path.str()).tensors);
  for (const auto& [name, t] : a->state_dict()) {
    CAPTURE(name);
    CHECK(values(b->state_dict().at(name)) == values(t));
  }
}

TEST_CASE("safetensors: corrupt files raise ValueError naming the file and the problem") {
  const std::string ok_entry = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string data(8, '\0');
  check_rejects("", "shorter than the 8-byte header length");
  check_rejects(std::string("\x05\0\0", 3), "shorter than the 8-byte header length");
  check_rejects(header_of(ok_entry).substr(0, 20), "runs past the end of the file");  // truncated header
  {
    std::string huge(8, '\0');
    const uint64_t n = 1ull << 40;
    std::memcpy(huge.data(), &n, 8);
    check_rejects(huge + "{}", "exceeds the 100 MB limit");
  }
  check_rejects(header_of("{\"t\": [1, 2") + data, "not valid JSON");
  check_rejects(header_of("[1,2,3]"), "must be a JSON object");
  check_rejects(header_of(R"({"t":{"dtype":"F8","shape":[2],"data_offsets":[0,8]}})") + data, "dtype \"F8\"");
  check_rejects(header_of(R"({"t":{"dtype":"F32","shape":[2]}})") + data, "no \"data_offsets\"");
  check_rejects(header_of(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})") + data,
                "non-negative integers");
  check_rejects(header_of(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})") + data,
                "needs 12 bytes but data_offsets give 8");
  check_rejects(header_of(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})") + data,
                "more than 2^64");
  check_rejects(header_of(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})") + data, "end before");
  // Empty, but with strides past int64; and a rank past the library's limit.
  check_rejects(header_of(R"({"t":{"dtype":"F32","shape":[0,9223372036854775807,9223372036854775807],"data_offsets":[0,0]}})") +
                    data,
                "strides beyond int64");
  check_rejects(header_of(R"({"t":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2],"data_offsets":[0,8]}})") +
                    data,
                "has 26 dims");
  check_rejects(header_of(ok_entry) + data.substr(0, 5), "run past the end of the data section");  // truncated data
  check_rejects(header_of(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[100,108]}})") + data,
                "run past the end");
  check_rejects(header_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})") + data,
                "overlap");
  check_rejects(header_of(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})") + data, "belong to no tensor");
  check_rejects(header_of(ok_entry) + data + "xx", "trailing bytes");
  check_rejects(header_of(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})") + data,
                "tensor name \"t\" appears twice");
  check_rejects(header_of(R"({"t":{"dtype":"F32","dtype":"I32","shape":[2],"data_offsets":[0,8]}})") + data,
                "key \"dtype\" appears twice in the entry \"t\"");
  check_rejects(header_of(R"({"__metadata__":{"k":"a","k":"b"}})"), "key \"k\" appears twice in the entry \"__metadata__\"");
  check_rejects(header_of(R"({"t":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})") + std::string("\x01\x07", 2),
                "BOOL bytes must be 0 or 1");
  check_rejects(header_of(R"({"__metadata__":{"k":1}})"), "must be a string");
  // Deep nesting is refused while parsing (an error message quoting it must not recurse 10^6 times).
  check_rejects(header_of(R"({"t":)" + std::string(1000000, '[') + std::string(1000000, ']') + "}"),
                "nested deeper than");
}

TEST_CASE("safetensors: a header of 100,000 entries is read in one pass") {
  // A duplicate key check inside nlohmann's parse callback took minutes here (the callback
  // searched the whole parent object at each entry's end).
  constexpr int kEntries = 100000;
  std::string json = "{";
  for (int i = 0; i < kEntries; ++i)
    json += (i ? ",\"t" : "\"t") + std::to_string(i) + R"(":{"dtype":"U8","shape":[1],"data_offsets":[)" +
            std::to_string(i) + "," + std::to_string(i + 1) + "]}";
  json += "}";
  const std::string bytes = header_of(json) + std::string(kEntries, '\x01');
  const lg::nn::StateDict tensors =
      lg::nn::parse_safetensors({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "many").tensors;
  CHECK(tensors.size() == kEntries);
  CHECK(tensors.at("t99999").data_ptr<uint8_t>()[0] == 1);
}

TEST_CASE("safetensors: unreadable paths and bad names are errors naming them") {
  CHECK_THROWS_WITH_AS(lg::nn::load_safetensors("/nonexistent/x.safetensors"),
                       doctest::Contains("/nonexistent/x.safetensors: cannot open"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::nn::load_safetensors("/tmp"), doctest::Contains("not a regular file"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::nn::save_safetensors("/nonexistent/dir/x.safetensors", {{"t", lg::zeros({1})}}),
                       doctest::Contains("[nn::save_safetensors] cannot write the safetensors file to "
                                         "'/nonexistent/dir/x.safetensors': its directory does not exist"),
                       lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::nn::safetensors_bytes({{"__metadata__", lg::zeros({1})}}),
                       doctest::Contains("__metadata__"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::nn::safetensors_bytes({{"t", Tensor()}}), doctest::Contains("undefined"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::nn::safetensors_bytes({{"bad\xff", lg::zeros({1})}}), doctest::Contains("UTF-8"), lg::ValueError);
  // A NUL in a path would cut it short at the system call: another file read or written.
  TempPath real("lg-nul.safetensors");
  lg::nn::save_safetensors(real.str(), {{"t", lg::zeros({1})}});
  const std::string cut = real.str() + std::string("\0.other", 7);
  CHECK_THROWS_WITH_AS(lg::nn::load_safetensors(cut), doctest::Contains("received a path with a NUL character"),
                       lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::nn::save_safetensors(cut, {{"t", lg::ones({1})}}),
                       doctest::Contains("[nn::save_safetensors] received a path with a NUL character"), lg::ValueError);
  CHECK(values(lg::nn::load_safetensors(real.str()).tensors.at("t")) == std::vector<double>{0});  // not overwritten
}

TEST_CASE("safetensors: saving over a file leaves tensors loaded from it intact") {
  TempPath path("lg-overwrite.safetensors");
  lg::nn::save_safetensors(path.str(), {{"t", lg::arange(1000, lg::TensorOptions().dtype(lg::kFloat32))}});
  const lg::nn::TensorFile first = lg::nn::load_safetensors(path.str());
  lg::nn::save_safetensors(path.str(), {{"u", lg::zeros({2})}});  // shorter, different bytes
  CHECK(first.tensors.at("t").numel() == 1000);
  CHECK(values(first.tensors.at("t"))[999] == 999.0);
  CHECK(lg::nn::load_safetensors(path.str()).tensors.count("u") == 1);
}

TEST_CASE("safetensors: rewriting or truncating the file in place leaves loaded tensors intact") {
  TempPath path("lg-inplace.safetensors");
  lg::nn::save_safetensors(path.str(), {{"w", lg::ones({256})}});
  const lg::nn::TensorFile loaded = lg::nn::load_safetensors(path.str());
  const std::string original = lg::nn::safetensors_bytes({{"w", lg::ones({256})}});
  {
    // Same length, new values, same inode: what cp or Python's save_file do.
    std::fstream f(path.str(), std::ios::in | std::ios::out | std::ios::binary);
    const std::string zeros = lg::nn::safetensors_bytes({{"w", lg::zeros({256})}});
    REQUIRE(zeros.size() == original.size());
    f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  }
  CHECK(lg::sum(loaded.tensors.at("w")).item<double>() == 256.0);
  REQUIRE(::truncate(path.str().c_str(), 8) == 0);  // a mapped tensor would die with SIGBUS here
  CHECK(lg::sum(loaded.tensors.at("w")).item<double>() == 256.0);
}

TEST_CASE("safetensors: a FIFO or a directory is refused at once, not read") {
  TempDir dir;
  make_fifo(dir / "weights.safetensors");
  // Opening a FIFO for reading waits for a writer: this test hangs if the loader does.
  CHECK_THROWS_WITH_AS(lg::nn::load_safetensors(dir / "weights.safetensors"),
                       doctest::Contains(("[nn::load_safetensors] " + (dir / "weights.safetensors") +
                                         ": not a regular file (a FIFO); required: a safetensors file: a regular file").c_str()),
                       lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::nn::load_safetensors(dir.str()),
                       doctest::Contains((dir.str() + ": not a regular file (a directory)").c_str()), lg::ValueError);
  // Saving over a FIFO would replace it by a plain file: refused, the FIFO stays.
  CHECK_THROWS_WITH_AS(lg::nn::save_safetensors(dir / "weights.safetensors", {{"t", lg::zeros({1})}}),
                       doctest::Contains("not a regular file (a FIFO)"), lg::ValueError);
  CHECK(std::filesystem::status(dir / "weights.safetensors").type() == std::filesystem::file_type::fifo);
}

TEST_CASE("safetensors: a save failing part-way leaves the old checkpoint byte-identical") {
  TempDir dir;
  const std::string path = dir / "model.safetensors";
  lg::nn::save_safetensors(path, {{"w", lg::arange(1000, lg::TensorOptions().dtype(lg::kFloat32))}});
  const std::string before = file_bytes(path);
  {
    FailWritesAfter fail(100);
    CHECK_THROWS_WITH_AS(lg::nn::save_safetensors(path, {{"u", lg::ones({4096})}}),
                         doctest::Contains("write failed after 100 of "), lg::ValueError);
  }
  CHECK(file_bytes(path) == before);
  CHECK(dir.listing() == "model.safetensors\n");
  CHECK(values(lg::nn::load_safetensors(path).tensors.at("w"))[999] == 999.0);
}

}  // TEST_SUITE
