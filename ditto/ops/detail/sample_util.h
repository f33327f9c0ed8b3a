#pragma once

// Internal: what the op records' sample generators share (Note [Op records]
// in record.cpp). Values come from a fixed integer recurrence, never from
// a generator, so samples are the same in every process.

#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ditto/core/tensor.h"
#include "ditto/ops/record.h"

namespace ditto::detail::samples {

// Values in [offset - scale/2, offset + scale/2) from seed; integer dtypes
// truncate them, bool takes x > offset.
DITTO_API Tensor varied(
    const Shape& shape,
    Dtype dt,
    double scale,
    uint64_t seed,
    double offset = 0.0);
// Values in [-1, 1) (integer dtypes: varied's truncation).
inline Tensor unit_values(const Shape& shape, Dtype dt, uint64_t seed) {
  return varied(shape, dt, 2.0, seed);
}
// Values in [0.5, 1.5) * scale: away from zero (log, sqrt, div, pow).
DITTO_API Tensor
positive(const Shape& shape, Dtype dt, uint64_t seed, double scale = 1.0);
// n int64 indices in [0, mod), each value several times, scrambled.
DITTO_API Tensor indices(int64_t n, int64_t mod, uint64_t seed = 0);
// The same values as t in a non-contiguous layout (its last two dims stored
// transposed, or every other element of a 1-d buffer).
DITTO_API Tensor strided(const Tensor& t);

// The dtype lists the records declare.
inline const std::vector<Dtype> kFloating = {kFloat32, kFloat64};
inline const std::vector<Dtype> kFloatingAndInt64 = {
    kFloat32,
    kFloat64,
    kInt64};
inline const std::vector<Dtype> kNumeric = {kFloat32, kFloat64, kInt64, kInt32};
inline const std::vector<Dtype> kIntegral = {kInt64, kInt32, kBool};
inline const std::vector<Dtype> kEveryDtype =
    {kFloat32, kFloat64, kInt64, kInt32, kBool};
// Why an op that only moves elements is deterministic.
inline const char* kCopies =
    "each output element is copied from one input element";

// small ? s : large: full-sized samples cross the loops' chunk sizes.
inline int64_t size(const SampleSpec& spec, int64_t large, int64_t small) {
  return spec.small ? small : large;
}

using Call = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
using Fn1 = std::function<Tensor(const Tensor&)>;
using Fn2 = std::function<Tensor(const Tensor&, const Tensor&)>;
using Fn3 = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;

DITTO_API Call call1(Fn1 fn);
DITTO_API Call call2(Fn2 fn);
DITTO_API Call call3(Fn3 fn);

// Where an elementwise op's samples lie.
enum class Domain {
  kAny, // about [-3, 3)
  kPositive, // [0.5, 1.5)
  kUnit, // (-0.9, 0.9)
  kWide, // about [-20, 20): saturates tanh, sigmoid, exp's range
  kAboveOne, // [1.5, 2.5): acosh
};
DITTO_API Tensor
in_domain(const Shape& shape, Dtype dt, Domain d, uint64_t seed);

// Samples of an elementwise unary op: a long 1-d input, a 2-d one, its
// non-contiguous form, a zero-size one; small ones for gradcheck.
DITTO_API std::vector<Sample> unary(
    const SampleSpec& spec,
    Fn1 fn,
    Domain domain = Domain::kAny);
// Of a binary op: same shapes, broadcasting both ways, a non-contiguous
// operand, zero-size; b from domain_b.
DITTO_API std::vector<Sample> binary(
    const SampleSpec& spec,
    Fn2 fn,
    Domain domain_a = Domain::kAny,
    Domain domain_b = Domain::kAny);
// Of a reduction-like op over a matrix: the whole, each dim, rows longer
// than a reduction chunk, a non-contiguous input, zero-size (when
// zero_size, for ops that accept it).
DITTO_API std::vector<Sample> reduction(
    const SampleSpec& spec,
    Fn1 fn,
    bool zero_size = true,
    Domain domain = Domain::kAny);

// The in-place call fn(inputs[0]), returning inputs[0].
DITTO_API Call inplace1(std::function<void(Tensor&)> fn);
// The samples of an in-place op: its out-of-place samples whose first
// input has the result's shape (an in-place op cannot broadcast self).
DITTO_API std::vector<Sample> as_inplace(
    std::vector<Sample> samples,
    Call call);
// Registers the records of an elementwise unary op (family "elementwise",
// callables "ditto::name(args)" and, with method, "Tensor::name()") and,
// when inplace_fn is given, of its in-place form name_. not_differentiable:
// as OpRecord's. The declared ops' generated records call this.
DITTO_API void register_unary(
    const char* name,
    Fn1 fn,
    std::function<void(Tensor&)> inplace_fn,
    Domain domain,
    std::vector<Dtype> dtypes,
    const char* args = "a",
    bool method = true,
    const char* not_differentiable = "");

// The in-place call fn(inputs[0], inputs[1]), returning inputs[0].
DITTO_API Call inplace2(std::function<void(Tensor&, const Tensor&)> fn);
// Registers the record of an elementwise binary op: samples of the two
// operands from domains a and b, and, with scalar_fn, the op with a scalar
// operand (its Scalar overload) beside them; callables "ditto::name(a, b)"
// and, with method, "Tensor::name(b)".
DITTO_API void register_binary(
    const char* name,
    Fn2 fn,
    Domain a,
    Domain b,
    std::vector<Dtype> dtypes,
    const char* not_differentiable = "",
    Fn1 scalar_fn = {},
    bool method = true);
// The record of a binary op's in-place form self.name(b).
DITTO_API void register_binary_inplace(
    const char* name,
    std::function<void(Tensor&, const Tensor&)> fn,
    Domain a,
    Domain b,
    std::vector<Dtype> dtypes,
    const char* not_differentiable = "");

// A call's outputs as the suite takes them.
inline std::vector<Tensor> outputs(const Tensor& t) {
  return {t};
}
inline std::vector<Tensor> outputs(std::vector<Tensor> ts) {
  return ts;
}
inline std::vector<Tensor> outputs(const std::tuple<Tensor, Tensor>& ts) {
  return {std::get<0>(ts), std::get<1>(ts)};
}
inline std::vector<Tensor> outputs(const std::pair<Tensor, Tensor>& ts) {
  return {ts.first, ts.second};
}
// Registers the record of a declared op with declared samples: each call
// (label, function of the inputs) runs on inputs of the given shapes from
// domain, and the first also on a non-contiguous layout of them; the bad
// call is the first with an undefined input. The generated records of
// the composite ops call this.
DITTO_API void register_composite(
    const char* name,
    const char* family,
    std::vector<std::string> callables,
    std::vector<Shape> shapes,
    std::vector<std::pair<std::string, Call>> calls,
    Domain domain,
    std::vector<Dtype> dtypes,
    const char* not_differentiable,
    bool gradcheck,
    std::vector<int> batch_inputs = {});

// The sample with batch_inputs set (R8: Sample::batch_inputs).
inline Sample batched(Sample s, std::vector<int> inputs) {
  s.batch_inputs = std::move(inputs);
  return s;
}

// Bad calls every op with tensor inputs must refuse: an undefined tensor.
DITTO_API Sample undefined_input(Call call, int inputs);

// A one-callable record skeleton, for the common case.
DITTO_API std::vector<std::string> callables(
    const std::string& function,
    const std::string& method = {});
// "ditto::zeros(shape, dtype), ditto::zeros_like(t)": one callable each.
DITTO_API std::vector<std::string> split_callables(const std::string& list);

} // namespace ditto::detail::samples
