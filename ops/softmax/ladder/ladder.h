// The softmax kernel ladder: every classic way to write a softmax kernel, from one thread per row
// to a row split over many blocks, each a real kernel a user can select and time:
//
//   mt.softmax(x, dim, impl="warp")      mt.softmax_impls("cuda")  ->  {name: description}
//
// "auto" is always the production dispatcher (softmax_forward); the other names are the teaching
// variants in this folder. LADDER.md at the repo root walks through them step by step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace mt {

struct SoftmaxImplInfo {
  std::string name;
  std::string description;
};

// The variants that run on `device`'s type, "auto" first, in ladder order.
std::vector<SoftmaxImplInfo> softmax_impls(Device device);

// softmax (or log_softmax when `log`) of `input` along `dim` computed by the variant `impl`.
// Unknown names raise ValueError listing the valid ones; a shape or dtype a variant cannot handle
// raises ValueError / TypeError naming the variant and its limit.
Tensor softmax_with_impl(const Tensor& input, int64_t dim, bool log, const std::string& impl);

}  // namespace mt
