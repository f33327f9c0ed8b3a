// MicroBatchSum (micro_batch.h, docs/distributed.md).

#include "ditto/train/micro_batch.h"

#include <algorithm>
#include <string>

#include "ditto/autograd/graph.h"
#include "ditto/core/error.h"
#include "ditto/nn/functional/loss.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/shape_ops.h"
#include "ditto/random/generator.h"
#include "ditto/random/streams.h"

namespace ditto::train {
namespace {

constexpr const char* kOp = "MicroBatchSum";

// Sibling nodes of the micro-batch tree: [a, a + s) and [a + s, a + 2s)
// with a a multiple of 2s.
bool siblings(
    int64_t start,
    int64_t size,
    int64_t next_start,
    int64_t next_size) {
  return size == next_size && start % (2 * size) == 0 &&
      next_start == start + size;
}

// Pushes a node onto a stack of nodes in index order and merges the top two
// while they are siblings (left + right). Node has start, size, values.
template <typename Node, typename Add>
void push_node(std::vector<Node>& stack, Node node, const Add& add) {
  stack.push_back(std::move(node));
  while (stack.size() >= 2) {
    Node& left = stack[stack.size() - 2];
    const Node& right = stack.back();
    if (!siblings(left.start, left.size, right.start, right.size)) {
      break;
    }
    left.values = add(left.values, right.values);
    left.size += right.size;
    stack.pop_back();
  }
}

// The nodes left once all micro-batches are in, added left to right.
template <typename Node, typename Add>
auto fold(std::vector<Node>& stack, const Add& add) {
  auto total = std::move(stack[0].values);
  for (size_t i = 1; i < stack.size(); ++i) {
    total = add(total, stack[i].values);
  }
  return total;
}

std::vector<Tensor> sum_pair(
    const std::vector<Tensor>& a,
    const std::vector<Tensor>& b) {
  std::vector<Tensor> out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    out.push_back(add(a[i], b[i]));
  }
  return out;
}

struct Span {
  int64_t start = 0, size = 0;
  int values = 0; // unused: the shape of the tree alone
};

int64_t block_begin(int64_t k, int64_t p, int64_t r) {
  return k * r / p;
}

// What reduce_columns takes: one row per entry of `rows`, each row its
// tensors flattened end to end (one dtype; the same total size in every
// row), filled in place, one pass over the values.
Tensor flat_rows(const std::vector<std::vector<Tensor>>& rows, Dtype dt) {
  int64_t width = 0;
  for (const Tensor& t : rows.at(0)) {
    width += t.numel();
  }
  Tensor out = empty({int64_t(rows.size()), width}, dt);
  for (size_t i = 0; i < rows.size(); ++i) {
    int64_t at = 0;
    for (const Tensor& t : rows[i]) {
      out.select(0, int64_t(i)).narrow(0, at, t.numel()).copy_(t.reshape({-1}));
      at += t.numel();
    }
  }
  return out;
}

} // namespace

std::vector<std::pair<int64_t, int64_t>> tree_nodes(
    int64_t begin,
    int64_t end) {
  std::vector<Span> stack;
  for (int64_t j = begin; j < end; ++j) {
    push_node(stack, Span{j, 1, 0}, [](int, int) { return 0; });
  }
  std::vector<std::pair<int64_t, int64_t>> out;
  out.reserve(stack.size());
  for (const Span& s : stack) {
    out.emplace_back(s.start, s.size);
  }
  return out;
}

MicroBatchSum::MicroBatchSum(int64_t micro_batches, ProcessGroup group)
    : k_(micro_batches), group_(std::move(group)) {
  DITTO_CHECK(
      k_ >= 1,
      ValueError,
      kOp,
      "a step needs at least one micro-batch, got ",
      k_);
  const int64_t p = group_.world_size;
  DITTO_CHECK(
      p >= 1 && p <= k_,
      ValueError,
      kOp,
      "every process needs at least one of the ",
      k_,
      " micro-batches of a step, got ",
      p,
      " processes");
  DITTO_CHECK(
      p == 1 || group_.reduce_columns,
      ValueError,
      kOp,
      "a group of ",
      p,
      " processes needs reduce_columns");
  begin_ = block_begin(k_, p, group_.rank);
  end_ = block_begin(k_, p, group_.rank + 1);
  next_ = begin_;
}

void MicroBatchSum::add(int64_t j, std::vector<Tensor> values) {
  DITTO_CHECK(
      j == next_ && j < end_,
      ValueError,
      kOp,
      "expected micro-batch ",
      next_,
      " of this rank's [",
      begin_,
      ", ",
      end_,
      "), got ",
      j);
  DITTO_CHECK(
      stack_.empty() || values.size() == stack_[0].values.size(),
      ValueError,
      kOp,
      "micro-batch ",
      j,
      " gave ",
      values.size(),
      " values, the earlier ones ",
      stack_.empty() ? 0 : stack_[0].values.size());
  push_node(stack_, Node{j, 1, std::move(values)}, sum_pair);
  stats_.push_back(recorder_.take());
  ++next_;
}

std::vector<Tensor> MicroBatchSum::reduce() {
  DITTO_CHECK(
      next_ == end_,
      ValueError,
      kOp,
      "reduce() after ",
      next_ - begin_,
      " of this rank's ",
      end_ - begin_,
      " micro-batches");
  std::vector<Node> mine = std::move(stack_);
  stack_.clear();
  next_ = begin_;
  std::vector<Tensor> out = group_.world_size == 1
      ? fold(mine, sum_pair)
      : combine_ranks(std::move(mine));
  replay_running_stats();
  return out;
}

namespace {

using StatsEntry = nn::functional::RunningStatsRecorder::Entry;

// The replay of a chunk of the statistics' columns: column i of the
// layout (per entry: its channels' means, then their variances) starts
// from the running buffer's value and takes every micro-batch's update in
// index order (the rows), with the formulas batch_norm uses.
template <typename T>
Tensor replay_columns(
    const std::vector<StatsEntry>& layout,
    const Tensor& rows,
    int64_t first) {
  const int64_t k = rows.size(0), c = rows.size(1);
  Tensor out = empty({c}, rows.dtype());
  T* o = out.data_ptr<T>();
  const T* r = rows.data_ptr<T>();
  int64_t col = 0; // the layout's column where entry e starts
  for (const StatsEntry& e : layout) {
    const int64_t ch = e.running_mean.numel();
    const T* rm = e.running_mean.contiguous().data_ptr<T>();
    const T* rv = e.running_var.contiguous().data_ptr<T>();
    for (int64_t i = std::max(first, col);
         i < std::min(first + c, col + 2 * ch);
         ++i) {
      const int64_t local = i - col;
      const bool is_mean = local < ch;
      T v = is_mean ? rm[local] : rv[local - ch];
      for (int64_t j = 0; j < k; ++j) {
        const T x = r[j * c + (i - first)];
        v = is_mean ? nn::functional::updated_running_mean(v, x, e.momentum)
                    : nn::functional::updated_running_var(v, x, e.momentum);
      }
      o[i - first] = v;
    }
    col += 2 * ch;
  }
  return out;
}

} // namespace

// BatchNorm's running statistics of the step: every micro-batch's, in
// index order, from every rank (reduce_columns with the replay as the
// combine), then written into the buffers on every rank.
void MicroBatchSum::replay_running_stats() {
  std::vector<std::vector<StatsEntry>> stats = std::move(stats_);
  stats_.clear();
  if (stats.empty() || stats[0].empty()) {
    // No BatchNorm in training mode: nothing recorded here, nor (the same
    // model on every rank) on the others.
    for (const auto& s : stats) {
      DITTO_CHECK(
          s.empty(),
          ValueError,
          kOp,
          "BatchNorm ran in some micro-batches of this rank and not in "
          "others");
    }
    return;
  }
  const std::vector<StatsEntry>& layout = stats[0];
  const Dtype dt = layout[0].mean.dtype();
  for (size_t j = 0; j < stats.size(); ++j) {
    DITTO_CHECK(
        stats[j].size() == layout.size(),
        ValueError,
        kOp,
        "micro-batch ",
        begin_ + int64_t(j),
        " ran ",
        stats[j].size(),
        " BatchNorm forwards, micro-batch ",
        begin_,
        " ran ",
        layout.size());
    for (size_t e = 0; e < layout.size(); ++e) {
      const StatsEntry& a = stats[j][e];
      DITTO_CHECK(
          a.running_mean.is_same(layout[e].running_mean) &&
              a.momentum == layout[e].momentum && a.mean.dtype() == dt,
          ValueError,
          kOp,
          "BatchNorm forward ",
          e,
          " of micro-batch ",
          begin_ + int64_t(j),
          " is not the same layer, momentum and dtype as in micro-batch ",
          begin_);
    }
  }
  std::vector<std::vector<Tensor>> rows;
  for (const auto& s : stats) {
    std::vector<Tensor>& parts = rows.emplace_back();
    for (const StatsEntry& e : s) {
      parts.push_back(e.mean);
      parts.push_back(e.unbiased_var);
    }
  }
  Tensor mine = flat_rows(rows, dt);
  ProcessGroup::Combine replay = [&layout, dt](const Tensor& r, int64_t first) {
    return dt == kFloat64 ? replay_columns<double>(layout, r, first)
                          : replay_columns<float>(layout, r, first);
  };
  DITTO_CHECK(
      dt == kFloat32 || dt == kFloat64,
      TypeError,
      kOp,
      "BatchNorm statistics of dtype ",
      dtype_name(dt),
      " (float32 and float64 only)");
  Tensor total;
  if (group_.world_size == 1) {
    total = replay(mine, 0);
  } else {
    std::vector<int64_t> counts;
    for (int64_t r = 0; r < group_.world_size; ++r) {
      counts.push_back(
          block_begin(k_, group_.world_size, r + 1) -
          block_begin(k_, group_.world_size, r));
    }
    total = group_.reduce_columns(mine, counts, replay);
  }
  autograd::NoGradGuard no_grad;
  int64_t at = 0;
  for (const StatsEntry& e : layout) {
    const int64_t ch = e.running_mean.numel();
    Tensor(e.running_mean)
        .copy_(total.narrow(0, at, ch).view(e.running_mean.sizes()));
    Tensor(e.running_var)
        .copy_(total.narrow(0, at + ch, ch).view(e.running_var.sizes()));
    at += 2 * ch;
  }
}

// Every rank's nodes meet in the tree's upper levels. Each value is
// flattened into one row per node (a row per dtype group), and the rows of
// all ranks are combined column by column: the owner of a chunk of columns
// pushes every rank's nodes in index order, as one process pushing the
// micro-batches would have met them, and folds what is left.
std::vector<Tensor> MicroBatchSum::combine_ranks(std::vector<Node> mine) const {
  const int64_t p = group_.world_size;
  std::vector<std::pair<int64_t, int64_t>> nodes;
  std::vector<int64_t> counts;
  for (int64_t r = 0; r < p; ++r) {
    auto of_rank = tree_nodes(block_begin(k_, p, r), block_begin(k_, p, r + 1));
    counts.push_back(int64_t(of_rank.size()));
    nodes.insert(nodes.end(), of_rank.begin(), of_rank.end());
  }
  DITTO_CHECK(
      int64_t(mine.size()) == counts[size_t(group_.rank)],
      Error,
      kOp,
      "internal: ",
      mine.size(),
      " nodes on this rank, expected ",
      counts[size_t(group_.rank)]);
  const std::vector<Tensor>& first = mine[0].values;
  std::vector<Tensor> out(first.size());
  ProcessGroup::Combine combine = [&nodes](const Tensor& rows, int64_t) {
    struct Row {
      int64_t start = 0, size = 0;
      Tensor values;
    };
    std::vector<Row> pending;
    for (size_t i = 0; i < nodes.size(); ++i) {
      push_node(
          pending,
          Row{nodes[i].first, nodes[i].second, rows.select(0, int64_t(i))},
          [](const Tensor& a, const Tensor& b) { return ditto::add(a, b); });
    }
    return fold(
               pending,
               [](const Tensor& a, const Tensor& b) {
                 return ditto::add(a, b);
               })
        .contiguous();
  };
  std::vector<bool> done(first.size(), false);
  for (size_t i = 0; i < first.size(); ++i) {
    if (done[i]) {
      continue;
    }
    // The values of first[i]'s dtype, one row per node.
    const Dtype dt = first[i].dtype();
    std::vector<size_t> group;
    for (size_t v = i; v < first.size(); ++v) {
      if (first[v].dtype() == dt) {
        group.push_back(v);
        done[v] = true;
      }
    }
    std::vector<std::vector<Tensor>> rows;
    for (const Node& node : mine) {
      std::vector<Tensor>& parts = rows.emplace_back();
      for (size_t v : group) {
        parts.push_back(node.values[v]);
      }
    }
    Tensor total = group_.reduce_columns(flat_rows(rows, dt), counts, combine);
    int64_t offset = 0;
    for (size_t v : group) {
      const int64_t n = first[v].numel();
      out[v] = total.narrow(0, offset, n).view(first[v].sizes());
      offset += n;
    }
  }
  return out;
}

std::vector<Tensor> take_gradients(const std::vector<Tensor>& params) {
  std::vector<Tensor> grads;
  grads.reserve(params.size());
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    grads.push_back(g.defined() ? g : zeros_like(p));
    Tensor handle = p; // shares p's grad slot
    handle.mutable_grad() = Tensor();
  }
  return grads;
}

Tensor class_loss(const Tensor& logits, const Tensor& target) {
  if (logits.dim() <= 2) {
    return nn::functional::cross_entropy(logits, target);
  }
  // A class per position: every position is one more sample.
  return nn::functional::cross_entropy(
      logits.reshape({-1, logits.size(-1)}), target.reshape({-1}));
}

double micro_batch_step(
    MicroBatchSum& sum,
    const std::vector<Tensor>& params,
    const std::function<Tensor(const Tensor&)>& forward,
    const Tensor& data,
    const Tensor& target,
    uint64_t seed,
    int64_t step) {
  const int64_t k = sum.micro_batches();
  const int64_t rows = data.size(0);
  DITTO_CHECK(
      rows % k == 0,
      ValueError,
      "micro_batch_step",
      "a batch of ",
      rows,
      " rows does not split into ",
      k,
      " micro-batches");
  const int64_t m = rows / k;
  for (int64_t j = sum.begin(); j < sum.end(); ++j) {
    Generator g = Generator::philox(random::derive_seed(
        seed,
        "train.micro_batch:" + std::to_string(step) + ":" + std::to_string(j)));
    GeneratorGuard guard(g);
    Tensor loss = class_loss(
        forward(data.narrow(0, j * m, m)), target.narrow(0, j * m, m));
    loss.backward();
    std::vector<Tensor> values = take_gradients(params);
    values.push_back(loss.detach());
    sum.add(j, std::move(values));
  }
  std::vector<Tensor> total = sum.reduce();
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i];
    p.mutable_grad() = div(total[i], double(k));
  }
  return div(total.back(), double(k)).item<double>();
}

} // namespace ditto::train
