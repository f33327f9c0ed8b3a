// The backward of the layers whose gradient scatters into the input (the
// ops PyTorch's reproducibility note lists for CUDA), 2 threads, determinism
// on and off: max_pool2d (kernel 2) and 4x bilinear upsampling of
// 32x64x56x56, bilinear grid_sample of that input at a 224x224 grid, and
// on a 3-d U-Net block max_pool3d (kernel 2) of 2x32x32^3 and 2x trilinear
// upsampling of 2x32x16^3.
// Each iteration runs the recorded backward once (retain_graph).
// bench/compare_nn_backward.py times PyTorch 1.13 on the same shapes.

#include <benchmark/benchmark.h>

#include <functional>

#include "ditto/ditto.h"

namespace {

namespace F = ditto::nn::functional;

ditto::Tensor forward(const std::string& op, const ditto::Tensor& x) {
  if (op == "max_pool2d") {
    return F::max_pool2d(x, {2});
  }
  if (op == "max_pool3d") {
    return F::max_pool3d(x, {2});
  }
  if (op == "upsample_trilinear") {
    return F::interpolate(
        x,
        F::InterpolateOptions().scale_factor({2.0}).mode(
            F::InterpolateMode::Trilinear));
  }
  if (op == "upsample_bilinear") {
    return F::interpolate(
        x,
        F::InterpolateOptions().scale_factor({4.0}).mode(
            F::InterpolateMode::Bilinear));
  }
  ditto::Tensor theta =
      ditto::tensor(std::vector<float>{0.9f, 0.1f, 0.05f, -0.1f, 0.95f, 0.02f})
          .view({1, 2, 3})
          .expand({32, 2, 3})
          .contiguous();
  ditto::Tensor grid = F::affine_grid(theta, {32, 64, 224, 224});
  return F::grid_sample(x, grid);
}

void backward(benchmark::State& state, const std::string& op, bool det) {
  ditto::set_num_threads(2);
  ditto::DeterministicGuard guard(det);
  ditto::manual_seed(0);
  const ditto::Shape sizes = op == "max_pool3d"
      ? ditto::Shape{2, 32, 32, 32, 32}
      : op == "upsample_trilinear" ? ditto::Shape{2, 32, 16, 16, 16}
                                   : ditto::Shape{32, 64, 56, 56};
  ditto::Tensor x = ditto::randn(sizes).requires_grad_();
  ditto::Tensor y = forward(op, x);
  ditto::Tensor g = ditto::randn(y.sizes());
  for (auto _ : state) {
    x.mutable_grad() = ditto::Tensor();
    y.backward(g, true);
    benchmark::DoNotOptimize(x.grad().raw_data());
  }
}

} // namespace

void register_nn_backward_benchmarks() {
  for (const char* op :
       {"max_pool2d",
        "upsample_bilinear",
        "grid_sample",
        "max_pool3d",
        "upsample_trilinear"}) {
    for (bool det : {true, false}) {
      const std::string name =
          std::string("nn_backward_") + op + (det ? "_det" : "_fast");
      benchmark::RegisterBenchmark(
          name.c_str(),
          [op = std::string(op), det](benchmark::State& s) {
            backward(s, op, det);
          })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
}
