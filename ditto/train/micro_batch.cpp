// MicroBatchSum (micro_batch.h, docs/distributed.md).

#include "ditto/train/micro_batch.h"

#include <string>

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
  if (group_.world_size == 1) {
    return fold(mine, sum_pair);
  }
  return combine_ranks(std::move(mine));
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
  ProcessGroup::Combine combine = [&nodes](const Tensor& rows) {
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
    std::vector<Tensor> rows;
    for (const Node& node : mine) {
      std::vector<Tensor> parts;
      for (size_t v : group) {
        parts.push_back(node.values[v].reshape({-1}));
      }
      rows.push_back(cat(parts, 0));
    }
    Tensor total = group_.reduce_columns(stack(rows, 0), counts, combine);
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
    Tensor loss = nn::functional::cross_entropy(
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
