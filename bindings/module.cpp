// minitensor._C: the private extension module; the package minitensor re-exports it.
#include "bindings/bindings.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "minitensor C++ core: Tensor, dtypes, devices and operators";
  using namespace mt::bindings;
  bind_errors(m);
  bind_types(m);
  bind_tensor(m);
  bind_creation(m);
  bind_ops(m);
  bind_cuda(m);
  bind_dlpack(m);
  bind_elementwise(m);
  bind_reduce(m);
  bind_matmul(m);
  bind_creation_ops(m);
  bind_indexing(m);
  bind_ladder(m);
  bind_testing(m);
}
