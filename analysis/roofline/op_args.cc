#include "analysis/roofline/op_args.h"

#include <cctype>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "analysis/roofline/input_dims.h"
#include "common/base/absl_view.h"

namespace opmap::analysis {
namespace {

absl::Status FieldError(std::string_view field, size_t at, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(base::AbslView(field), ": ", base::AbslView(what), " at byte ", at));
}

}  // namespace

std::optional<int> DtypeBytes(std::string_view type_in) {
  absl::string_view t = absl::StripAsciiWhitespace(base::AbslView(type_in));
  absl::ConsumePrefix(&t, "c10::");
  const std::string s = absl::AsciiStrToLower(t);
  if (s == "double" || s == "long int" || s == "long" || s == "int64" || s == "float64" ||
      s == "complex<float>" || s == "complexfloat" || s == "unsigned long" ||
      s == "long unsigned int") {
    return 8;
  }
  if (s == "complex<double>" || s == "complexdouble") return 16;
  if (s == "float" || s == "int" || s == "float32" || s == "int32" || s == "unsigned int") {
    return 4;
  }
  if (s == "bfloat16" || s == "half" || s == "float16" || s == "short int" || s == "short" ||
      s == "int16" || s == "complex<c10::half>") {
    return 2;
  }
  if (absl::StartsWith(s, "float8") || s == "bool" || s == "signed char" ||
      s == "unsigned char" || s == "char" || s == "int8" || s == "uint8" ||
      absl::StartsWith(s, "float4")) {
    return 1;
  }
  return std::nullopt;
}

bool IsFloatDtype(std::string_view type_in) {
  absl::string_view t = absl::StripAsciiWhitespace(base::AbslView(type_in));
  absl::ConsumePrefix(&t, "c10::");
  const std::string s = absl::AsciiStrToLower(t);
  return s == "double" || s == "float" || s == "bfloat16" || s == "half" ||
         absl::StartsWith(s, "float");
}

bool OpArg::IsTensor() const {
  if (is_list) return false;
  // Without an Input type (the live path carries shapes only) a shaped argument is a tensor
  // of unknown dtype: its FLOPs count, its bytes do not.
  return DtypeBytes(type).has_value() || (type.empty() && !dims.empty());
}

double OpArg::Numel() const {
  if (!IsTensor()) return 0;
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(std::max<int64_t>(d, 0));
  return n;
}

std::optional<int> OpArg::ElementBytes() const { return DtypeBytes(type); }

std::optional<int64_t> OpArg::ConcreteInt() const {
  int64_t v = 0;
  absl::string_view c = absl::StripAsciiWhitespace(concrete);
  if (!c.empty() && absl::SimpleAtoi(c, &v)) return v;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> OpArg::ConcreteInts() const {
  absl::string_view c = absl::StripAsciiWhitespace(concrete);
  if (!absl::ConsumePrefix(&c, "[") || !absl::ConsumeSuffix(&c, "]")) {
    if (auto one = ConcreteInt()) return std::vector<int64_t>{*one};
    return std::nullopt;
  }
  std::vector<int64_t> out;
  if (absl::StripAsciiWhitespace(c).empty()) return out;
  for (absl::string_view part : absl::StrSplit(c, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &v)) return std::nullopt;
    out.push_back(v);
  }
  return out;
}

std::optional<bool> OpArg::ConcreteBool() const {
  absl::string_view c = absl::StripAsciiWhitespace(concrete);
  if (c == "True" || c == "true" || c == "1") return true;
  if (c == "False" || c == "false" || c == "0") return false;
  return std::nullopt;
}

std::string CompactArrayText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false, escaped = false;
  for (char ch : text) {
    if (in_string) {
      out.push_back(ch);
      if (escaped) {
        escaped = false;
      } else if (ch == '\\') {
        escaped = true;
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') continue;
    out.push_back(ch);
    if (ch == '"') in_string = true;
    if (ch == ',') out.push_back(' ');
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ParseStringArray(std::string_view text,
                                                          std::string_view field) {
  std::vector<std::string> out;
  size_t p = 0;
  auto skip = [&] {
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
  };
  skip();
  if (p >= text.size() || text[p] != '[') return FieldError(field, p, "expected '['");
  ++p;
  skip();
  if (p < text.size() && text[p] == ']') {
    ++p;
  } else {
    while (true) {
      skip();
      if (p >= text.size() || text[p] != '"') return FieldError(field, p, "expected a string");
      ++p;
      std::string s;
      bool closed = false;
      while (p < text.size()) {
        const char ch = text[p++];
        if (ch == '"') {
          closed = true;
          break;
        }
        if (ch != '\\') {
          s.push_back(ch);
          continue;
        }
        if (p >= text.size()) break;
        const char esc = text[p++];
        switch (esc) {
          case 'n': s.push_back('\n'); break;
          case 't': s.push_back('\t'); break;
          case 'r': s.push_back('\r'); break;
          case 'b': s.push_back('\b'); break;
          case 'f': s.push_back('\f'); break;
          case 'u':
            // Names and dtypes are ASCII; a \u escape is kept as text rather than decoded.
            s.append("\\u");
            break;
          default: s.push_back(esc);
        }
      }
      if (!closed) return FieldError(field, p, "unterminated string");
      out.push_back(std::move(s));
      skip();
      if (p < text.size() && text[p] == ',') {
        ++p;
        continue;
      }
      if (p < text.size() && text[p] == ']') {
        ++p;
        break;
      }
      return FieldError(field, p, "expected ',' or ']'");
    }
  }
  skip();
  if (p != text.size()) return FieldError(field, p, "trailing text");
  return out;
}

absl::StatusOr<std::vector<OpArg>> ParseOpArgs(std::string_view input_dims,
                                               std::string_view input_types,
                                               std::string_view concrete_inputs,
                                               std::string_view input_strides) {
  std::vector<ArgDims> dims;
  if (!input_dims.empty()) {
    auto d = ParseInputDims(input_dims);
    if (!d.ok()) return d.status();
    dims = *std::move(d);
  }
  std::vector<std::string> types, concrete;
  if (!input_types.empty()) {
    auto t = ParseStringArray(input_types, "Input type");
    if (!t.ok()) return t.status();
    types = *std::move(t);
  }
  if (!concrete_inputs.empty()) {
    auto c = ParseStringArray(concrete_inputs, "Concrete Inputs");
    if (!c.ok()) return c.status();
    concrete = *std::move(c);
  }
  std::vector<ArgDims> strides;
  if (!input_strides.empty()) {
    auto s = ParseInputDims(input_strides);
    // Strides only inform the report; a malformed stride list is dropped, not fatal.
    if (s.ok()) strides = *std::move(s);
  }
  const size_t n = std::max({dims.size(), types.size(), concrete.size()});
  auto check = [&](size_t size, std::string_view field) -> absl::Status {
    if (size != 0 && size != n) {
      return absl::InvalidArgumentError(absl::StrCat(base::AbslView(field), " has ", size,
                                                     " arguments where another field has ", n));
    }
    return absl::OkStatus();
  };
  if (auto s = check(dims.size(), "Input Dims"); !s.ok()) return s;
  if (auto s = check(types.size(), "Input type"); !s.ok()) return s;
  if (auto s = check(concrete.size(), "Concrete Inputs"); !s.ok()) return s;
  std::vector<OpArg> out(n);
  for (size_t i = 0; i < n; ++i) {
    OpArg& a = out[i];
    if (i < dims.size()) {
      a.dims = std::move(dims[i].dims);
      a.is_list = dims[i].is_list;
      a.list = std::move(dims[i].list);
    }
    if (i < types.size()) a.type = std::move(types[i]);
    if (i < concrete.size()) a.concrete = std::move(concrete[i]);
    if (i < strides.size() && !strides[i].is_list) a.strides = std::move(strides[i].dims);
    if (a.type == "TensorList") a.is_list = true;
  }
  return out;
}

}  // namespace opmap::analysis
