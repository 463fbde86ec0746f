// op_catalogue(): op_list.def joined with the kernel table.
#include <layoutguard/op_catalogue.h>

#include <array>

#include "dispatch/kernel_table.h"
#include "dispatch/op_id.h"

namespace lg {
namespace {

using dispatch::OpFamily;
using dispatch::OpId;

struct Note {
  std::string_view name, header, dtypes, difference;
};

constexpr std::array<Note, dispatch::kNumOps> kNotes{{
#define LG_OP(name, family, policy, header, dtypes, difference) {#name, header, dtypes, difference},
#include "dispatch/op_list.def"
#undef LG_OP
}};

std::string_view family_name(OpFamily f) {
  switch (f) {
    case OpFamily::Copy: return "Copy";
    case OpFamily::Conversion: return "Conversion";
    case OpFamily::View: return "View";
    case OpFamily::Pointwise: return "Pointwise";
    case OpFamily::Conv: return "Conv";
    case OpFamily::Norm: return "Norm";
    case OpFamily::Pool: return "Pool";
    case OpFamily::Join: return "Join";
    case OpFamily::Resample: return "Resample";
    case OpFamily::Linalg: return "Linalg";
    case OpFamily::Reduce: return "Reduce";
    case OpFamily::Composite: return "Composite";
  }
  return "?";
}

std::string_view kernel_name(OpId id, DeviceType device) {
  const OpFamily f = dispatch::op_family(id);
  if (f == OpFamily::View) return "view";
  if (f == OpFamily::Conversion || f == OpFamily::Composite) return "composite";
  return dispatch::kernel_table().slot(id, device).name();
}

}  // namespace

std::vector<OpDescription> op_catalogue() {
  std::vector<OpDescription> out;
  for (size_t i = 0; i < dispatch::kNumOps; ++i) {
    const auto id = static_cast<OpId>(i);
    const Note& n = kNotes[i];
    const OpFamily f = dispatch::op_family(id);
    // Views and composites run on a device once it can hold tensors, i.e. once it can copy.
    const bool cuda_copies = !dispatch::kernel_table().slot(OpId::copy_, DeviceType::CUDA).empty();
    const bool metadata_only = f == OpFamily::View || f == OpFamily::Conversion || f == OpFamily::Composite;
    out.push_back({dispatch::op_name(id), family_name(f), layout_policy_name(dispatch::op_policy(id)), n.header,
                   kernel_name(id, DeviceType::CPU),
                   !metadata_only || cuda_copies ? kernel_name(id, DeviceType::CUDA) : std::string_view(), n.dtypes,
                   n.difference});
  }
  return out;
}

}  // namespace lg
