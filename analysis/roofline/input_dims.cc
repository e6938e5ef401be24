#include "analysis/roofline/input_dims.h"

#include <cctype>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace opmap::analysis {
namespace {

// Minimal recursive-descent reader for nested integer lists.
struct Node {
  bool is_int = false;
  int64_t value = 0;
  std::vector<Node> items;
};

class Reader {
 public:
  explicit Reader(absl::string_view t) : t_(t) {}
  absl::StatusOr<Node> ParseTop() {
    auto n = Parse(0);
    if (!n.ok()) return n;
    Skip();
    if (p_ != t_.size()) return Err("trailing text");
    return n;
  }

 private:
  absl::Status Err(absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input Dims: ", what, " at byte ", p_, " of '", t_, "'"));
  }
  void Skip() {
    while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
  }
  absl::StatusOr<Node> Parse(int depth) {
    if (depth > 8) return Err("nesting too deep");
    Skip();
    if (p_ >= t_.size()) return Err("unexpected end");
    Node n;
    if (t_[p_] == '[') {
      ++p_;
      Skip();
      if (p_ < t_.size() && t_[p_] == ']') {
        ++p_;
        return n;
      }
      while (true) {
        auto item = Parse(depth + 1);
        if (!item.ok()) return item.status();
        n.items.push_back(*std::move(item));
        Skip();
        if (p_ >= t_.size()) return Err("unexpected end, expected ',' or ']'");
        if (t_[p_] == ',') {
          ++p_;
          continue;
        }
        if (t_[p_] == ']') {
          ++p_;
          return n;
        }
        return Err("expected ',' or ']'");
      }
    }
    size_t start = p_;
    if (t_[p_] == '-' || t_[p_] == '+') ++p_;
    while (p_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[p_]))) ++p_;
    int64_t v = 0;
    if (!absl::SimpleAtoi(t_.substr(start, p_ - start), &v)) {
      p_ = start;
      return Err("expected an integer or '['");
    }
    n.is_int = true;
    n.value = v;
    return n;
  }
  absl::string_view t_;
  size_t p_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<ArgDims>> ParseInputDims(std::string_view text_in) {
  absl::string_view text(text_in.data(), text_in.size());
  Reader r(text);
  auto top = r.ParseTop();
  if (!top.ok()) return top.status();
  if (top->is_int) return absl::InvalidArgumentError("Input Dims: expected a list of arguments");
  std::vector<ArgDims> out;
  for (const Node& arg : top->items) {
    ArgDims a;
    if (arg.is_int) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input Dims: argument ", out.size(), " is a bare integer"));
    }
    bool ints = true, lists = true;
    for (const Node& x : arg.items) {
      ints &= x.is_int;
      lists &= !x.is_int;
    }
    if (!arg.items.empty() && ints) {
      for (const Node& x : arg.items) a.dims.push_back(x.value);
    } else if (!arg.items.empty() && lists) {
      a.is_list = true;
      for (const Node& t : arg.items) {
        std::vector<int64_t> d;
        for (const Node& x : t.items) {
          if (!x.is_int) {
            return absl::InvalidArgumentError(
                absl::StrCat("Input Dims: argument ", out.size(), " nests too deep"));
          }
          d.push_back(x.value);
        }
        a.list.push_back(std::move(d));
      }
    } else if (!arg.items.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input Dims: argument ", out.size(), " mixes integers and lists"));
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace opmap::analysis
