// Devices: the CPU, or a CUDA device with an index.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace lg {

enum class DeviceType : int8_t { CPU, CUDA };

class Device {
 public:
  // CPU has no index (-1). A CUDA device built without an explicit index means device 0.
  constexpr Device(DeviceType type = DeviceType::CPU)  // NOLINT: Device d = kCPU reads well
      : type_(type), index_(type == DeviceType::CUDA ? 0 : -1) {}
  // Throws lg::ValueError for a negative CUDA index or an index on the CPU.
  Device(DeviceType type, int index);
  // Parses "cpu", "cuda" or "cuda:N"; anything else is an lg::ValueError.
  explicit Device(std::string_view spec);

  static constexpr Device cpu() { return Device(DeviceType::CPU); }
  static Device cuda(int index = 0) { return Device(DeviceType::CUDA, index); }

  constexpr DeviceType type() const { return type_; }
  constexpr int index() const { return index_; }
  constexpr bool is_cpu() const { return type_ == DeviceType::CPU; }
  constexpr bool is_cuda() const { return type_ == DeviceType::CUDA; }
  // "cpu" or "cuda:N".
  std::string str() const;

  friend constexpr bool operator==(Device a, Device b) = default;

 private:
  DeviceType type_;
  int index_;
};

inline constexpr Device kCPU = Device::cpu();
inline constexpr DeviceType kCUDA = DeviceType::CUDA;

std::ostream& operator<<(std::ostream& out, Device d);

}  // namespace lg
