#pragma once

// LibTorch's archives and its tensor serialization, writing safetensors
// files:
//   torch::save(tensor, "t.pt");           torch::load(tensor, "t.pt");
//   torch::save(std::vector<Tensor>{...}, "ts.pt");
//   serialize::OutputArchive a; a.write("w", w); a.save_to("a.pt");
// A tensor is stored as "0", a list of tensors as "0", "1", ... LibTorch's
// own files (TorchScript zip archives) are not read. Writes are atomic and
// replace only regular files (docs/io.md); a load that fails changes
// nothing. Modules and optimizers: ditto/serialize.h.

#include <string>
#include <vector>

#include "ditto/core/state_dict.h"
#include "ditto/core/tensor.h"

namespace ditto::serialize {

class DITTO_API OutputArchive {
 public:
  // Adds key (a nested archive's keys as "key.<its key>"). ValueError if
  // key is already written.
  void write(
      const std::string& key,
      const Tensor& tensor,
      bool is_buffer = false);
  void write(const std::string& key, const OutputArchive& nested);
  // Writes the archive as a safetensors file, atomically.
  void save_to(const std::string& filename) const;
  const StateDict& tensors() const {
    return tensors_;
  }

 private:
  StateDict tensors_;
};

class DITTO_API InputArchive {
 public:
  // Reads a safetensors file (ValueError naming the file if it is not one).
  void load_from(const std::string& filename);
  // The tensor under key: tensor takes its values in place when defined
  // with the same shape (a module's parameter: handles held elsewhere see
  // them), else becomes it. KeyError naming the key if absent.
  void read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  // False (and tensor unchanged) if key is absent.
  bool try_read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  // The keys under "key.", as an archive of their own.
  void read(const std::string& key, InputArchive& nested) const;
  std::vector<std::string> keys() const {
    return tensors_.keys();
  }
  const StateDict& tensors() const {
    return tensors_;
  }

 private:
  StateDict tensors_;
  std::string source_ = "<archive>";
};

} // namespace ditto::serialize

namespace ditto {

// ---- torch::save / torch::load of tensors
DITTO_API void save(const Tensor& tensor, const std::string& path);
DITTO_API void load(Tensor& tensor, const std::string& path);
DITTO_API void save(
    const std::vector<Tensor>& tensors,
    const std::string& path);
DITTO_API void load(std::vector<Tensor>& tensors, const std::string& path);

} // namespace ditto
