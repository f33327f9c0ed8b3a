// A byte-level GPT from C++: trains ditto::nn::GPT on a text with its own
// loop, then generates from a batch of prompts of different lengths and
// checks R8 (docs/determinism.md) on the way: each prompt's tokens and
// log-probabilities equal those of generating it alone, and equal a
// training-mode forward's on the same tokens (the on-policy RL property).
//   ditto_gpt [--text PATH] [--steps N] [--threads N]
// Exits 1 if a check fails.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ditto/data/text.h"
#include "ditto/ditto.h"
#include "ditto/nn/models/gpt.h"

using namespace ditto;
namespace F = ditto::nn::functional;

int main(int argc, char** argv) {
  std::string text_path = data::kDefaultTextRoot;
  int64_t steps = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--text") {
      text_path = v;
    } else if (k == "--steps") {
      steps = std::stoll(v);
    } else if (k == "--threads") {
      set_num_threads(std::stoi(v));
    } else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      return 2;
    }
  }
  const std::string text = data::read_text(text_path);
  const int64_t block = 64, batch = 16;
  auto windows = std::make_shared<data::ByteWindows>(text, block);
  std::printf(
      "%s: %zu bytes, %lld windows\n",
      text_path.c_str(),
      text.size(),
      (long long)windows->size());

  manual_seed(0);
  nn::GPT gpt(
      nn::GPTOptions().block_size(block).n_layer(2).n_head(4).n_embd(64));
  optim::AdamW opt(gpt->parameters(), optim::AdamWOptions(3e-3));
  data::DataLoader loader(
      windows,
      data::DataLoaderOptions()
          .batch_size(batch)
          .shuffle(true)
          .drop_last(true)
          .generator(Generator().manual_seed(1)));
  int64_t step = 0;
  while (step < steps) {
    for (const data::Batch& b : loader) {
      Tensor logits = gpt->forward(b.data);
      Tensor loss =
          F::cross_entropy(logits.reshape({-1, 256}), b.target.reshape({-1}));
      opt.zero_grad();
      loss.backward();
      opt.step();
      if (++step % 50 == 0 || step == steps) {
        std::printf(
            "step %lld loss %.4f\n", (long long)step, loss.item<double>());
      }
      if (step == steps) {
        break;
      }
    }
  }

  // Prompts of different lengths, one generator each.
  const std::vector<std::string> prompts{
      "The ", "This License ", "y", "you may "};
  std::vector<std::vector<int64_t>> tokens;
  std::vector<Generator> gens;
  for (size_t i = 0; i < prompts.size(); ++i) {
    tokens.emplace_back(prompts[i].begin(), prompts[i].end());
    gens.push_back(Generator::philox(100 + i));
  }
  auto options = [](std::vector<Generator> g) {
    return nn::GenerateOptions()
        .max_new_tokens(40)
        .do_sample(true)
        .top_k(40)
        .top_p(0.9)
        .generators(std::move(g));
  };
  const nn::Generation together = nn::generate(gpt, tokens, options(gens));
  bool ok = true;
  for (size_t r = 0; r < prompts.size(); ++r) {
    const nn::Generation alone =
        nn::generate(gpt, {tokens[r]}, options({Generator::philox(100 + r)}));
    const bool same = alone.tokens[0] == together.tokens[r] &&
        std::memcmp(
            alone.log_probs[0].data(),
            together.log_probs[r].data(),
            40 * sizeof(float)) == 0;
    // The trainer's log-probabilities of the same tokens (training mode;
    // dropout 0, so it draws nothing).
    std::vector<int64_t> seq = tokens[r];
    seq.insert(seq.end(), together.tokens[r].begin(), together.tokens[r].end());
    const Tensor lp =
        nn::sequence_log_probs(gpt, tensor(seq, Shape{1, int64_t(seq.size())}));
    const Tensor mine = lp.select(0, 0)
                            .narrow(0, int64_t(tokens[r].size()) - 1, 40)
                            .contiguous();
    const bool on_policy = std::memcmp(
                               mine.data_ptr<float>(),
                               together.log_probs[r].data(),
                               40 * sizeof(float)) == 0;
    std::string out(together.tokens[r].begin(), together.tokens[r].end());
    for (char& c : out) {
      c = (c >= 32 && c < 127) ? c : ' ';
    }
    std::printf(
        "[%s] -> [%s]  alone: %s, trainer's log-probs: %s\n",
        prompts[r].c_str(),
        out.c_str(),
        same ? "same bits" : "DIFFERENT",
        on_policy ? "same bits" : "DIFFERENT");
    ok = ok && same && on_policy;
  }
  std::printf(
      "fingerprint %s\n",
      train::hex64(train::weights_fingerprint(*gpt)).c_str());
  return ok ? 0 : 1;
}
