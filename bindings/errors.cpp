// C++ exceptions -> Python exceptions. User errors keep their type; CUDA failures become
// minitensor.CudaError (a RuntimeError) so callers can catch them without catching everything.
#include "bindings/bindings.h"
#include "core/errors.h"

namespace mt::bindings {

void bind_errors(py::module_& m) {
  static py::exception<CudaError> cuda_error(m, "CudaError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const CudaError& e) {
      py::set_error(cuda_error, e.what());
    } catch (const InternalError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace mt::bindings
