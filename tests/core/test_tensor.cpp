// Tensor behaviour beyond strides: values through factories, views and copies; storage sharing
// and lifetime; printing.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <vector>

#include "support/tensor_testing.h"

namespace {
using lg::MemoryFormat;
using lg::Tensor;
using lg::testing::ls;
using lg::testing::values;
}  // namespace

TEST_SUITE("tensor") {

TEST_CASE("factories fill the values and dtypes libtorch would") {
  CHECK(values(lg::zeros({2, 2})) == std::vector<double>{0, 0, 0, 0});
  CHECK(values(lg::ones({3}, lg::kInt32)) == std::vector<double>{1, 1, 1});
  Tensor f = lg::full({2}, 7);
  CHECK(f.dtype() == lg::kInt64);
  CHECK(lg::full({2}, 7, lg::kFloat16).dtype() == lg::kFloat16);
  CHECK(lg::full({2}, 2.5).dtype() == lg::kFloat32);
  Tensor a = lg::arange(5);
  CHECK(a.dtype() == lg::kInt64);
  CHECK(values(a) == std::vector<double>{0, 1, 2, 3, 4});
  CHECK(values(lg::arange(1, 10, 3)) == std::vector<double>{1, 4, 7});
  CHECK(values(lg::arange(5, 0, -2)) == std::vector<double>{5, 3, 1});
  Tensor af = lg::arange(0.0, 1.0, 0.25);
  CHECK(af.dtype() == lg::kFloat32);
  CHECK(values(af) == std::vector<double>{0, 0.25, 0.5, 0.75});
  CHECK(lg::arange(0, 0).numel() == 0);
  CHECK(lg::empty({}).dim() == 0);
  CHECK(lg::empty({}).numel() == 1);
  CHECK(lg::zeros({2, 0, 3}).numel() == 0);
}

TEST_CASE("fresh bool tensors hold only zero bytes: any other byte is undefined behaviour to read") {
  constexpr int64_t n = 1 << 20;  // large enough for the CPU block cache to hand the block back
  for (int round = 0; round < 3; ++round) {
    { Tensor junk = lg::full({n}, 190, lg::kUInt8); }
    Tensor b = round == 0 ? lg::empty({n}, lg::kBool)
             : round == 1 ? lg::empty_strided({n / 2, 2}, {1, n / 2}, lg::kBool)
                          : lg::empty_like(lg::ones({n}, lg::kBool));
    const auto* bytes = static_cast<const unsigned char*>(b.data_ptr());
    int64_t nonzero = 0;
    for (int64_t i = 0; i < n; ++i) nonzero += bytes[i] != 0;
    CHECK(nonzero == 0);
    CHECK(values(lg::sum(b.to(lg::kInt32))) == std::vector<double>{0});
  }
}

TEST_CASE("storage is 64-byte aligned and shared by views until the last one goes") {
  Tensor t = lg::empty({3, 5}, lg::kFloat32);
  CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64 == 0);
  Tensor v = t.slice(1, 1, 4);
  CHECK(v.is_alias_of(t));
  CHECK(v.storage_offset() == 1);
  CHECK(v.data_ptr<float>() == t.data_ptr<float>() + 1);
  CHECK(t.storage().use_count() == 2);
  { Tensor w = v.transpose(0, 1); CHECK(t.storage().use_count() == 3); }
  CHECK(t.storage().use_count() == 2);
}

TEST_CASE("from_blob wraps caller memory without copying and runs the deleter once") {
  int deleted = 0;
  std::vector<float> buf{0, 1, 2, 3, 4, 5};
  {
    Tensor t = lg::from_blob(buf.data(), {2, 3}, [&](void* p) { deleted += p == buf.data(); });
    Tensor view = t.transpose(0, 1);
    view.select(0, 2).fill_(9);  // writes column 2: buf[2] and buf[5]
    CHECK(buf == std::vector<float>{0, 1, 9, 3, 4, 9});
    CHECK(deleted == 0);
  }
  CHECK(deleted == 1);
  // Strided from_blob: NHWC data seen as NCHW.
  std::vector<double> nhwc(2 * 3 * 2 * 2);
  for (size_t i = 0; i < nhwc.size(); ++i) nhwc[i] = static_cast<double>(i);
  Tensor x = lg::from_blob(nhwc.data(), {2, 3, 2, 2}, {12, 1, 6, 3}, lg::kFloat64);
  CHECK(x.suggest_memory_format() == MemoryFormat::ChannelsLast);
  CHECK(lg::testing::value_at(x, {1, 2, 0, 1}) == 12 + 2 + 3);
  CHECK(values(x.contiguous()) == values(x));
}

TEST_CASE("conversions move values between layouts and dtypes exactly") {
  lg::manual_seed(3);
  Tensor x = lg::randn({2, 3, 4, 5});
  Tensor cl = x.to(MemoryFormat::ChannelsLast);
  CHECK(values(cl) == values(x));
  CHECK(values(cl.to(MemoryFormat::Contiguous)) == values(x));
  CHECK(values(cl.to(lg::kFloat64)) == values(x));
  Tensor x5 = lg::rand({2, 3, 2, 3, 4});
  CHECK(values(x5.contiguous(MemoryFormat::ChannelsLast3d)) == values(x5));
  // Large enough for the tiled NCHW <-> NHWC path.
  Tensor big = lg::randn({2, 40, 33, 35});
  Tensor big_cl = big.contiguous(MemoryFormat::ChannelsLast);
  CHECK(big_cl.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK(values(big_cl) == values(big));
  CHECK(values(big_cl.contiguous()) == values(big));
  CHECK(values(big_cl.to(lg::kFloat16).to(lg::kFloat32)) == values(big.to(lg::kFloat16).to(lg::kFloat32)));
}

TEST_CASE("3-channel images go to channels_last through the interleaving path with every value in place") {
  // Pixel counts around the 4-pixel step, a batch, int32 (bit patterns), a NaN with a payload,
  // and a source whose planes are a slice of a wider tensor.
  for (int64_t w : {1, 3, 4, 5, 8, 9, 31}) {
    for (lg::DType dt : {lg::kFloat32, lg::kInt32}) {
      CAPTURE(w);
      CAPTURE(dt);
      const Tensor x = lg::arange(0, 2 * 3 * 2 * w, 1, dt).reshape({2, 3, 2, w});
      if (dt == lg::kFloat32) static_cast<uint32_t*>(x.data_ptr())[1] = 0x7fa12345u;
      const Tensor y = x.contiguous(MemoryFormat::ChannelsLast);
      CHECK(y.is_contiguous(MemoryFormat::ChannelsLast));
      const auto* xs = static_cast<const uint32_t*>(x.data_ptr());
      const auto* ys = static_cast<const uint32_t*>(y.data_ptr());
      bool same = true;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < 3; ++c)
          for (int64_t i = 0; i < 2 * w; ++i) same = same && ys[(n * 2 * w + i) * 3 + c] == xs[(n * 3 + c) * 2 * w + i];
      CHECK(same);
      // And back to NCHW through the deinterleaving path: every bit as it was.
      const Tensor back = y.contiguous();
      CHECK(std::memcmp(back.data_ptr(), x.data_ptr(), static_cast<size_t>(x.nbytes())) == 0);
    }
  }
  const Tensor wide = lg::randn({2, 5, 4, 6});
  const Tensor planes = wide.narrow(1, 1, 3);  // 3 of 5 channels: planes 24 apart, batch 120 apart
  CHECK(values(planes.contiguous(MemoryFormat::ChannelsLast)) == values(planes));
}

TEST_CASE("NCHW <-> NHWC copies keep every bit for tile and 8x8-block edges and 4 KiB strides") {
  // Channel and pixel counts around the 8x8 AVX blocks, the 4x4 SSE blocks and the 32-wide
  // tiles, and 1024 channels (rows 4 KiB apart, where the 4x4 blocks are used instead).
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 8, 8, 1}, std::vector<int64_t>{1, 9, 3, 5},
                                            std::vector<int64_t>{2, 33, 7, 9}, std::vector<int64_t>{1, 40, 8, 6},
                                            std::vector<int64_t>{1, 1024, 3, 3}, std::vector<int64_t>{1, 64, 4, 4}}) {
    CAPTURE(lg::to_string(shape));
    const Tensor x = lg::arange(0, lg::layout::checked_numel(shape, "test"), 1, lg::kInt32).reshape(shape);
    const Tensor y = x.contiguous(MemoryFormat::ChannelsLast);
    const int64_t C = shape[1], HW = shape[2] * shape[3];
    const auto* xs = static_cast<const int32_t*>(x.data_ptr());
    const auto* ys = static_cast<const int32_t*>(y.data_ptr());
    bool same = true;
    for (int64_t n = 0; n < shape[0]; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t p = 0; p < HW; ++p) same = same && ys[(n * HW + p) * C + c] == xs[(n * C + c) * HW + p];
    CHECK(same);
    const Tensor back = y.contiguous();
    CHECK(std::memcmp(back.data_ptr(), x.data_ptr(), static_cast<size_t>(x.nbytes())) == 0);
  }
}

TEST_CASE("copy_ broadcasts, converts, and survives overlapping source and destination") {
  Tensor dst = lg::zeros({2, 3}, lg::kInt32);
  dst.copy_(lg::arange(3));
  CHECK(values(dst) == std::vector<double>{0, 1, 2, 0, 1, 2});
  dst.copy_(lg::full({}, 4.7));
  CHECK(values(dst) == std::vector<double>{4, 4, 4, 4, 4, 4});
  // Shift a buffer by one element within the same storage.
  Tensor buf = lg::arange(6, lg::kFloat32);
  buf.slice(0, 1, 6).copy_(buf.slice(0, 0, 5));
  CHECK(values(buf) == std::vector<double>{0, 0, 1, 2, 3, 4});
  Tensor same = lg::arange(4);
  same.copy_(same);
  CHECK(values(same) == std::vector<double>{0, 1, 2, 3});
  // copy_ keeps the destination's strides (it is in place).
  Tensor cl = lg::empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast);
  cl.copy_(lg::ones({2, 3, 4, 5}));
  CHECK(ls(cl) == "(2,3,4,5)@(60,1,15,3)");
}

TEST_CASE("random factories are seeded, bounded and format-aware") {
  lg::manual_seed(42);
  Tensor a = lg::rand({1000});
  lg::manual_seed(42);
  Tensor b = lg::rand({1000});
  CHECK(values(a) == values(b));
  for (double v : values(a)) REQUIRE((v >= 0.0 && v < 1.0));
  Tensor r = lg::randint(-3, 4, {500});
  CHECK(r.dtype() == lg::kInt64);
  bool saw_low = false, saw_high = false;
  for (double v : values(r)) {
    REQUIRE((v >= -3 && v <= 3));
    saw_low |= v == -3;
    saw_high |= v == 3;
  }
  CHECK((saw_low && saw_high));
  Tensor n = lg::randn({20000}, lg::kFloat64);
  double sum = 0, sq = 0;
  for (double v : values(n)) sum += v, sq += v * v;
  CHECK(std::abs(sum / 20000) < 0.05);
  CHECK(std::abs(sq / 20000 - 1.0) < 0.05);
  Tensor like = lg::rand_like(lg::empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast), lg::kFloat16);
  CHECK(like.dtype() == lg::kFloat16);
  CHECK(ls(like) == "(2,3,4,5)@(60,1,15,3)");
  CHECK(lg::randint(10, {3}, lg::kUInt8).dtype() == lg::kUInt8);
}

TEST_CASE("view family values: select, narrow, slice, expand, squeeze") {
  Tensor t = lg::arange(24).view({2, 3, 4});
  CHECK(values(t.select(1, -1)) == std::vector<double>{8, 9, 10, 11, 20, 21, 22, 23});
  CHECK(values(t.narrow(2, -2, 2).select(0, 0)) == std::vector<double>{2, 3, 6, 7, 10, 11});
  CHECK(values(t.slice(2, 0, 100, 3).select(0, 1)) == std::vector<double>{12, 15, 16, 19, 20, 23});
  CHECK(t.slice(1, 5, 9).size(1) == 0);
  CHECK(t.slice(1, -2).size(1) == 2);
  Tensor col = lg::arange(3).view({3, 1});
  CHECK(ls(col.expand({2, 3, 4})) == "(2,3,4)@(0,1,0)");
  CHECK(ls(lg::full({}, 1.0).expand({2, 1})) == "(2,1)@(0,1)");
  CHECK(ls(col.expand({1, 3, 1})) == "(1,3,1)@(3,1,1)");
  CHECK(ls(t.unsqueeze(0).unsqueeze(3).squeeze()) == "(2,3,4)@(12,4,1)");
  CHECK(ls(lg::zeros({1, 3, 1}).squeeze(0)) == "(3,1)@(1,1)");
  CHECK(ls(lg::zeros({1, 3, 1}).squeeze(1)) == "(1,3,1)@(3,1,1)");
  CHECK(ls(t.transpose(0, 2)) == "(4,3,2)@(1,4,12)");
  CHECK(ls(t.as_strided({2, 2}, {1, 2}, 3)) == "(2,2)@(1,2)");
  CHECK(t.as_strided({2, 2}, {1, 2}, 3).storage_offset() == 3);
  CHECK(ls(lg::full({}, 5.0).flatten()) == "(1)@(1)");
  CHECK(ls(lg::full({}, 5.0).flatten(-1, 0)) == "(1)@(1)");
  CHECK_THROWS_AS(lg::full({}, 5.0).flatten(5, 7), lg::IndexError);  // a 0-dim tensor names dims -1 and 0 only
  CHECK(ls(lg::full({}, 5.0).view({1, 1})) == "(1,1)@(1,1)");
  CHECK(lg::full({1}, 5.0).view({}).dim() == 0);
}

TEST_CASE("dim_order names the memory order with letters, outermost first") {
  CHECK(lg::empty({2, 3, 4, 5}).dim_order() == "abcd");
  CHECK(lg::empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast).dim_order() == "acdb");
  CHECK(lg::empty({2, 3, 4, 5, 6}, {}, MemoryFormat::ChannelsLast3d).dim_order() == "acdeb");
  CHECK(lg::empty({2, 3, 1, 1}, {}, MemoryFormat::ChannelsLast).dim_order() == "acdb");
  CHECK(lg::empty({2, 3, 1, 1}).dim_order() == "abcd");
  CHECK(lg::empty({2, 3, 4, 5}).expand({2, 3, 4, 5}).transpose(1, 3).dim_order() == "adcb");
  CHECK(lg::empty({}).dim_order().empty());
}

TEST_CASE("describe_layout prints dtype, device, sizes:strides, order and format") {
  CHECK(lg::describe_layout(lg::empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast)) ==
        "float32 cpu (2,3,4,5):(60,1,15,3) order=acdb channels_last");
  CHECK(lg::describe_layout(lg::empty({2, 3, 4, 5}, lg::kFloat16)) ==
        "float16 cpu (2,3,4,5):(60,20,5,1) order=abcd contiguous");
  CHECK(lg::describe_layout(lg::empty({2, 3, 1, 1}, {}, MemoryFormat::ChannelsLast)) ==
        "float32 cpu (2,3,1,1):(3,1,3,3) order=acdb channels_last (ambiguous: also contiguous)");
  CHECK(lg::describe_layout(lg::empty({2, 1, 4, 5})) ==
        "float32 cpu (2,1,4,5):(20,20,5,1) order=abcd contiguous (ambiguous: also channels_last-contiguous)");
  Tensor cl = lg::empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast);
  CHECK(lg::describe_layout(cl.slice(2, 0, 2)) ==
        "float32 cpu (2,3,2,5):(60,1,15,3) order=acdb non-dense channels_last-like");
  CHECK(lg::describe_layout(cl.slice(1, 1, 3)) ==
        "float32 cpu (2,2,4,5):(60,1,15,3) offset=1 order=acdb non-dense channels_last-like");
  CHECK(lg::describe_layout(lg::empty({2, 3}).transpose(0, 1)) == "float32 cpu (3,2):(1,3) order=ba permuted");
  CHECK(lg::describe_layout(lg::empty({3, 1}).expand({3, 4})) == "float32 cpu (3,4):(1,0) order=ab expanded");
  CHECK(lg::describe_layout(lg::empty({2, 3, 4, 5, 6}, lg::kInt64, MemoryFormat::ChannelsLast3d)) ==
        "int64 cpu (2,3,4,5,6):(360,1,90,18,3) order=acdeb channels_last_3d");
}

TEST_CASE("operator<< prints the layout line and the values, summarised when large") {
  std::ostringstream small;
  small << lg::arange(6).view({2, 3});
  CHECK(small.str() == "tensor int64 cpu (2,3):(3,1) order=ab contiguous\n[[0, 1, 2],\n [3, 4, 5]]");
  std::ostringstream flt;
  flt << lg::full({2}, 0.5, lg::kFloat16);
  CHECK(flt.str() == "tensor float16 cpu (2):(1) order=a contiguous\n[0.5000, 0.5000]");
  std::ostringstream b;
  b << lg::full({2}, true);
  CHECK(b.str().find("[True, True]") != std::string::npos);
  std::ostringstream big;
  big << lg::arange(2000);
  CHECK(big.str().find("[0, 1, 2, ..., 1997, 1998, 1999]") != std::string::npos);
  std::ostringstream empty_t;
  empty_t << lg::zeros({0, 3});
  CHECK(empty_t.str().find("[]") != std::string::npos);
  std::ostringstream undef;
  undef << Tensor();
  CHECK(undef.str() == "tensor undefined tensor");
}

}  // TEST_SUITE
