#pragma once

// The op set as data: one record per public op (Note [Op records]). A record
// names the op as its frame, the trace, the registry and its errors do,
// states its determinism class, and generates the sample inputs from which
// the one op suite (tests/ops/op_suite_test.cpp), the fingerprint sweep,
// `ditto ops` and docs/determinism.md follow. An op that the user can call
// cannot run without its record: its frame raises InternalError.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto {

// How an op stands under use_deterministic_algorithms(true).
enum class Determinism {
  kAlways, // one implementation, deterministic on every path
  kVariants, // a fast path that is not, and a deterministic variant
  kAlert, // a nondeterministic path with no deterministic variant: raises
};
DITTO_API const char* determinism_name(Determinism d);

// One nondeterministic path of an op. entry is its name in the determinism
// registry and in alerts: the op's own, or the backward or path that is
// nondeterministic ("max_pool2d_backward", "matmul (split-K)").
struct NondeterministicPath {
  std::string entry = {};
  std::string reason = {};
  bool has_deterministic_variant = true;
  std::string dtypes = "floating";
  // The deterministic variant's time against the fast one's, where it was
  // measured (bench/, docs/benchmarks.md); empty if not.
  std::string cost = {};
};

// One call of an op on given inputs. call must not change its inputs unless
// the op is in place, where it writes inputs[0] (the suite passes copies).
struct Sample {
  std::string label = {};
  std::vector<Tensor> inputs = {};
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> call = {};
  // Inputs gradcheck leaves alone although they are floating (running
  // statistics, a target); integer and bool inputs are always left alone.
  std::vector<int> constant_inputs = {};
  // False where the sample sits on a kink of the op (a tie, a clamp edge)
  // that finite differences cannot see through.
  bool gradcheck = true;
  // R8 (batch invariance): the inputs whose dim 0 is a batch of independent
  // samples, every output's dim 0 being the same batch. The suite checks
  // that rows [lo, hi) of each output have the same bits when the call gets
  // only those rows of these inputs (one row alone, at any position, or a
  // smaller batch). Empty: the sample has no batch dim.
  std::vector<int> batch_inputs = {};
};

// What the suite asks a record for: samples of dtype, small ones (a few
// dozen elements, for gradcheck and emulated CPUs) or full-sized ones that
// cross the loops' chunk sizes.
struct SampleSpec {
  Dtype dtype = kFloat32;
  bool small = false;
};

struct DITTO_API OpRecord {
  std::string name = {};
  // The family the docs group it under (elementwise, reduction, shape,
  // factory, random, index, scatter, linalg, conv, pooling, normalization,
  // loss, activation, rnn, ...).
  std::string family = {};
  // The public callables: "ditto::add(a, b)", "Tensor::add(b)", ...
  std::vector<std::string> callables = {};
  // kAlways: why it is deterministic on every path.
  std::string deterministic_because = {};
  // kVariants / kAlert: its nondeterministic paths.
  std::vector<NondeterministicPath> nondeterministic = {};
  // The dtypes its samples cover (the suite runs each).
  std::vector<Dtype> dtypes = {kFloat32, kFloat64};
  std::function<std::vector<Sample>(const SampleSpec&)> samples = {};
  // Calls the op must refuse with a ditto::Error, leaving every input as
  // it was.
  std::function<std::vector<Sample>()> bad_samples = {};
  // Empty: differentiable, and every sample's float64 form passes
  // gradcheck. Otherwise why it has no gradient.
  std::string not_differentiable = {};
  // The op writes inputs[0] (its name ends in '_').
  bool inplace = false;
  // Draws from a generator: the suite reseeds before each call.
  bool random = false;
  // False for an op that returns a value, not tensors (equal, allclose):
  // its trace record has neither inputs nor outputs.
  bool returns_tensor = true;
  // The output holds uninitialized memory unless the deterministic mode
  // fills it (empty, resize_): the suite pins its bits with the mode on.
  bool uninitialized_output = false;
  // Takes sparse COO inputs (Note [Sparse inputs] in ops/detail/op_util.h);
  // OpScope refuses them for every other op.
  bool sparse = false;
  // PyTorch's class name for the backward node of the op's common form
  // (grad_fn()->name(): "ConvolutionBackward0"). Empty: derived from name
  // ("log1p" -> "Log1PBackward0"; ditto/autograd/node_name.cpp, which also
  // numbers the overloads PyTorch numbers, "MulBackward1" for x * 2).
  std::string grad_fn = {};
  // The devices beside the CPU whose kernels run the op (Note [Device
  // kernels are declared]): what check_devices admits, the device's op list
  // (device_ops), `ditto ops`. A declared op's come from its declaration.
  std::vector<DeviceType> devices = {};
  // The op takes tensors of two devices (to, copy_).
  bool mixes_devices = false;

  Determinism determinism() const;
};

// Registers a record. Built-in records register while the library loads
// (DITTO_OP_RECORDS); user ops through CustomOp (ditto/ops/custom.h).
// ValueError if the record is incomplete or its name is taken.
DITTO_API void register_op(OpRecord record);
// Every record, sorted by name. The pointers stay valid for the process.
DITTO_API std::vector<const OpRecord*> op_records();
// The record of name, or null.
DITTO_API const OpRecord* find_op_record(std::string_view name);

// The records as `ditto ops` prints them and docs/determinism.md holds
// them (markdown tables, one per determinism class).
DITTO_API std::string op_records_markdown();

namespace detail {

// While one lives, the records registered on this thread run on these
// devices too (those that name no devices of their own): a records file
// wraps the registrations of its ops with device kernels in one.
class DITTO_API DevicesScope {
 public:
  explicit DevicesScope(std::vector<DeviceType> devices);
  ~DevicesScope();
  DevicesScope(const DevicesScope&) = delete;
  DevicesScope& operator=(const DevicesScope&) = delete;

 private:
  std::vector<DeviceType> previous_;
};

// Registers records while the library loads: DITTO_OP_RECORDS(tag) { ... }
// opens a function whose body calls register_op. The functions run once,
// before the first lookup, so samples never run during static init.
struct RecordsRegistrar {
  explicit RecordsRegistrar(void (*fn)());
};
// Raises InternalError naming op if it has no record (OpScope calls this
// for every op the user called).
DITTO_API void require_op_record(const char* op);
} // namespace detail

} // namespace ditto

#define DITTO_OP_RECORDS(tag)                                              \
  static void ditto_op_records_##tag();                                    \
  static const ::ditto::detail::RecordsRegistrar ditto_op_registrar_##tag( \
      &ditto_op_records_##tag);                                            \
  static void ditto_op_records_##tag()
