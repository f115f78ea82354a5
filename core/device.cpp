#include "core/device.h"

#include <cctype>

#include "core/cuda_runtime.h"
#include "core/errors.h"

namespace mt {

Device Device::parse(const std::string& text) {
  if (text == "cpu") return Device(DeviceType::CPU);
  if (text == "cuda") return Device(DeviceType::CUDA, cuda::is_available() ? cuda::current_device() : 0);
  const std::string prefix = "cuda:";
  if (text.size() > prefix.size() && text.compare(0, prefix.size(), prefix) == 0) {
    const std::string digits = text.substr(prefix.size());
    bool all_digits = digits.size() <= 6;
    for (char c : digits) all_digits = all_digits && std::isdigit(static_cast<unsigned char>(c));
    if (all_digits) return Device(DeviceType::CUDA, std::stoi(digits));
  }
  MT_THROW_VALUE("Invalid device string: '", text,
                 "' (expected 'cpu', 'cuda' or 'cuda:N' with N a device index)");
}

}  // namespace mt
