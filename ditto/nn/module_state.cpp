// Module's state dict (state_dict, load_state_dict with PyTorch's checks
// and messages) and its printed form (PyTorch's repr, LibTorch's
// pretty_print).

#include "ditto/nn/module.h"

#include <algorithm>
#include <functional>
#include <ostream>
#include <set>
#include <sstream>

#include "ditto/autograd/graph.h"
#include "ditto/core/error.h"

namespace ditto::nn {
namespace {

// "torch.Size([3, 2])", as PyTorch's state_dict errors print shapes.
std::string torch_size(const Shape& s) {
  std::string out = "torch.Size([";
  for (size_t i = 0; i < s.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(s[i]);
  }
  return out + "])";
}

std::string quoted_list(const std::vector<std::string>& keys) {
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) {
    out += (i ? ", \"" : "\"") + keys[i] + "\"";
  }
  return out;
}

// Every line after the first indented by n spaces (PyTorch's _addindent).
std::string add_indent(const std::string& s, int n) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '\n') {
      out.append(size_t(n), ' ');
    }
  }
  return out;
}

} // namespace

template <typename Visit>
void Module::walk(const std::string& prefix, Visit&& visit) const {
  std::set<const Module*> seen;
  std::function<void(const std::string&, const Module&)> go =
      [&](const std::string& p, const Module& m) {
        if (!seen.insert(&m).second) {
          return;
        }
        visit(p, m);
        for (const auto& [name, child] : m.children_) {
          go(p + name + ".", *child);
        }
      };
  go(prefix, *this);
}

void Module::collect_state(const std::string& prefix, StateDict& out) const {
  for (const Entry& e : params_) {
    if (e.tensor.defined()) {
      out.insert(prefix + e.name, e.tensor.detach());
    }
  }
  for (const Entry& e : buffers_) {
    if (e.tensor.defined() && e.persistent) {
      out.insert(prefix + e.name, e.tensor.detach());
    }
  }
  for (const auto& [name, child] : children_) {
    child->collect_state(prefix + name + ".", out);
  }
}

StateDict Module::state_dict() const {
  StateDict out;
  collect_state("", out);
  return out;
}

IncompatibleKeys Module::load_state_dict(const StateDict& sd, bool strict) {
  IncompatibleKeys result;
  std::vector<std::string> mismatches;
  std::vector<std::pair<Tensor, Tensor>> copies; // (destination, source)
  std::set<std::string> consumed;
  walk("", [&](const std::string& prefix, const Module& m) {
    std::set<std::string> local;
    auto check = [&](const Entry& e) {
      if (!e.tensor.defined() || !e.persistent) {
        return;
      }
      local.insert(e.name);
      const std::string key = prefix + e.name;
      const Tensor* src = sd.find(key);
      if (src == nullptr) {
        result.missing_keys.push_back(key);
        return;
      }
      consumed.insert(key);
      const Shape& want = e.tensor.sizes();
      const Shape& got = src->sizes();
      const bool scalar_ok = want.empty() && got == Shape{1};
      if (want != got && !scalar_ok) {
        mismatches.push_back(
            "size mismatch for " + key + ": copying a param with shape " +
            torch_size(got) +
            " from checkpoint, the shape in current model is " +
            torch_size(want) + ".");
        return;
      }
      copies.emplace_back(e.tensor, src->reshape(want));
    };
    for (const Entry& e : m.params_) {
      check(e);
    }
    for (const Entry& e : m.buffers_) {
      check(e);
    }
    // PyTorch's rule: a key under this prefix whose next component names
    // neither a child nor a local entry is unexpected.
    for (const auto& [key, t] : sd) {
      if (key.compare(0, prefix.size(), prefix) != 0) {
        continue;
      }
      const std::string head = key.substr(
          prefix.size(), key.find('.', prefix.size()) - prefix.size());
      bool is_child = std::any_of(
          m.children_.begin(), m.children_.end(), [&](const auto& c) {
            return c.first == head;
          });
      if (!is_child && !local.count(head)) {
        result.unexpected_keys.push_back(key);
      }
    }
  });
  std::vector<std::string> lines;
  if (strict && !result.missing_keys.empty()) {
    lines.push_back(
        "Missing key(s) in state_dict: " + quoted_list(result.missing_keys) +
        ". ");
  }
  if (strict && !result.unexpected_keys.empty()) {
    lines.push_back(
        "Unexpected key(s) in state_dict: " +
        quoted_list(result.unexpected_keys) + ". ");
  }
  lines.insert(lines.end(), mismatches.begin(), mismatches.end());
  if (!lines.empty()) {
    std::string msg = "Error(s) in loading state_dict for " + name() + ":";
    for (const std::string& l : lines) {
      msg += "\n\t" + l;
    }
    detail::throw_error<ValueError>("load_state_dict", msg);
  }
  autograd::NoGradGuard no_grad;
  for (auto& [dst, src] : copies) {
    Tensor d = dst;
    d.copy_(src);
  }
  return result;
}

void Module::repr_into(std::string& out, int) const {
  std::vector<std::string> lines;
  const std::string extra = extra_repr();
  std::vector<std::string> extra_lines;
  if (!extra.empty()) {
    std::stringstream ss(extra);
    for (std::string l; std::getline(ss, l);) {
      extra_lines.push_back(l);
    }
  }
  lines = extra_lines;
  for (const auto& [name, child] : children_) {
    std::string c;
    child->repr_into(c, 0);
    lines.push_back("(" + name + "): " + add_indent(c, 2));
  }
  out += name() + "(";
  if (!lines.empty()) {
    if (extra_lines.size() == 1 && children_.empty()) {
      out += extra_lines[0];
    } else {
      out += "\n  ";
      for (size_t i = 0; i < lines.size(); ++i) {
        out += (i ? "\n  " : "") + lines[i];
      }
      out += "\n";
    }
  }
  out += ")";
}

std::string Module::repr() const {
  std::string out;
  repr_into(out, 0);
  return out;
}

void Module::pretty_print(std::ostream& stream) const {
  stream << repr();
}

std::ostream& operator<<(std::ostream& os, const Module& m) {
  return os << m.repr();
}

} // namespace ditto::nn
