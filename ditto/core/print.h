#pragma once

// PyTorch's repr of a tensor with other spellings (Tensor::to_string is
// the C++ one): the Python bindings name dtypes "ditto.float64" and add
// autograd's suffixes.

#include <string>
#include <string_view>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::detail {

// to_string() with the dtype named after dtype_prefix ("torch." there,
// "ditto." in Python) and extra suffixes after it ("requires_grad=True"),
// wrapped as PyTorch wraps them.
DITTO_API std::string tensor_repr(
    const Tensor& t,
    std::string_view dtype_prefix,
    const std::vector<std::string>& extra_suffixes);

} // namespace ditto::detail
