// The one op suite: every op record's samples (Note [Op records] in
// ditto/ops/record.cpp) through the reproducibility contract. For every op
// and sample: the same bits at 1, 2, 3 and 8 threads (3 in the sanitizer
// builds: test_sanitized) and under every CPU capability this
// machine runs (the reference: the scalar kernels on one
// thread, under the deterministic mode for ops with variants, so the
// deterministic variant equals the serial loop); the fast variant within
// tolerance of it; float64 gradcheck; a node recorded when an input
// requires grad; the trace reporting the op under its own name with its
// inputs and outputs; bad inputs refused with every input unchanged. Tests
// are parameterized by family; each failure names the op, dtype and sample.

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "ditto/ditto.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/record.h"
#include "tests/cpu_caps.h"
#include "tests/record_util.h"

using namespace ditto;
using namespace ditto::test;

namespace {

std::vector<std::string> families() {
  std::set<std::string> f;
  for (const OpRecord* r : op_records()) {
    f.insert(r->family);
  }
  return {f.begin(), f.end()};
}

std::vector<const OpRecord*> family_records(const std::string& family) {
  std::vector<const OpRecord*> out;
  for (const OpRecord* r : op_records()) {
    if (r->family == family) {
      out.push_back(r);
    }
  }
  return out;
}

std::string where(const OpRecord& r, Dtype dt, const Sample& s) {
  return r.name + " " + std::string(dtype_name(dt)) + " sample '" + s.label +
      "'";
}

class OpSuite : public ::testing::TestWithParam<std::string> {
 protected:
  void TearDown() override {
    set_num_threads(threads_);
    set_cpu_capability(cap_);
  }
  int threads_ = get_num_threads();
  CpuCapability cap_ = get_cpu_capability();
};

// The variant the bits are pinned to: the deterministic one for ops with
// variants (alert ops have none, and their bits are not promised).
bool pinned(const OpRecord& r) {
  return r.determinism() != Determinism::kAlert;
}

// R8 (a), batch invariance: a sample's outputs have the same bits when it
// is computed alone, in a smaller batch, or at any position of its batch
// (the samples that mark their batch inputs: Sample::batch_inputs).
TEST_P(OpSuite, ASampleHasTheSameBitsAloneOrInAnyBatch) {
  for (const OpRecord* r : family_records(GetParam())) {
    if (r->random || r->inplace) {
      continue; // draws depend on the position in the stream
    }
    DeterministicGuard pinned_variant(pinned(*r));
    for (Dtype dt : r->dtypes) {
      for (bool small : {true, false}) {
        for (const Sample& s : r->samples({dt, small})) {
          if (s.batch_inputs.empty()) {
            continue;
          }
          const int64_t n = s.inputs[size_t(s.batch_inputs[0])].size(0);
          if (n < 2) {
            continue;
          }
          const std::vector<Tensor> full = s.call(copies(s.inputs));
          // One row alone (first, middle, last), the first half, all but
          // the first row.
          const std::pair<int64_t, int64_t> windows[] = {
              {0, 1}, {n / 2, n / 2 + 1}, {n - 1, n}, {0, (n + 1) / 2}, {1, n}};
          for (const auto& [lo, hi] : windows) {
            std::vector<Tensor> in = copies(s.inputs);
            for (int i : s.batch_inputs) {
              in[size_t(i)] = in[size_t(i)].narrow(0, lo, hi - lo);
            }
            const std::vector<Tensor> part = s.call(in);
            ASSERT_EQ(part.size(), full.size()) << where(*r, dt, s);
            for (size_t k = 0; k < full.size(); ++k) {
              if (!full[k].defined()) {
                continue;
              }
              const Tensor want = full[k].narrow(0, lo, hi - lo);
              EXPECT_TRUE(
                  part[k].sizes() == want.sizes() &&
                  fingerprint(part[k]) == fingerprint(want))
                  << where(*r, dt, s) << (small ? " (small)" : "") << ": rows ["
                  << lo << ", " << hi << ") of output " << k
                  << " differ from the batch's";
            }
          }
        }
      }
    }
  }
}

TEST_P(OpSuite, SameBitsAtEveryThreadCountAndCapability) {
  const auto caps = test::testable_capabilities();
  for (const OpRecord* r : family_records(GetParam())) {
    if (!pinned(*r)) {
      continue;
    }
    DeterministicGuard det(
        r->determinism() == Determinism::kVariants || r->uninitialized_output);
    for (Dtype dt : r->dtypes) {
      for (const Sample& s : r->samples({dt, false})) {
        set_cpu_capability(CpuCapability::Scalar);
        set_num_threads(1);
        const auto ref = prints(run(*r, s));
        for (CpuCapability cap : caps) {
          set_cpu_capability(cap);
          // Sanitizer builds: each capability at 3 threads against the
          // one-thread scalar reference (ASan's and UBSan's business is
          // memory and UB, which the other counts add nothing to).
          for (int threads : test::test_sanitized()
                   ? std::vector<int>{3}
                   : test::test_thread_counts()) {
            set_num_threads(threads);
            EXPECT_EQ(prints(run(*r, s)), ref)
                << where(*r, dt, s) << " differs with "
                << cpu_capability_name(cap) << " and " << threads << " threads";
          }
        }
      }
    }
  }
}

// The fast variant, where there is one, is within a float tolerance of the
// deterministic one (it adds in another order, never computes another
// thing).
TEST_P(OpSuite, FastVariantIsCloseToTheDeterministicOne) {
  for (const OpRecord* r : family_records(GetParam())) {
    if (r->determinism() != Determinism::kVariants) {
      continue;
    }
    set_num_threads(3);
    for (Dtype dt : r->dtypes) {
      for (const Sample& s : r->samples({dt, false})) {
        std::vector<Tensor> det;
        {
          DeterministicGuard on(true);
          det = run(*r, s);
        }
        DeterministicGuard off(false);
        const std::vector<Tensor> fast = run(*r, s);
        ASSERT_EQ(fast.size(), det.size()) << where(*r, dt, s);
        for (size_t k = 0; k < det.size(); ++k) {
          if (det[k].defined() && is_floating(det[k].dtype())) {
            EXPECT_TRUE(allclose(fast[k], det[k], 1e-4, 1e-5))
                << where(*r, dt, s) << " output " << k;
          } else if (det[k].defined()) {
            EXPECT_TRUE(equal(fast[k], det[k]))
                << where(*r, dt, s) << " output " << k;
          }
        }
      }
    }
  }
}

TEST_P(OpSuite, GradcheckInFloat64) {
  for (const OpRecord* r : family_records(GetParam())) {
    if (!r->not_differentiable.empty()) {
      continue;
    }
    DeterministicGuard det(true);
    for (const Sample& s : r->samples({kFloat64, true})) {
      if (!s.gradcheck) {
        continue;
      }
      std::vector<Tensor> in = leaves(s, true);
      bool any = false;
      for (const Tensor& t : in) {
        any = any || (t.defined() && t.requires_grad() && t.numel() > 0);
      }
      if (!any) {
        continue;
      }
      auto res = autograd::gradcheck(
          [&](const std::vector<Tensor>& x) {
            return flat_floating(call_differentiably(*r, s, x));
          },
          in);
      EXPECT_TRUE(res.ok) << where(*r, kFloat64, s) << ": " << res.report;
    }
  }
}

TEST_P(OpSuite, RecordsANodeWhenAnInputRequiresGrad) {
  for (const OpRecord* r : family_records(GetParam())) {
    if (!r->not_differentiable.empty()) {
      continue;
    }
    for (const Sample& s : r->samples({kFloat32, true})) {
      std::vector<Tensor> in = leaves(s, true);
      std::vector<Tensor> out = call_differentiably(*r, s, in);
      bool recorded = false;
      for (const Tensor& t : out) {
        recorded = recorded || (t.defined() && t.requires_grad());
      }
      EXPECT_TRUE(recorded)
          << where(*r, kFloat32, s) << ": no output requires grad";
      {
        autograd::NoGradGuard no_grad;
        std::vector<Tensor> plain = call_differentiably(*r, s, leaves(s, true));
        for (const Tensor& t : plain) {
          EXPECT_FALSE(t.defined() && t.requires_grad())
              << where(*r, kFloat32, s) << ": recorded under no_grad";
        }
      }
    }
  }
}

// Every op the user called is reported under its record's name, with its
// inputs and outputs; every op the trace shows has a record.
TEST_P(OpSuite, TraceReportsTheOpUnderItsName) {
  struct Seen {
    std::string op;
    size_t inputs;
    std::vector<uint64_t> outputs;
  };
  for (const OpRecord* r : family_records(GetParam())) {
    // The hook fingerprints outputs: empty()'s must be filled (uninitialized
    // bools are not even valid values).
    DeterministicGuard filled(r->uninitialized_output);
    for (Dtype dt : r->dtypes) {
      for (const Sample& s : r->samples({dt, true})) {
        std::vector<Seen> seen;
        std::vector<Tensor> in = copies(s.inputs);
        if (r->random) {
          manual_seed(20261126);
        }
        trace::set_hook([&](const trace::Event& e) {
          seen.push_back(
              {std::string(e.op), e.inputs.size(), prints(e.outputs)});
        });
        std::vector<Tensor> out;
        try {
          out = s.call(in);
        } catch (...) {
          trace::set_hook({});
          throw;
        }
        trace::set_hook({});
        std::vector<const Seen*> mine;
        for (const Seen& e : seen) {
          EXPECT_NE(find_op_record(e.op), nullptr)
              << where(*r, dt, s) << ": traced op '" << e.op
              << "' has no record";
          if (e.op == r->name) {
            mine.push_back(&e);
          }
        }
        ASSERT_FALSE(mine.empty())
            << where(*r, dt, s) << ": the trace never reported " << r->name;
        // A sparse op's samples build its sparse operand inside the call
        // and return strided results: the op's own record sees other
        // inputs and outputs.
        if (!r->returns_tensor || r->sparse) {
          continue;
        }
        // Every tensor the op's frame is given, an undefined optional one
        // (no bias) included.
        const size_t inputs_given = s.inputs.size();
        ASSERT_FALSE(out.empty()) << where(*r, dt, s);
        const uint64_t first = out[0].defined() ? fingerprint(out[0]) : 0;
        // One of the op's records has the sample's inputs (and more where
        // a scalar operand is a 0-d input of its own) and its result.
        bool found = false;
        for (const Seen* e : mine) {
          found = found ||
              (e->inputs >= inputs_given &&
               std::find(e->outputs.begin(), e->outputs.end(), first) !=
                   e->outputs.end());
        }
        EXPECT_TRUE(found) << where(*r, dt, s) << ": no trace record of "
                           << r->name << " has the sample's " << inputs_given
                           << " inputs and its result";
      }
    }
  }
}

TEST_P(OpSuite, BadInputIsRefusedAndChangesNothing) {
  for (const OpRecord* r : family_records(GetParam())) {
    if (!r->bad_samples) {
      continue;
    }
    for (const Sample& s : r->bad_samples()) {
      const auto before = prints(s.inputs);
      EXPECT_THROW(s.call(s.inputs), Error)
          << r->name << " bad sample '" << s.label << "'";
      EXPECT_EQ(prints(s.inputs), before)
          << r->name << " bad sample '" << s.label << "' changed an input";
    }
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      c = '_';
    }
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(
    Family,
    OpSuite,
    ::testing::ValuesIn(families()),
    test_name);

TEST(OpRecords, AnOpWithoutARecordCannotRun) {
  EXPECT_THROW(
      { detail::OpScope scope("op_that_has_no_record"); }, InternalError);
  EXPECT_EQ(find_op_record("op_that_has_no_record"), nullptr);
  ASSERT_NE(find_op_record("add"), nullptr);
  EXPECT_EQ(find_op_record("add")->family, "elementwise");
}

TEST(OpRecords, EveryRecordIsComplete) {
  for (const OpRecord* r : op_records()) {
    EXPECT_FALSE(r->callables.empty()) << r->name;
    EXPECT_TRUE(static_cast<bool>(r->samples)) << r->name;
    EXPECT_FALSE(r->samples({r->dtypes[0], true}).empty()) << r->name;
    EXPECT_EQ(r->inplace, r->name.back() == '_') << r->name;
  }
}

} // namespace
