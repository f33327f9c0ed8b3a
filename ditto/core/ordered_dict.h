#pragma once

// OrderedDict<Key, Value>: LibTorch's insertion-ordered map (what
// named_parameters, named_children and state_dict return). Items read as
// LibTorch's (item.key(), item.value()) and as std::pair's (item.first,
// item.second, structured bindings), so code written for either compiles.

#include <cstddef>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ditto/core/error.h"

namespace ditto {

template <typename Key, typename Value>
class OrderedDict {
 public:
  struct Item {
    Key first;
    Value second;

    Item() = default;
    Item(Key k, Value v) : first(std::move(k)), second(std::move(v)) {}
    const Key& key() const noexcept {
      return first;
    }
    Value& value() noexcept {
      return second;
    }
    const Value& value() const noexcept {
      return second;
    }
    Value& operator*() noexcept {
      return second;
    }
    const Value& operator*() const noexcept {
      return second;
    }
    Value* operator->() noexcept {
      return &second;
    }
    const Value* operator->() const noexcept {
      return &second;
    }
    std::pair<Key, Value> pair() const {
      return {first, second};
    }
  };
  using key_type = Key;
  using mapped_type = Value;
  using value_type = Item;
  using iterator = typename std::vector<Item>::iterator;
  using const_iterator = typename std::vector<Item>::const_iterator;

  // key_description names the keys in errors ("Key", "Parameter"), as
  // LibTorch's.
  explicit OrderedDict(std::string key_description = "Key")
      : key_description_(std::move(key_description)) {}
  OrderedDict(std::initializer_list<Item> items) {
    for (const Item& item : items) {
      insert(item.first, item.second);
    }
  }

  const std::string& key_description() const noexcept {
    return key_description_;
  }

  // ---- element access
  Item& front() {
    check_not_empty("front");
    return items_.front();
  }
  const Item& front() const {
    check_not_empty("front");
    return items_.front();
  }
  Item& back() {
    check_not_empty("back");
    return items_.back();
  }
  const Item& back() const {
    check_not_empty("back");
    return items_.back();
  }
  // The index-th item; IndexError past the end.
  Item& operator[](size_t index) {
    check_index(index);
    return items_[index];
  }
  const Item& operator[](size_t index) const {
    check_index(index);
    return items_[index];
  }
  // The value under key; KeyError if absent.
  Value& operator[](const Key& key) {
    return at_key(key);
  }
  const Value& operator[](const Key& key) const {
    return const_cast<OrderedDict*>(this)->at_key(key);
  }
  // Null if absent.
  Value* find(const Key& key) noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  const Value* find(const Key& key) const noexcept {
    return const_cast<OrderedDict*>(this)->find(key);
  }
  bool contains(const Key& key) const noexcept {
    return find(key) != nullptr;
  }

  // ---- iteration, in insertion order
  iterator begin() {
    return items_.begin();
  }
  const_iterator begin() const {
    return items_.begin();
  }
  iterator end() {
    return items_.end();
  }
  const_iterator end() const {
    return items_.end();
  }
  size_t size() const noexcept {
    return items_.size();
  }
  bool is_empty() const noexcept {
    return items_.empty();
  }
  bool empty() const noexcept {
    return items_.empty();
  }

  // ---- modifiers
  // Appends (key, value); ValueError if key is already present.
  Value& insert(Key key, Value value) {
    if (contains(key)) {
      detail::throw_error<ValueError>(
          "OrderedDict.insert",
          key_description_,
          " '",
          key,
          "' already defined");
    }
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().second;
  }
  // Inserts or replaces every item of other (replaced ones keep their
  // place).
  void update(const OrderedDict& other) {
    for (const Item& item : other) {
      if (Value* v = find(item.first)) {
        *v = item.second;
      } else {
        insert(item.first, item.second);
      }
    }
  }
  // Removes key; KeyError if absent.
  void erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) {
      missing(key);
    }
    const size_t at = it->second;
    index_.erase(it);
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(at));
    for (size_t i = at; i < items_.size(); ++i) {
      index_[items_[i].first] = i;
    }
  }
  void clear() {
    items_.clear();
    index_.clear();
  }
  void reserve(size_t n) {
    items_.reserve(n);
    index_.reserve(n);
  }

  // ---- views
  const std::vector<Item>& items() const noexcept {
    return items_;
  }
  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(items_.size());
    for (const Item& item : items_) {
      out.push_back(item.first);
    }
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    out.reserve(items_.size());
    for (const Item& item : items_) {
      out.push_back(item.second);
    }
    return out;
  }
  std::vector<std::pair<Key, Value>> pairs() const {
    std::vector<std::pair<Key, Value>> out;
    out.reserve(items_.size());
    for (const Item& item : items_) {
      out.emplace_back(item.first, item.second);
    }
    return out;
  }

 private:
  Value& at_key(const Key& key) {
    if (Value* v = find(key)) {
      return *v;
    }
    missing(key);
  }
  [[noreturn]] void missing(const Key& key) const {
    detail::throw_error<KeyError>(
        "OrderedDict", key_description_, " '", key, "' is not defined");
  }
  void check_not_empty(const char* what) const {
    DITTO_CHECK(
        !items_.empty(),
        IndexError,
        "OrderedDict",
        "called ",
        what,
        "() on an empty OrderedDict");
  }
  void check_index(size_t index) const {
    DITTO_CHECK(
        index < items_.size(),
        IndexError,
        "OrderedDict",
        "index ",
        index,
        " is out of range for an OrderedDict of size ",
        items_.size());
  }

  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
  std::string key_description_ = "Key";
};

} // namespace ditto
