// Elementwise ops: tensors or Python scalars in, a new tensor out. Arguments are converted with
// the GIL held; the kernels run with it released.
#include "bindings/bindings.h"
#include "ops/elementwise/elementwise.h"

namespace mt::bindings {

namespace {

Operand to_operand(const py::handle& obj) {
  if (py::isinstance<Tensor>(obj)) return Operand(obj.cast<Tensor>());
  // Looked up once and kept for the process's life (never released: no teardown-order problems).
  static const py::handle numpy_bool = py::object(py::module_::import("numpy").attr("bool_")).release();
  if (py::isinstance<py::bool_>(obj) || py::isinstance(obj, numpy_bool))
    return Operand::from_bool(PyObject_IsTrue(obj.ptr()) == 1);
  // Python ints and NumPy integers (torch takes both as integer scalars); 2**70 -> OverflowError.
  if (is_integer_like(obj)) return Operand::from_int(to_int64(obj, "a scalar operand"));
  if (py::isinstance<py::float_>(obj)) return Operand::from_float(obj.cast<double>());
  // NumPy scalars and anything else with __float__ count as Python floats.
  if (py::hasattr(obj, "__float__")) return Operand::from_float(py::float_(py::reinterpret_borrow<py::object>(obj)));
  MT_THROW_TYPE("expected a Tensor or a Python number, but got ", py::str(py::type::of(obj).attr("__name__")).cast<std::string>());
}

void def_binary(py::module_& m, const char* name, BinaryCode code, const char* doc) {
  m.def(name, [code](const py::object& a, const py::object& b) {
    const Operand x = to_operand(a), y = to_operand(b);
    py::gil_scoped_release release;
    return binary_op(code, x, y);
  }, py::arg("input"), py::arg("other"), doc);
}

void def_unary(py::module_& m, const char* name, UnaryCode code, const char* doc) {
  m.def(name, [code](const Tensor& x) { return unary_op(code, x); }, py::arg("input"),
        py::call_guard<py::gil_scoped_release>(), doc);
}

}  // namespace

void bind_elementwise(py::module_& m) {
  def_binary(m, "add", BinaryCode::Add, "input + other, broadcast");
  def_binary(m, "sub", BinaryCode::Sub, "input - other, broadcast");
  def_binary(m, "mul", BinaryCode::Mul, "input * other, broadcast");
  def_binary(m, "div", BinaryCode::Div, "input / other, broadcast (true division: ints give float32)");
  def_binary(m, "maximum", BinaryCode::Maximum, "elementwise max, NaN-propagating");
  m.def("pow", [](const py::object& a, const py::object& exponent) {
    const Operand x = to_operand(a), y = to_operand(exponent);
    py::gil_scoped_release release;
    return binary_op(BinaryCode::Pow, x, y);
  }, py::arg("input"), py::arg("exponent"), "input ** exponent");
  def_binary(m, "eq", BinaryCode::Eq, "input == other (bool)");
  def_binary(m, "ne", BinaryCode::Ne, "input != other (bool)");
  def_binary(m, "gt", BinaryCode::Gt, "input > other (bool)");
  def_binary(m, "ge", BinaryCode::Ge, "input >= other (bool)");
  def_binary(m, "lt", BinaryCode::Lt, "input < other (bool)");
  def_binary(m, "le", BinaryCode::Le, "input <= other (bool)");
  def_binary(m, "relu_backward", BinaryCode::ReluBackward, "grad * (x > 0)  (args: grad, x)");
  def_binary(m, "sigmoid_backward", BinaryCode::SigmoidBackward, "grad * y * (1 - y)  (args: grad, y = sigmoid(x))");
  def_binary(m, "tanh_backward", BinaryCode::TanhBackward, "grad * (1 - y * y)  (args: grad, y = tanh(x))");

  def_unary(m, "neg", UnaryCode::Neg, "-input");
  def_unary(m, "exp", UnaryCode::Exp, "e ** input");
  def_unary(m, "log", UnaryCode::Log, "natural logarithm");
  def_unary(m, "relu", UnaryCode::Relu, "max(input, 0)");
  def_unary(m, "sigmoid", UnaryCode::Sigmoid, "1 / (1 + exp(-input))");
  def_unary(m, "tanh", UnaryCode::Tanh, "hyperbolic tangent");
  def_unary(m, "sqrt", UnaryCode::Sqrt, "square root");
  def_unary(m, "abs", UnaryCode::Abs, "absolute value");

  m.def("where", [](const Tensor& cond, const py::object& a, const py::object& b) {
    const Operand x = to_operand(a), y = to_operand(b);
    py::gil_scoped_release release;
    return where(cond, x, y);
  }, py::arg("condition"), py::arg("input"), py::arg("other"), "input where condition else other, broadcast");

  m.def("can_cast", &can_cast, py::arg("from_"), py::arg("to"),
        "Whether torch's in-place ops may write a result of dtype from_ into a tensor of dtype to");

  // In-place writes: each returns self (the same Python object) and bumps the version counter.
  auto tensor = py::type::of<Tensor>();
  auto def_inplace = [&tensor](const char* name, auto&& write, const char* arg, const char* doc) {
    tensor.attr(name) = py::cpp_function(
        [write](const py::object& self, const py::object& value) {
          const Tensor& dst = self.cast<const Tensor&>();
          const Operand v = to_operand(value);
          {
            py::gil_scoped_release release;
            write(dst, v);
          }
          return self;
        },
        py::is_method(tensor), py::arg(arg), doc);
  };
  def_inplace("copy_", [](const Tensor& dst, const Operand& src) {
    MT_CHECK_TYPE(src.is_tensor(), "copy_(): argument 'src' must be Tensor, not a number");
    copy_(dst, src.tensor);
  }, "src", "Copies src (broadcast, converted to this dtype and device) into this tensor in place; returns self");
  def_inplace("fill_", [](const Tensor& dst, const Operand& value) { fill_(dst, value); }, "value",
              "Writes value (a number or a 0-d tensor) into every element in place; returns self");
  def_inplace("_assign_result_", [](const Tensor& dst, const Operand& result) {
    MT_ASSERT(result.is_tensor());
    assign_result_(dst, result.tensor);
  }, "result", "self.add_(b) is self._assign_result_(self + b): torch's shape and casting checks, then the write");
}

}  // namespace mt::bindings
