// `ditto train --model gpt`: a byte-level GPT (ditto::nn::GPT, nanoGPT's
// shape) on a text, by default the license texts of every Debian system:
// 64 positions, 2 pre-norm blocks of 4-head causal self-attention and a
// GELU MLP, 64 wide, dropout 0.1; 256 byte tokens.
#include "ditto/nn/models/gpt.h"
#include "ditto/ditto.h"
#include "ditto/train/models.h"

namespace nn = ditto::nn;

DITTO_REGISTER_MODEL(
    gpt,
    "byte-level GPT on a text: 64 positions, 2 blocks, 4 heads, 64 wide",
    [] {
      nn::GPT m(nn::GPTOptions()
                    .vocab_size(256)
                    .block_size(64)
                    .n_layer(2)
                    .n_head(4)
                    .n_embd(64)
                    .dropout(0.1));
      ditto::train::Model model{
          m.ptr(), [m](const ditto::Tensor& x) { return m->forward(x); }};
      model.text_block = 64;
      return model;
    });
