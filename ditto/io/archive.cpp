#include "ditto/io/archive.h"

#include <string>

#include "ditto/autograd/graph.h"
#include "ditto/core/error.h"
#include "ditto/io/safetensors.h"

namespace ditto::serialize {

void OutputArchive::write(
    const std::string& key,
    const Tensor& tensor,
    bool /*is_buffer*/) {
  DITTO_CHECK(
      !tensors_.contains(key),
      ValueError,
      "OutputArchive.write",
      "key \"",
      key,
      "\" is already written");
  DITTO_CHECK(
      tensor.defined(),
      ValueError,
      "OutputArchive.write",
      "undefined tensor for key \"",
      key,
      "\"");
  tensors_.insert(key, tensor.detach());
}

void OutputArchive::write(const std::string& key, const OutputArchive& nested) {
  for (const auto& [name, t] : nested.tensors()) {
    write(key + "." + name, t);
  }
}

void OutputArchive::save_to(const std::string& filename) const {
  io::save_safetensors(filename, tensors_);
}

void InputArchive::load_from(const std::string& filename) {
  tensors_ = io::load_safetensors(filename).tensors;
  source_ = filename;
}

bool InputArchive::try_read(
    const std::string& key,
    Tensor& tensor,
    bool /*is_buffer*/) {
  const Tensor* t = tensors_.find(key);
  if (t == nullptr) {
    return false;
  }
  if (tensor.defined() && tensor.sizes() == t->sizes() &&
      tensor.dtype() == t->dtype()) {
    autograd::NoGradGuard no_grad;
    tensor.copy_(*t);
  } else {
    tensor = *t;
  }
  return true;
}

void InputArchive::read(
    const std::string& key,
    Tensor& tensor,
    bool is_buffer) {
  DITTO_CHECK(
      try_read(key, tensor, is_buffer),
      KeyError,
      "InputArchive.read",
      "no tensor \"",
      key,
      "\" in ",
      source_);
}

void InputArchive::read(const std::string& key, InputArchive& nested) const {
  InputArchive out;
  const std::string prefix = key + ".";
  for (const auto& [name, t] : tensors_) {
    if (name.compare(0, prefix.size(), prefix) == 0) {
      out.tensors_.insert(name.substr(prefix.size()), t);
    }
  }
  out.source_ = source_;
  nested = std::move(out);
}

} // namespace ditto::serialize

namespace ditto {

void save(const Tensor& tensor, const std::string& path) {
  save(std::vector<Tensor>{tensor}, path);
}

void load(Tensor& tensor, const std::string& path) {
  std::vector<Tensor> tensors;
  load(tensors, path);
  DITTO_CHECK(
      tensors.size() == 1,
      ValueError,
      "load",
      path,
      " holds ",
      tensors.size(),
      " tensors, not one");
  tensor = tensors[0];
}

void save(const std::vector<Tensor>& tensors, const std::string& path) {
  serialize::OutputArchive archive;
  for (size_t i = 0; i < tensors.size(); ++i) {
    archive.write(std::to_string(i), tensors[i]);
  }
  archive.save_to(path);
}

void load(std::vector<Tensor>& tensors, const std::string& path) {
  const StateDict sd = io::load_safetensors(path).tensors;
  std::vector<Tensor> out;
  for (size_t i = 0; i < sd.size(); ++i) {
    const Tensor* t = sd.find(std::to_string(i));
    DITTO_CHECK(
        t != nullptr,
        ValueError,
        "load",
        path,
        " is not a list of tensors (no key \"",
        i,
        "\")");
    out.push_back(*t);
  }
  tensors = std::move(out);
}

} // namespace ditto
