#pragma once

// The declared ops as the generator saw them (Note [One declaration per op]
// in record.cpp): what tests hold the generated surfaces against.

#include <string>
#include <vector>

#include "ditto/core/api.h"

namespace ditto::detail {

struct OpDeclaration {
  std::string name;
  // torch's schema syntax: "exp(Tensor self) -> Tensor".
  std::string schema;
  // "function, method, inplace".
  std::string variants;
  // "kernel unary Exp" or "decomposition <expression>".
  std::string implementation;
  // The file that declares it: "ditto/ops/elementwise.ops.toml".
  std::string source;
};

// Every declared op, in declaration order (generated: declared.cpp).
DITTO_API const std::vector<OpDeclaration>& op_declarations();

} // namespace ditto::detail
