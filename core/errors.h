// Two kinds of failure. User mistakes (a bad dim, a wrong dtype, a CUDA tensor without CUDA) throw
// typed exceptions that the bindings turn into ValueError / IndexError / TypeError / MemoryError /
// minitensor.ShapeError / minitensor.CudaError with a message the user can act on. Broken internal invariants use
// MT_ASSERT, which reports the file and line because it is our bug, not theirs.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace mt {

struct ValueError : std::runtime_error { using std::runtime_error::runtime_error; };
// Shapes that do not fit together (broadcast, matmul, view, reshape, expand, cat, in-place
// results). Python sees minitensor.ShapeError, both a ValueError and a RuntimeError: torch raises
// RuntimeError for these, and `except RuntimeError` written for torch must catch them.
struct ShapeError : std::runtime_error { using std::runtime_error::runtime_error; };
// What torch raises as a plain RuntimeError and no other Python type fits (an in-place result
// that cannot be cast to the destination's dtype).
struct RuntimeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct IndexError : std::runtime_error { using std::runtime_error::runtime_error; };
struct TypeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct OutOfMemoryError : std::runtime_error { using std::runtime_error::runtime_error; };
struct CudaError : std::runtime_error { using std::runtime_error::runtime_error; };
struct InternalError : std::logic_error { using std::logic_error::logic_error; };

template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace mt

#define MT_THROW(ExceptionType, ...) throw ::mt::ExceptionType(::mt::str_cat(__VA_ARGS__))
#define MT_THROW_VALUE(...) MT_THROW(ValueError, __VA_ARGS__)
#define MT_THROW_INDEX(...) MT_THROW(IndexError, __VA_ARGS__)
#define MT_THROW_TYPE(...) MT_THROW(TypeError, __VA_ARGS__)

// MT_CHECK_<KIND>(cond, message parts...): throws that kind when cond is false.
#define MT_CHECK(ExceptionType, cond, ...)          \
  do {                                              \
    if (!(cond)) MT_THROW(ExceptionType, __VA_ARGS__); \
  } while (0)
#define MT_CHECK_VALUE(cond, ...) MT_CHECK(ValueError, cond, __VA_ARGS__)
#define MT_CHECK_SHAPE(cond, ...) MT_CHECK(ShapeError, cond, __VA_ARGS__)
#define MT_CHECK_INDEX(cond, ...) MT_CHECK(IndexError, cond, __VA_ARGS__)
#define MT_CHECK_TYPE(cond, ...) MT_CHECK(TypeError, cond, __VA_ARGS__)

#define MT_ASSERT(cond, ...)                                                                  \
  do {                                                                                        \
    if (!(cond))                                                                              \
      throw ::mt::InternalError(::mt::str_cat("minitensor internal assert failed: " #cond     \
                                              " at " __FILE__ ":", __LINE__, ". " __VA_ARGS__)); \
  } while (0)
