// Element conversion between any two dtypes, host and device: what copies and casts use.
// 16-bit floats go through float; bool is "not zero" (so NaN converts to true, as in torch).
#pragma once

#include <type_traits>

#include "core/half.h"

namespace mt {

template <typename To, typename From>
MT_HOST_DEVICE To convert_element(From v) {
  constexpr bool kFrom16 = std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>;
  if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kFrom16) return static_cast<float>(v) != 0.0f;
    else return v != From(0);
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(static_cast<float>(v));
  } else if constexpr (kFrom16) {
    return static_cast<To>(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace mt
