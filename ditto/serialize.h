#pragma once

// LibTorch's serialization of modules and optimizers (torch/serialize.h),
// writing safetensors files:
//   torch::save(model, "model.pt");        torch::load(model, "model.pt");
//   torch::save(optimizer, "opt.pt");      torch::load(optimizer, "opt.pt");
// A module's file is its state_dict (parameters and persistent buffers
// under their dotted names), so Python's safetensors reads it and
// load_state_dict takes it; an optimizer's is its state_dict. Writes are
// atomic and replace only regular files (docs/io.md); a load that fails (a
// missing key, a shape mismatch) changes nothing. Tensors and archives:
// ditto/io/archive.h. Above nn and optim, so that io sits below them.

#include <memory>
#include <string>
#include <type_traits>

#include "ditto/io/archive.h"
#include "ditto/nn/module.h"
#include "ditto/optim/optimizer.h"

namespace ditto {

DITTO_API void save(const nn::Module& module, const std::string& path);
DITTO_API void load(nn::Module& module, const std::string& path);
template <typename M>
void save(const nn::ModuleHolder<M>& module, const std::string& path) {
  save(static_cast<const nn::Module&>(*module), path);
}
template <typename M>
void load(nn::ModuleHolder<M>& module, const std::string& path) {
  load(static_cast<nn::Module&>(*module), path);
}
template <
    typename M,
    typename = std::enable_if_t<std::is_base_of_v<nn::Module, M>>>
void save(const std::shared_ptr<M>& module, const std::string& path) {
  save(static_cast<const nn::Module&>(*module), path);
}
template <
    typename M,
    typename = std::enable_if_t<std::is_base_of_v<nn::Module, M>>>
void load(std::shared_ptr<M>& module, const std::string& path) {
  load(static_cast<nn::Module&>(*module), path);
}
DITTO_API void save(const optim::Optimizer& optimizer, const std::string& path);
DITTO_API void load(optim::Optimizer& optimizer, const std::string& path);

} // namespace ditto
