#pragma once

// A GPT-style causal language model (issue 60), nanoGPT's shape with
// torch.nn's parts: token and position embeddings, pre-norm blocks of
// causal self-attention and a GELU MLP, a final LayerNorm and a linear head.
// `ditto train --model gpt` trains it on bytes of text; generate() decodes
// a batch of prompts of different lengths with a KV cache.
//
// R8 (docs/determinism.md): a sequence's logits have the same bits alone or
// in any batch, computed to t or to any T > t, and step by step through the
// cache. So generate() gives each prompt the tokens and log-probabilities
// it gets alone, and those log-probabilities equal a training-mode
// forward's on the same tokens (sequence_log_probs): the sampler's numbers
// are the trainer's, as on-policy RL needs.

#include <cstdint>
#include <optional>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/core/tensor.h"
#include "ditto/nn/module.h"
#include "ditto/nn/modules/container.h"
#include "ditto/nn/modules/dropout.h"
#include "ditto/nn/modules/embedding.h"
#include "ditto/nn/modules/linear.h"
#include "ditto/nn/modules/normalization.h"
#include "ditto/nn/options.h"
#include "ditto/random/generator.h"

namespace ditto::nn {

struct DITTO_API GPTOptions {
  DITTO_NN_ARG(int64_t, vocab_size) = 256; // bytes
  DITTO_NN_ARG(int64_t, block_size) = 64; // the longest sequence
  DITTO_NN_ARG(int64_t, n_layer) = 2;
  DITTO_NN_ARG(int64_t, n_head) = 4;
  DITTO_NN_ARG(int64_t, n_embd) = 64;
  DITTO_NN_ARG(double, dropout) = 0.0;
};

// The keys and values of the positions a GPT has seen, per layer, for a
// batch of sequences that may each be at another length: row r holds
// lengths()[r] positions. Made by GPT::make_cache for that model.
class DITTO_API GPTCache {
 public:
  int64_t batch() const {
    return int64_t(lengths_.size());
  }
  const std::vector<int64_t>& lengths() const {
    return lengths_;
  }
  // Forgets every position (the memory stays).
  void reset();

 private:
  friend class GPTImpl;
  const void* owner_ = nullptr; // the model it was made for
  int64_t capacity_ = 0;
  std::vector<int64_t> lengths_;
  std::vector<Tensor> keys_, values_; // per layer: [B, H, capacity, D]
};

class DITTO_API GPTBlockImpl : public Module {
 public:
  explicit GPTBlockImpl(const GPTOptions& options);
  // x [B, T, C]; mask an additive or bool attention mask broadcasting to
  // [B, 1, T, S], or undefined for the causal mask (S = T). keys/values:
  // with a cache, this layer's [B, H, capacity, D] and each row's first
  // position (the new keys are written there; S = the longest extent).
  Tensor forward(
      const Tensor& x,
      Tensor* cache_keys = nullptr,
      Tensor* cache_values = nullptr,
      const std::vector<int64_t>* starts = nullptr,
      const Tensor& mask = {}) const;

  GPTOptions options;
  LayerNorm ln_1{nullptr}, ln_2{nullptr};
  Linear c_attn{nullptr}, attn_proj{nullptr}, c_fc{nullptr}, mlp_proj{nullptr};
  Dropout resid_dropout{nullptr};
};
DITTO_MODULE(GPTBlock);

class DITTO_API GPTImpl : public Module {
 public:
  explicit GPTImpl(const GPTOptions& options = {});
  // tokens [B, T] (int64, T <= block_size) -> logits [B, T, vocab_size],
  // each position seeing itself and the ones before it.
  Tensor forward(const Tensor& tokens) const;
  // Incremental: tokens [B, T] continue each row of cache at its own
  // length; only the first counts[r] of row r's tokens are real (the rest
  // padding, never seen by later positions). Returns [B, T, vocab_size];
  // the cache's rows grow by counts[r] (all T without counts). ValueError
  // for a cache of another model or batch, or past block_size.
  Tensor forward(
      const Tensor& tokens,
      GPTCache& cache,
      const std::vector<int64_t>& counts = {}) const;
  GPTCache make_cache(int64_t batch) const;

  GPTOptions options;
  Embedding wte{nullptr}, wpe{nullptr};
  Dropout drop{nullptr};
  ModuleList h{nullptr};
  LayerNorm ln_f{nullptr};
  Linear lm_head{nullptr};
};
DITTO_MODULE(GPT);

struct DITTO_API GenerateOptions {
  DITTO_NN_ARG(int64_t, max_new_tokens) = 32;
  // false: greedy (the first of the largest logits).
  DITTO_NN_ARG(bool, do_sample) = false;
  DITTO_NN_ARG(double, temperature) = 1.0;
  DITTO_NN_ARG(int64_t, top_k) = 0; // 0: every token
  DITTO_NN_ARG(double, top_p) = 1.0; // nucleus; 1: every token
  // Sampling: one generator per prompt (prompt r draws only from its own,
  // one uniform a token), so a prompt samples alike alone or in a batch.
  DITTO_NN_ARG(std::vector<Generator>, generators) = {};
};

struct DITTO_API Generation {
  // Per prompt: the new tokens, and the log-probability of each under the
  // model (log_softmax of the logits, before temperature and filtering).
  std::vector<std::vector<int64_t>> tokens;
  std::vector<std::vector<float>> log_probs;
};

// Decodes max_new_tokens after each prompt (token lists of different
// lengths, each at least 1) in one batch: a prefill of the prompts, right-
// padded, then one cached step for every row at a time. Evaluation mode
// and no gradient inside; the module's mode is restored. ValueError for an
// empty prompt, a token outside the vocabulary, a prompt and its new tokens
// past block_size, or generators that do not match the prompts.
DITTO_API Generation generate(
    const GPT& model,
    const std::vector<std::vector<int64_t>>& prompts,
    const GenerateOptions& options);

// The trainer's view of the same numbers: the log-probability of each of
// tokens[b, t] for t >= 1 given the ones before it, from one forward of the
// whole [B, T] batch in the module's current mode (gradients recorded as
// usual). [B, T - 1] float32.
DITTO_API Tensor sequence_log_probs(const GPT& model, const Tensor& tokens);

} // namespace ditto::nn
