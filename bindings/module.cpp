// minitensor._C: the private extension module; the package minitensor re-exports it.
#include "bindings/bindings.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "minitensor C++ core: Tensor, dtypes, devices and operators";
  using namespace mt::bindings;
#define MT_CALL_BINDING(part) bind_##part(m);
  MT_BINDING_PARTS(MT_CALL_BINDING)
#undef MT_CALL_BINDING
}
