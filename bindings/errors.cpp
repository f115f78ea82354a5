// C++ exceptions -> Python exceptions. User errors keep their type; CUDA failures become
// minitensor.CudaError (a RuntimeError) so callers can catch them without catching everything.
#include "bindings/bindings.h"
#include "core/errors.h"

namespace mt::bindings {

namespace {

// class ShapeError(ValueError, RuntimeError): py::exception takes one base only.
py::handle make_shape_error(py::module_& m) {
  py::tuple bases = py::make_tuple(py::handle(PyExc_ValueError), py::handle(PyExc_RuntimeError));
  PyObject* type = PyErr_NewExceptionWithDoc(
      "minitensor.ShapeError",
      "Shapes that do not fit together (broadcast, matmul, view, reshape, expand, cat). Both a "
      "ValueError and a RuntimeError, so code written for torch (which raises RuntimeError) catches it.",
      bases.ptr(), nullptr);
  if (!type) throw py::error_already_set();
  m.add_object("ShapeError", py::handle(type));  // the module keeps a reference; so does `type`
  return py::handle(type);
}

}  // namespace

void bind_errors(py::module_& m) {
  static py::exception<CudaError> cuda_error(m, "CudaError", PyExc_RuntimeError);
  static py::handle shape_error = make_shape_error(m);  // never released: lives as long as the process
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ShapeError& e) {
      PyErr_SetString(shape_error.ptr(), e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
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
