// Where a tensor's bytes live: the host, or one CUDA device by index.
#pragma once

#include <cstdint>
#include <string>

namespace mt {

enum class DeviceType : uint8_t { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;  // always 0 for the CPU

  Device() = default;
  Device(DeviceType t, int i = 0) : type(t), index(t == DeviceType::CPU ? 0 : i) {}

  // "cpu", "cuda", "cuda:1" (torch's spelling). "cuda" means the current CUDA device.
  static Device parse(const std::string& text);

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  std::string str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

}  // namespace mt
