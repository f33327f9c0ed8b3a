#pragma once

#include <string>

#include "ditto/data/dataset.h"

namespace ditto::data {

// Where Debian's dataset-fashion-mnist package puts the four .gz files.
inline constexpr const char* kFashionMNISTRoot =
    "/usr/share/datasets/fashion-mnist";

// MNIST and Fashion-MNIST have 10 classes; a label file with another value
// is refused when the dataset opens.
inline constexpr int kMNISTClasses = 10;

// MNIST-format data (IDX files, gzipped or not) under root:
// train-images-idx3-ubyte[.gz] and train-labels-idx1-ubyte[.gz] (train),
// t10k-... (test). get(i) returns the image as float32 [1, H, W] in [0, 1]
// (pixel / 255, as torchvision's ToTensor) and the label as a 0-d int64
// tensor. A missing, truncated, corrupt or mismatched file raises
// ValueError naming the file and what is wrong. Loaded once, then
// read-only: safe to get() from several workers.
class DITTO_API MNIST : public Dataset {
 public:
  explicit MNIST(const std::string& root, bool train = true);
  int64_t size() const override;
  Example<> get(int64_t index) const override;
  // All images, uint8 [N, H, W], and labels, int64 [N].
  const Tensor& images() const {
    return images_;
  }
  const Tensor& labels() const {
    return labels_;
  }

 protected:
  MNIST(const std::string& root, bool train, const char* name);

 private:
  Tensor images_, labels_;
};

// Fashion-MNIST: the same format (root defaults to Debian's package).
class DITTO_API FashionMNIST : public MNIST {
 public:
  explicit FashionMNIST(
      const std::string& root = kFashionMNISTRoot,
      bool train = true);
};

// Reads one IDX file of unsigned bytes (gzipped or not) with the expected
// number of dims, as a uint8 tensor of its sizes. op names the caller in
// errors.
DITTO_API Tensor
read_idx(const std::string& path, int64_t expected_dims, const char* op);

} // namespace ditto::data
