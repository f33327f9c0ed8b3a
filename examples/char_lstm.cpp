// A character-level LSTM language model on a real text (by default the GPL
// that every Debian machine has): embedding -> 2-layer LSTM -> linear, Adam,
// a fixed seed. Prints the loss of every epoch, a sample generated with a
// seeded generator, and the fingerprint of the trained weights. The same
// output for any thread count and on every run. With --checkpoint DIR it
// saves its whole state (train::TrainState) after each epoch; --resume
// latest (or a checkpoint directory) continues from there with the bits of
// a run that never stopped.
//
//   ditto_char_lstm [--text FILE] [--epochs N] [--steps N] [--threads N]
//                   [--hidden N] [--seq N] [--batch N] [--sample N]
//                   [--checkpoint DIR] [--resume latest|DIR]

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ditto/ditto.h"

namespace {

namespace nn = ditto::nn;
using ditto::Tensor;

struct Args {
  std::string text = "/usr/share/common-licenses/GPL-3";
  std::string checkpoint, resume;
  int64_t epochs = 3, steps = 20, threads = 2, hidden = 128, seq = 64,
          batch = 32, sample = 200;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--text") {
      a.text = v;
    } else if (k == "--checkpoint") {
      a.checkpoint = v;
    } else if (k == "--resume") {
      a.resume = v;
    } else {
      const int64_t n = std::atoll(v.c_str());
      if (n <= 0) {
        std::fprintf(stderr, "%s needs a positive integer\n", k.c_str());
        std::exit(2);
      }
      if (k == "--epochs")
        a.epochs = n;
      else if (k == "--steps")
        a.steps = n;
      else if (k == "--threads")
        a.threads = n;
      else if (k == "--hidden")
        a.hidden = n;
      else if (k == "--seq")
        a.seq = n;
      else if (k == "--batch")
        a.batch = n;
      else if (k == "--sample")
        a.sample = n;
      else {
        std::fprintf(stderr, "unknown option %s\n", k.c_str());
        std::exit(2);
      }
    }
  }
  return a;
}

struct CharModel : nn::Module {
  CharModel(int64_t vocab, int64_t hidden)
      : Module("CharModel"),
        embed(register_module("embed", nn::Embedding(vocab, 32))),
        lstm(register_module(
            "lstm",
            nn::LSTM(nn::LSTMOptions(32, hidden)
                         .num_layers(2)
                         .batch_first(true)
                         .dropout(0.1)))),
        head(register_module("head", nn::Linear(hidden, vocab))) {}

  // Logits (B, T, vocab) and the final state.
  std::tuple<Tensor, nn::LSTMImpl::State> forward(
      const Tensor& ids,
      const std::optional<nn::LSTMImpl::State>& state = std::nullopt) {
    auto [out, st] = lstm->forward(embed->forward(ids), state);
    return {head->forward(out), st};
  }

  nn::Embedding embed;
  nn::LSTM lstm;
  nn::Linear head;
};

} // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  // The deterministic variants: the embedding's backward adds rows with
  // index_add_, whose fast variant adds from several threads in any order
  // (`ditto verify --threads 1,2 -- ditto_char_lstm` named it).
  ditto::use_deterministic_algorithms(true);
  std::ifstream in(args.text, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", args.text.c_str());
    return 1;
  }
  const std::string text(
      (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The vocabulary: the bytes the text uses, in byte order.
  std::vector<int64_t> index(256, -1);
  std::string chars;
  for (unsigned char c : text) {
    index[c] = 0;
  }
  for (int c = 0; c < 256; ++c) {
    if (index[c] == 0) {
      index[c] = int64_t(chars.size());
      chars += char(c);
    }
  }
  std::vector<int64_t> ids;
  for (unsigned char c : text) {
    ids.push_back(index[c]);
  }
  const int64_t V = int64_t(chars.size());
  const int64_t n = int64_t(ids.size());
  if (n <= args.seq + 1) {
    std::fprintf(stderr, "text too short\n");
    return 1;
  }
  const Tensor data = ditto::tensor(ids);
  std::printf(
      "text %s: %lld characters, %lld distinct\n",
      args.text.c_str(),
      (long long)n,
      (long long)V);

  ditto::set_num_threads(int(args.threads));
  ditto::manual_seed(0);
  CharModel model(V, args.hidden);
  ditto::optim::Adam opt(model.parameters(), ditto::optim::AdamOptions(2e-3));
  ditto::Generator batches;
  batches.manual_seed(1);
  // The batch generator joins the checkpoint as a registered generator.
  ditto::register_generator(
      "char_lstm.batches",
      [batches](uint64_t seed) mutable { batches.manual_seed(seed); },
      [batches] {
        Tensor st = batches.get_state();
        const auto* p = static_cast<const uint8_t*>(st.raw_data());
        return std::vector<uint8_t>(p, p + st.numel());
      },
      [batches](const std::vector<uint8_t>& bytes) mutable {
        Tensor st = ditto::empty({int64_t(bytes.size())}, ditto::kUInt8);
        std::copy(
            bytes.begin(), bytes.end(), static_cast<uint8_t*>(st.raw_data()));
        batches.set_state(st);
      });
  ditto::train::TrainState state(model, opt);
  // What must match for a resume: everything that changes the bits.
  const std::string settings = args.text + " " + std::to_string(args.hidden) +
      " " + std::to_string(args.seq) + " " + std::to_string(args.batch) + " " +
      std::to_string(args.steps);
  int64_t first_epoch = 1;
  if (!args.resume.empty()) {
    try {
      auto c = ditto::train::TrainState::read(args.resume, args.checkpoint);
      if (c.metadata().at("settings") != settings) {
        std::fprintf(
            stderr, "%s: trained with other settings\n", c.dir.c_str());
        return 1;
      }
      state.restore(c);
      first_epoch = std::stoll(c.metadata().at("epoch")) + 1;
      std::fprintf(stderr, "resumed from %s\n", c.dir.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 1;
    }
  }
  // Row b of a batch: the window at offsets[b] (inputs) and the next
  // characters (targets).
  const Tensor steps = ditto::arange(0.0, double(args.seq)).to(ditto::kInt64);
  for (int64_t epoch = first_epoch; epoch <= args.epochs; ++epoch) {
    model.train();
    double total = 0;
    for (int64_t s = 0; s < args.steps; ++s) {
      Tensor starts = ditto::randint(
          0, n - args.seq - 1, {args.batch, 1}, ditto::kInt64, batches);
      Tensor pos = ditto::add(starts, steps.unsqueeze(0));
      Tensor x = ditto::index_select(data, 0, pos.reshape({-1}))
                     .reshape({args.batch, args.seq});
      Tensor y = ditto::index_select(data, 0, ditto::add(pos, 1).reshape({-1}));
      auto [logits, st] = model.forward(x);
      Tensor loss = nn::functional::cross_entropy(logits.reshape({-1, V}), y);
      opt.zero_grad();
      loss.backward();
      nn::utils::clip_grad_norm_(model.parameters(), 1.0);
      opt.step();
      total += loss.item<double>();
    }
    std::printf("epoch %lld loss %.6f\n", (long long)epoch, total / args.steps);
    if (!args.checkpoint.empty()) {
      state.save(
          args.checkpoint,
          epoch,
          {{"epoch", std::to_string(epoch)}, {"settings", settings}});
    }
  }

  // A sample: start from "The ", then draw each next character from the
  // softmax of the logits with a seeded generator.
  model.eval();
  ditto::Generator sampler;
  sampler.manual_seed(2);
  std::string out = "The ";
  {
    ditto::autograd::NoGradGuard no_grad;
    std::vector<int64_t> prompt;
    for (unsigned char c : out) {
      prompt.push_back(index[c] < 0 ? 0 : index[c]);
    }
    auto [logits, state] = model.forward(
        ditto::tensor(prompt).reshape({1, int64_t(prompt.size())}));
    Tensor last = logits.select(1, logits.size(1) - 1);
    for (int64_t i = 0; i < args.sample; ++i) {
      Tensor probs = ditto::softmax(last.reshape({-1}), 0);
      const int64_t c =
          ditto::multinomial(probs, 1, false, sampler).item<int64_t>();
      out += chars[size_t(c)];
      auto [l2, s2] = model.forward(
          ditto::tensor(std::vector<int64_t>{c}).reshape({1, 1}), state);
      last = l2.select(1, 0);
      state = s2;
    }
  }
  std::printf("sample: %s\n", out.c_str());
  std::vector<Tensor> flat;
  for (const Tensor& p : model.parameters()) {
    flat.push_back(p.detach().reshape({-1}));
  }
  std::printf(
      "fingerprint %016llx\n",
      (unsigned long long)ditto::fingerprint(ditto::cat(flat, 0)));
  return 0;
}
