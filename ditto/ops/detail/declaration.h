#pragma once

// The declared ops as the generator saw them (Note [One declaration per op]
// in record.cpp): what tests hold the generated surfaces against.

#include <string>
#include <utility>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/core/device.h"

namespace ditto::detail {

struct OpDeclaration {
  std::string name;
  // torch's schema syntax: "exp(Tensor self) -> Tensor".
  std::string schema;
  // "function, method, inplace".
  std::string variants;
  // "kernel unary Exp" or "decomposition <expression>".
  std::string implementation;
  // The file that declares it: "ditto/ops/elementwise/elementwise.ops.toml".
  std::string source;
  // The record that holds its forms: its name, or another's
  // (max_pool2d_with_indices: max_pool2d's).
  std::string record;
  // The records of the sparse COO layout's kernels its body calls for a
  // sparse operand (add.Tensor: sparse_add, sparse_add_).
  std::vector<std::string> sparse;
};

// Every declared op, in declaration order (generated: declared.cpp).
DITTO_API const std::vector<OpDeclaration>& op_declarations();

// The devices beside the CPU the declared ops run on (a shader code, or
// `devices`), in-place forms included: register_op adds them to the ops'
// records (Note [Device kernels are declared] in record.cpp).
DITTO_API const std::vector<std::pair<std::string, DeviceType>>&
declared_devices();

// One operator of PyTorch's Core ATen set and what answers it in ditto
// (ditto/ops/core_aten.toml): the op records, or a metadata read, or
// nothing yet and why.
struct CoreAtenOp {
  std::string name; // "aten.add.Tensor"
  std::string schema; // PyTorch's
  std::vector<std::string> ops; // the records that answer it
  std::string torch; // the call a PyTorch program makes
  std::string metadata; // not a computation: the read that answers it
  std::string missing; // no answer yet: why
};

// Every Core ATen operator, in the list's order (generated: declared.cpp).
DITTO_API const std::vector<CoreAtenOp>& core_aten_ops();

// An op whose PyTorch kernel is nondeterministic on the CPU or CUDA, and the
// ditto records that compute it (ditto/ops/pytorch_nondeterministic.toml).
struct PytorchNondeterministicOp {
  std::string torch; // the call
  std::string where; // where PyTorch's kernel is nondeterministic, and when
  std::vector<std::string> ops; // ditto's records
};

// Every such op (generated: declared.cpp).
DITTO_API const std::vector<PytorchNondeterministicOp>&
pytorch_nondeterministic_ops();

} // namespace ditto::detail
