// `ditto train --model bag`: a bag of pixel tokens, the model of `ditto
// verify`'s demonstration (docs/verify.md). Each pixel's value is cut into
// 16 levels and becomes the token position x 16 + level; the image is the
// mean of its 784 tokens' embeddings, then a linear layer:
//   tokens -> nn.Embedding(12544, 32) -> mean over pixels -> relu
//          -> nn.Linear(32, 10)
// Many images share a token (the background), so the embedding's backward
// adds many rows into the same gradient row: with --no-deterministic and
// two threads or more, index_add_'s fast variant makes that sum's order,
// and its bits, vary from run to run.
#include "ditto/ditto.h"
#include "ditto/train/models.h"

namespace nn = ditto::nn;
using ditto::Tensor;

namespace {

constexpr int64_t kPixels = 28 * 28, kLevels = 16, kDim = 32;

struct PixelBag : nn::Module {
  PixelBag() : Module("PixelBag") {}
  nn::Embedding embed =
      register_module("embed", nn::Embedding(kPixels* kLevels, kDim));
  nn::Linear head = register_module("head", nn::Linear(kDim, 10));
  // Token offsets of the pixels: 0, 16, 32, ...
  Tensor offsets = ditto::arange(0, kPixels* kLevels, kLevels);

  Tensor forward(const Tensor& x) const {
    nn::ForwardScope scope(*this);
    const int64_t batch = x.size(0);
    // Normalized pixels lie in about [-0.82, 2.03] (pixel / 255 in [0, 1]):
    // 16 levels over that range, truncated toward zero after clamping.
    Tensor level = ditto::clamp(
                       (x.reshape({batch, kPixels}) + 0.82) * 5.5,
                       0.0,
                       double(kLevels) - 0.5)
                       .to(ditto::kInt64);
    Tensor tokens = level + offsets.to(x.device());
    Tensor pooled = embed->forward(tokens).mean({1});
    return head->forward(pooled.relu());
  }
};

} // namespace

DITTO_REGISTER_MODEL(
    bag,
    "pixel tokens (position x 16 levels), embedding 12544x32, mean, relu, "
    "linear 32->10",
    [] { return ditto::train::Model::of(std::make_shared<PixelBag>()); });
