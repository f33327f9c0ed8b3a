#include "ditto/ops/detail/sample_util.h"

#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::detail::samples {

Tensor varied(
    const Shape& shape,
    Dtype dt,
    double scale,
    uint64_t seed,
    double offset) {
  int64_t n = 1;
  for (int64_t s : shape) {
    n *= s;
  }
  std::vector<double> v(static_cast<size_t>(n));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = offset + (double(s >> 11) / double(1ull << 53) - 0.5) * scale;
  }
  Tensor t = tensor(v, shape);
  if (dt == kBool) {
    return t.gt(offset);
  }
  return t.to(dt);
}

Tensor positive(const Shape& shape, Dtype dt, uint64_t seed, double scale) {
  return varied(shape, dt, scale, seed, scale);
}

Tensor indices(int64_t n, int64_t mod, uint64_t seed) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[size_t(i)] = (i * 37 + i / 7 + int64_t(seed) * 11) % mod;
  }
  return tensor(v);
}

Tensor strided(const Tensor& t) {
  if (t.dim() >= 2) {
    return t.transpose(-1, -2).contiguous().transpose(-1, -2);
  }
  // Every other element of a buffer twice as long.
  Tensor base = stack({t, zeros_like(t)}, 1);
  return base.select(1, 0);
}

Call call1(Fn1 fn) {
  return [fn = std::move(fn)](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{fn(in[0])};
  };
}
Call call2(Fn2 fn) {
  return [fn = std::move(fn)](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{fn(in[0], in[1])};
  };
}
Call call3(Fn3 fn) {
  return [fn = std::move(fn)](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{fn(in[0], in[1], in[2])};
  };
}

Tensor in_domain(const Shape& shape, Dtype dt, Domain d, uint64_t seed) {
  switch (d) {
    case Domain::kPositive:
      return positive(shape, dt, seed);
    case Domain::kUnit:
      return varied(shape, dt, 1.8, seed);
    case Domain::kWide:
      return varied(shape, dt, 40.0, seed);
    case Domain::kAboveOne:
      return add(positive(shape, dt, seed, 1.0), 1.0);
    case Domain::kAny:
      break;
  }
  return varied(shape, dt, 6.0, seed);
}

std::vector<Sample> unary(const SampleSpec& spec, Fn1 fn, Domain domain) {
  const Dtype dt = spec.dtype;
  Call call = call1(std::move(fn));
  // R8 (a): dim 0 of an elementwise op's input is a batch.
  if (spec.small) {
    Tensor m = in_domain({3, 4}, dt, domain, 1);
    return {
        batched({"matrix", {m}, call}, {0}),
        batched({"strided", {strided(m)}, call}, {0}),
        {"scalar", {in_domain({}, dt, domain, 2)}, call},
        {"empty", {in_domain({0, 3}, dt, domain, 3)}, call},
    };
  }
  // Two elementwise chunks and a bit; a matrix whose rows are not a
  // multiple of any vector width.
  Tensor x = in_domain({2 * 32768 + 4321}, dt, domain, 1);
  Tensor m = in_domain({37, 53}, dt, domain, 2);
  return {
      batched({"long", {x}, call}, {0}),
      batched({"matrix", {m}, call}, {0}),
      batched({"strided", {strided(m)}, call}, {0}),
      {"empty", {in_domain({0, 5}, dt, domain, 3)}, call},
  };
}

std::vector<Sample> binary(
    const SampleSpec& spec,
    Fn2 fn,
    Domain domain_a,
    Domain domain_b) {
  const Dtype dt = spec.dtype;
  Call call = call2(std::move(fn));
  const int64_t rows = size(spec, 37, 3), cols = size(spec, 53, 4);
  Tensor a = in_domain({rows, cols}, dt, domain_a, 1);
  Tensor b = in_domain({rows, cols}, dt, domain_b, 2);
  Tensor row = in_domain({cols}, dt, domain_b, 3);
  Tensor col = in_domain({rows, 1}, dt, domain_a, 4);
  // R8 (a): dim 0 is a batch of the inputs that have it (a broadcast row
  // is the same for every sample).
  std::vector<Sample> out = {
      batched({"same_shape", {a, b}, call}, {0, 1}),
      batched({"broadcast_row", {a, row}, call}, {0}),
      batched({"broadcast_both", {col, row}, call}, {0}),
      batched({"strided", {strided(a), b}, call}, {0, 1}),
      {"empty", {in_domain({0, cols}, dt, domain_a, 5), row}, call},
  };
  if (!spec.small) {
    out.push_back(batched(
        {"long",
         {in_domain({2 * 32768 + 4321}, dt, domain_a, 6),
          in_domain({2 * 32768 + 4321}, dt, domain_b, 7)},
         call},
        {0, 1}));
  }
  return out;
}

std::vector<Sample> reduction(
    const SampleSpec& spec,
    Fn1 fn,
    bool zero_size,
    Domain domain) {
  const Dtype dt = spec.dtype;
  Call call = call1(std::move(fn));
  const int64_t rows = size(spec, 67, 3), cols = size(spec, 811, 5);
  Tensor m = in_domain({rows, cols}, dt, domain, 1);
  std::vector<Sample> out = {
      {"matrix", {m}, call},
      {"strided", {strided(m)}, call},
  };
  if (!spec.small) {
    // Rows longer than a reduction chunk.
    out.push_back({"long_rows", {in_domain({3, 40000}, dt, domain, 2)}, call});
  }
  if (zero_size) {
    out.push_back({"empty", {in_domain({0, cols}, dt, domain, 3)}, call});
  }
  return out;
}

Sample undefined_input(Call call, int inputs) {
  std::vector<Tensor> in(static_cast<size_t>(inputs));
  for (int k = 1; k < inputs; ++k) {
    in[size_t(k)] = varied({2, 3}, kFloat32, 2.0, uint64_t(k));
  }
  return {"undefined", std::move(in), std::move(call)};
}

Call inplace1(std::function<void(Tensor&)> fn) {
  return [fn = std::move(fn)](const std::vector<Tensor>& in) {
    Tensor self = in[0];
    fn(self);
    return std::vector<Tensor>{self};
  };
}

std::vector<Sample> as_inplace(std::vector<Sample> samples, Call call) {
  std::vector<Sample> out;
  for (Sample& sm : samples) {
    if (sm.label == "broadcast_both") {
      continue;
    }
    sm.call = call;
    out.push_back(std::move(sm));
  }
  return out;
}

namespace {
const char* kElementwise =
    "each output element is computed from its own inputs by one kernel "
    "call, whatever the thread that runs it";
} // namespace

void register_unary(
    const char* name,
    Fn1 fn,
    std::function<void(Tensor&)> inplace_fn,
    Domain domain,
    std::vector<Dtype> dtypes,
    const char* args,
    bool method,
    const char* not_differentiable) {
  register_op({
      .name = name,
      .family = "elementwise",
      .callables = callables(
          std::string("ditto::") + name + "(" + args + ")",
          method ? std::string("Tensor::") + name + "()" : std::string()),
      .deterministic_because = kElementwise,
      .dtypes = dtypes,
      .samples =
          [fn, domain](const SampleSpec& spec) {
            return unary(spec, fn, domain);
          },
      .bad_samples =
          [fn] { return std::vector{undefined_input(call1(fn), 1)}; },
      .not_differentiable = not_differentiable,
  });
  if (!inplace_fn) {
    return;
  }
  const std::string iname = std::string(name) + "_";
  register_op({
      .name = iname,
      .family = "elementwise",
      .callables = {"Tensor::" + iname + "()"},
      .deterministic_because = kElementwise,
      .dtypes = dtypes,
      .samples =
          [inplace_fn, domain](const SampleSpec& spec) {
            return as_inplace(
                unary(
                    spec, [](const Tensor& t) { return t; }, domain),
                inplace1(inplace_fn));
          },
      .bad_samples =
          [inplace_fn] {
            // An expanded self would write an element twice.
            return std::vector<Sample>{
                {"expanded_self",
                 {varied({1, 3}, kFloat32, 2.0, 1).expand({4, 3})},
                 inplace1(inplace_fn)}};
          },
      .not_differentiable = not_differentiable,
      .inplace = true,
  });
}

void register_composite(
    const char* name,
    const char* family,
    std::vector<std::string> callables,
    std::vector<Shape> shapes,
    std::vector<std::pair<std::string, Call>> calls,
    Domain domain,
    std::vector<Dtype> dtypes,
    const char* not_differentiable,
    bool gradcheck,
    std::vector<int> batch_inputs) {
  const Call first = calls.front().second;
  const int arity = static_cast<int>(shapes.size());
  register_op({
      .name = name,
      .family = family,
      .callables = std::move(callables),
      .deterministic_because =
          "made of ops that are deterministic on every path",
      .dtypes = std::move(dtypes),
      .samples =
          [shapes, calls, domain, gradcheck, batch_inputs](
              const SampleSpec& spec) {
            std::vector<Tensor> in;
            for (size_t i = 0; i < shapes.size(); ++i) {
              in.push_back(in_domain(shapes[i], spec.dtype, domain, 3 + i));
            }
            std::vector<Sample> out;
            for (const auto& [label, call] : calls) {
              Sample s{label, in, call};
              s.gradcheck = gradcheck;
              s.batch_inputs = batch_inputs;
              out.push_back(std::move(s));
            }
            if (!in.empty() && in[0].dim() >= 2) {
              std::vector<Tensor> strided_in = in;
              strided_in[0] = strided(in[0]);
              Sample s{
                  "strided " + calls.front().first,
                  strided_in,
                  calls.front().second};
              s.gradcheck = gradcheck;
              s.batch_inputs = batch_inputs;
              out.push_back(std::move(s));
            }
            return out;
          },
      .bad_samples =
          [first, arity] {
            return std::vector<Sample>{undefined_input(first, arity)};
          },
      .not_differentiable = not_differentiable,
  });
}

Call inplace2(std::function<void(Tensor&, const Tensor&)> fn) {
  return [fn = std::move(fn)](const std::vector<Tensor>& in) {
    Tensor self = in[0];
    fn(self, in[1]);
    return std::vector<Tensor>{self};
  };
}

void register_binary(
    const char* name,
    Fn2 fn,
    Domain a,
    Domain b,
    std::vector<Dtype> dtypes,
    const char* not_differentiable,
    Fn1 scalar_fn,
    bool method) {
  register_op({
      .name = name,
      .family = "elementwise",
      .callables = callables(
          std::string("ditto::") + name + "(a, b)",
          method ? std::string("Tensor::") + name + "(b)" : std::string()),
      .deterministic_because = kElementwise,
      .dtypes = dtypes,
      .samples =
          [fn, a, b, scalar_fn](const SampleSpec& spec) {
            std::vector<Sample> out = binary(spec, fn, a, b);
            if (scalar_fn) {
              out.push_back(
                  {"scalar_operand",
                   {in_domain({size(spec, 301, 5)}, spec.dtype, a, 8)},
                   call1(scalar_fn)});
            }
            return out;
          },
      .bad_samples =
          [fn] {
            return std::vector<Sample>{
                undefined_input(call2(fn), 2),
                {"shapes_mismatch",
                 {varied({2, 3}, kFloat32, 2.0, 1),
                  varied({4}, kFloat32, 2.0, 2)},
                 call2(fn)}};
          },
      .not_differentiable = not_differentiable,
  });
}

void register_binary_inplace(
    const char* name,
    std::function<void(Tensor&, const Tensor&)> fn,
    Domain a,
    Domain b,
    std::vector<Dtype> dtypes,
    const char* not_differentiable) {
  register_op({
      .name = name,
      .family = "elementwise",
      .callables = {std::string("Tensor::") + name + "(b)"},
      .deterministic_because = kElementwise,
      .dtypes = dtypes,
      .samples =
          [fn, a, b](const SampleSpec& spec) {
            return as_inplace(
                binary(
                    spec,
                    [](const Tensor& x, const Tensor&) { return x; },
                    a,
                    b),
                inplace2(fn));
          },
      .bad_samples =
          [fn] {
            return std::vector<Sample>{
                {"self_needs_broadcast",
                 {varied({3}, kFloat32, 2.0, 1),
                  varied({2, 3}, kFloat32, 2.0, 2)},
                 inplace2(fn)},
                {"float_into_int",
                 {varied({3}, kInt64, 20.0, 1), varied({3}, kFloat32, 2.0, 2)},
                 inplace2(fn)}};
          },
      .not_differentiable = not_differentiable,
      .inplace = true,
  });
}

std::vector<std::string> callables(
    const std::string& function,
    const std::string& method) {
  std::vector<std::string> out = {function};
  if (!method.empty()) {
    out.push_back(method);
  }
  return out;
}

std::vector<std::string> split_callables(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at = list.find(", "); at != std::string::npos;
       at = list.find(", ", at + 2)) {
    const std::string next = list.substr(at + 2, 7);
    if (next == "ditto::" || next == "Tensor:") {
      out.push_back(list.substr(start, at - start));
      start = at + 2;
    }
  }
  out.push_back(list.substr(start));
  return out;
}

} // namespace ditto::detail::samples
