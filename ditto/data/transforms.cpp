#include "ditto/data/transforms.h"

#include "ditto/core/error.h"
#include "ditto/data/loader.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/random.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::data {

Transform Normalize(std::vector<double> mean, std::vector<double> std) {
  DITTO_CHECK(
      mean.size() == std.size() && !mean.empty(),
      ValueError,
      "Normalize",
      "expected as many means as stds, got ",
      mean.size(),
      " and ",
      std.size());
  for (double s : std) {
    DITTO_CHECK(s != 0.0, ValueError, "Normalize", "std must not be 0");
  }
  // The [C, 1, 1] operands in both floating dtypes, made once (read-only
  // afterwards, so workers share them): a sample pays only sub and div.
  const int64_t c = int64_t(mean.size());
  const Tensor m64 = tensor<double>(mean, {c, 1, 1});
  const Tensor s64 = tensor<double>(std, {c, 1, 1});
  const Tensor m32 = m64.to(kFloat32), s32 = s64.to(kFloat32);
  return [c, m64, s64, m32, s32](const Tensor& x) {
    DITTO_CHECK(
        x.dim() >= 3 && x.size(x.dim() - 3) == c,
        ValueError,
        "Normalize",
        "expected a [..., ",
        c,
        ", H, W] tensor, got ",
        shape_str(x.sizes()));
    DITTO_CHECK(
        is_floating(x.dtype()),
        TypeError,
        "Normalize",
        "expected a floating tensor, got ",
        x.dtype());
    const bool single = x.dtype() == kFloat32;
    return div(sub(x, single ? m32 : m64), single ? s32 : s64);
  };
}

Transform RandomCrop(int64_t size, int64_t padding) {
  DITTO_CHECK(
      size > 0 && padding >= 0,
      ValueError,
      "RandomCrop",
      "expected size > 0 and padding >= 0, got ",
      size,
      " and ",
      padding);
  return [size, padding](const Tensor& x) {
    DITTO_CHECK(
        x.dim() >= 2,
        ValueError,
        "RandomCrop",
        "expected a [..., H, W] tensor, got ",
        shape_str(x.sizes()));
    Tensor p = padding > 0 ? pad(x, {padding, padding, padding, padding}) : x;
    const int64_t h = p.size(p.dim() - 2), w = p.size(p.dim() - 1);
    DITTO_CHECK(
        h >= size && w >= size,
        ValueError,
        "RandomCrop",
        "crop size ",
        size,
        " is larger than the padded input ",
        shape_str(p.sizes()));
    if (h == size && w == size) {
      return p;
    }
    Generator g = sample_generator();
    const int64_t top =
        randint(0, h - size + 1, {1}, kInt64, g).item<int64_t>();
    const int64_t left =
        randint(0, w - size + 1, {1}, kInt64, g).item<int64_t>();
    return p.narrow(p.dim() - 2, top, size)
        .narrow(p.dim() - 1, left, size)
        .contiguous();
  };
}

Transform RandomHorizontalFlip(double p) {
  DITTO_CHECK(
      p >= 0.0 && p <= 1.0,
      ValueError,
      "RandomHorizontalFlip",
      "expected a probability in [0, 1], got ",
      p);
  return [p](const Tensor& x) {
    Generator g = sample_generator();
    if (rand({1}, kFloat32, g).item<float>() < p) {
      return flip(x, {x.dim() - 1});
    }
    return x;
  };
}

Transform Compose(std::vector<Transform> transforms) {
  return [transforms = std::move(transforms)](const Tensor& x) {
    Tensor y = x;
    for (const auto& t : transforms) {
      y = t(y);
    }
    return y;
  };
}

} // namespace ditto::data
