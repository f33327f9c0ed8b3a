// The definitions of Tensor's method forms, expanded from the list the
// declarations give (tensor_methods_declared.inc, tools/opgen.py).

#include "ditto/ops/conv.h"
#include "ditto/ops/detail/elementwise_engine.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/random.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/scan.h"
#include "ditto/ops/shape_ops.h"

namespace ditto {

#define DITTO_METHOD(ret, name, decl, def, body) \
  ret Tensor::name def {                         \
    return ::ditto::body;                        \
  }
#define DITTO_INPLACE_METHOD(name, params, expr)                       \
  Tensor& Tensor::name params {                                        \
    return detail::inplace_from(                                       \
        *this, #name, [&](const Tensor& x) { return ::ditto::expr; }); \
  }
// An in-place form the kernel writes directly (a binary kernel op's: its
// frame holds both operands).
#define DITTO_KERNEL_INPLACE_METHOD(name, params, expr) \
  Tensor& Tensor::name params {                         \
    return ::ditto::detail::expr;                       \
  }
// A body's in-place form is defined beside its body.
#define DITTO_BODY_INPLACE_METHOD(name, params)
#define DITTO_BODY_METHOD(ret, name, params)
#include "ditto/core/tensor_methods_declared.inc"
#undef DITTO_METHOD
#undef DITTO_INPLACE_METHOD
#undef DITTO_KERNEL_INPLACE_METHOD
#undef DITTO_BODY_INPLACE_METHOD
#undef DITTO_BODY_METHOD

} // namespace ditto
