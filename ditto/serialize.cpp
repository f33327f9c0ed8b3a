#include "ditto/serialize.h"

#include <string>

#include "ditto/io/safetensors.h"

namespace ditto {

void save(const nn::Module& module, const std::string& path) {
  io::save_safetensors(path, module.state_dict());
}

void load(nn::Module& module, const std::string& path) {
  module.load_state_dict(io::load_safetensors(path).tensors, /*strict=*/true);
}

void save(const optim::Optimizer& optimizer, const std::string& path) {
  io::save_safetensors(path, optimizer.state_dict());
}

void load(optim::Optimizer& optimizer, const std::string& path) {
  optimizer.load_state_dict(io::load_safetensors(path).tensors);
}

} // namespace ditto
