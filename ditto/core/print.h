#pragma once

// Printing tensors: PyTorch's repr (Tensor::to_string(), and with other
// spellings for the Python bindings, which name dtypes "ditto.float64" and
// add autograd's suffixes), or LibTorch's C++ form.

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto {

// How operator<<(std::ostream&, const Tensor&) prints: PyTorch's repr
// (Tensor::to_string(), "tensor([1., 2.])", ditto's default), or LibTorch's
// C++ form (print() below, "[ CPUFloatType{2} ]"). Process-wide: until
// set_print_style() is called, the environment variable DITTO_PRINT_STYLE
// (python or libtorch; another value is a ValueError) decides, so a
// LibTorch program prints LibTorch's form without an edit. to_string() and
// print() keep their forms whatever the style.
enum class PrintStyle { kPython, kLibTorch };
DITTO_API void set_print_style(PrintStyle style);
DITTO_API PrintStyle print_style();

// LibTorch's C++ printing of t (at::print): the values in columns of a
// common format (fixed with 4 decimals, a common scale factor, scientific,
// or integers), rows wrapped into column blocks of linesize characters,
// the matrices of a tensor of 3 or more dims one after the other, then the
// type and sizes ("[ CPUFloatType{2,3} ]").
DITTO_API std::ostream& print(
    std::ostream& out,
    const Tensor& t,
    int64_t linesize = 80);
// LibTorch's type string: "CPUFloatType", "CPULongType", "VulkanFloatType".
DITTO_API std::string type_string(const Tensor& t);

} // namespace ditto

namespace ditto::detail {

// to_string() with the dtype named after dtype_prefix ("torch." there,
// "ditto." in Python) and extra suffixes after it ("requires_grad=True"),
// wrapped as PyTorch wraps them.
DITTO_API std::string tensor_repr(
    const Tensor& t,
    std::string_view dtype_prefix,
    const std::vector<std::string>& extra_suffixes);

} // namespace ditto::detail
