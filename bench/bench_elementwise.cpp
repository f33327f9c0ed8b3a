// Elementwise ops and a full reduction on contiguous float32 tensors, at the
// sizes and thread counts bench/compare.py times in PyTorch. Case names are
// "<op>/n:<elements>/threads:<threads>/real_time"; compare.py parses them.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ditto/ditto.h"

namespace {

using ditto::Tensor;

// Unary ops ignore b.
using OpFn = Tensor (*)(const Tensor& a, const Tensor& b);

struct OpCase {
  const char* name;
  int num_inputs;
  int arrays_moved; // float32 arrays of n elements read plus written
  OpFn fn;
};

const OpCase kOps[] = {
    {"add",
     2,
     3,
     [](const Tensor& a, const Tensor& b) { return ditto::add(a, b); }},
    {"exp", 1, 2, [](const Tensor& a, const Tensor&) { return ditto::exp(a); }},
    {"sigmoid",
     1,
     2,
     [](const Tensor& a, const Tensor&) { return ditto::sigmoid(a); }},
    {"sum", 1, 1, [](const Tensor& a, const Tensor&) { return ditto::sum(a); }},
    {"erf", 1, 2, [](const Tensor& a, const Tensor&) { return ditto::erf(a); }},
    {"gelu",
     1,
     2,
     [](const Tensor& a, const Tensor&) {
       return ditto::nn::functional::gelu(a);
     }},
    {"pow2",
     1,
     2,
     [](const Tensor& a, const Tensor&) { return ditto::pow(a, 2); }},
    {"pow3",
     1,
     2,
     [](const Tensor& a, const Tensor&) { return ditto::pow(a, 3); }},
    {"pow_half",
     1,
     2,
     [](const Tensor& a, const Tensor&) { return ditto::pow(a, 0.5); }},
    // The mask paths (attention masks, filtering), the comparison included
    // on both sides; a > 0 is true at no pattern a branch predictor learns.
    {"where_mask",
     2,
     3,
     [](const Tensor& a, const Tensor& b) {
       return ditto::where(ditto::gt(a, 0.0), a, b);
     }},
    {"masked_select",
     1,
     2,
     [](const Tensor& a, const Tensor&) {
       return ditto::masked_select(a, ditto::gt(a, 0.0));
     }},
    {"nonzero",
     1,
     2,
     [](const Tensor& a, const Tensor&) {
       return ditto::nonzero(ditto::gt(a, 0.0));
     }},
};

const int64_t kSizes[] = {int64_t(1) << 20, int64_t(1) << 24};
const int kThreads[] = {1, 2};

// Values in [-4, 4) from a multiplicative hash of the index: not constant,
// no overflow in exp. compare.py builds the same values for PyTorch.
Tensor make_input(int64_t n, uint32_t salt) {
  Tensor t = ditto::empty({n}, ditto::kFloat32);
  float* p = t.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    uint32_t h = uint32_t(i) * 2654435761u + salt * 0x9E3779B9u;
    p[i] = float(double(h) / 4294967296.0 * 8.0 - 4.0);
  }
  return t;
}

void run_op(benchmark::State& state, const OpCase& op) {
  const int64_t n = state.range(0);
  ditto::set_num_threads(int(state.range(1)));
  // Inputs are made outside the timed loop; the output is allocated inside
  // it, as out-of-place ops do.
  Tensor a = make_input(n, 1);
  Tensor b = op.num_inputs > 1 ? make_input(n, 2) : Tensor();
  for (auto _ : state) {
    Tensor out = op.fn(a, b);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(
      state.iterations() * n * int64_t(sizeof(float)) * op.arrays_moved);
}

std::string join_capabilities(const std::vector<ditto::CpuCapability>& caps) {
  std::string s;
  for (ditto::CpuCapability c : caps) {
    if (!s.empty()) {
      s += ",";
    }
    s += ditto::cpu_capability_name(c);
  }
  return s;
}

} // namespace

void register_random_benchmarks(); // bench_random.cpp
void register_index_benchmarks(); // bench_index.cpp
void register_data_benchmarks(); // bench_data.cpp
void register_linalg_benchmarks(); // bench_linalg.cpp
void register_conv_benchmarks(); // bench_conv.cpp
void register_autograd_benchmarks(); // bench_autograd.cpp
void register_train_benchmarks(); // bench_train.cpp
void register_gpt_benchmarks(); // bench_gpt.cpp
void register_nn_backward_benchmarks(); // bench_nn_backward.cpp
void register_sparse_benchmarks(); // bench_sparse.cpp

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  benchmark::AddCustomContext("ditto_version", ditto::version());
  benchmark::AddCustomContext(
      "ditto_cpu_capability",
      std::string(ditto::cpu_capability_name(ditto::get_cpu_capability())));
  benchmark::AddCustomContext(
      "ditto_compiled_capabilities",
      join_capabilities(ditto::compiled_cpu_capabilities()));

  for (const OpCase& op : kOps) {
    auto* b = benchmark::RegisterBenchmark(
        op.name, [&op](benchmark::State& state) { run_op(state, op); });
    b->ArgNames({"n", "threads"});
    for (int64_t n : kSizes) {
      for (int t : kThreads) {
        b->Args({n, t});
      }
    }
    b->UseRealTime()->Unit(benchmark::kMicrosecond);
  }

  register_random_benchmarks();
  register_index_benchmarks();
  register_data_benchmarks();
  register_linalg_benchmarks();
  register_conv_benchmarks();
  register_autograd_benchmarks();
  register_train_benchmarks();
  register_gpt_benchmarks();
  register_nn_backward_benchmarks();
  register_sparse_benchmarks();

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
