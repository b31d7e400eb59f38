#include "io/npy_header.h"

#include <cctype>
#include <limits>
#include <string>

#include "io/text.h"
#include "problem/error.h"

namespace attnv::io {
namespace {

// A Python literal, as much as a .npy header can hold.
struct PyValue {
  enum class Kind { string, integer, boolean, none, tuple, list, dict } kind = Kind::none;
  std::string text;               // string
  std::int64_t integer = 0;       // integer
  bool boolean = false;           // boolean
  std::vector<PyValue> items;     // tuple, list; dict values (keys are not kept)
};

const char* kind_name(PyValue::Kind k) {
  switch (k) {
    case PyValue::Kind::string: return "a string";
    case PyValue::Kind::integer: return "an integer";
    case PyValue::Kind::boolean: return "a bool";
    case PyValue::Kind::none: return "None";
    case PyValue::Kind::tuple: return "a tuple";
    case PyValue::Kind::list: return "a list";
    case PyValue::Kind::dict: return "a dict";
  }
  return "?";
}

// Nesting deeper than this is never a valid header; the limit keeps a fuzzed "((((((..." from
// exhausting the stack.
constexpr int kMaxDepth = 8;

class Parser {
 public:
  Parser(std::string_view text, std::string_view name) : s_(text), name_(name) {}

  // The top-level dict, keeping its keys in order.
  std::vector<std::pair<std::string, PyValue>> top_dict() {
    skip_space();
    if (at_end()) error("the header is empty");
    if (peek() != '{') error("the header does not start with '{'", true);
    std::vector<std::pair<std::string, PyValue>> entries;
    dict_body(0, &entries);
    skip_space();
    if (!at_end()) error("unexpected text after the closing '}'", true);
    return entries;
  }

 private:
  std::string_view s_;
  std::string_view name_;
  std::size_t pos_ = 0;

  [[noreturn]] void error(const std::string& what, bool show_position = false) const {
    std::string msg = std::string(name_) + ": malformed header: " + what;
    if (show_position) {
      msg += " at byte " + std::to_string(pos_) + " of the header";
      if (!at_end()) msg += " (near \"" + printable(s_.substr(pos_, 12)) + "\")";
    }
    throw InputError(msg);
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return s_[pos_]; }
  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }
  void expect_more(const char* inside) const {
    if (at_end()) error(std::string("the header ends inside ") + inside + " (truncated, or the length field is too small)");
  }

  PyValue value(int depth) {
    if (depth > kMaxDepth) error("nesting deeper than " + std::to_string(kMaxDepth), true);
    skip_space();
    expect_more("a value");
    const char c = peek();
    PyValue v;
    if (c == '\'' || c == '"') {
      v.kind = PyValue::Kind::string;
      v.text = string_literal();
    } else if (c == '(' || c == '[') {
      v.kind = c == '(' ? PyValue::Kind::tuple : PyValue::Kind::list;
      sequence(v, c == '(' ? ')' : ']', depth);
    } else if (c == '{') {
      v.kind = PyValue::Kind::dict;
      v.items = dict_body(depth, nullptr);
    } else if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
      v.kind = PyValue::Kind::integer;
      v.integer = integer();
    } else {
      const std::string_view word = identifier();
      if (word == "True" || word == "False") {
        v.kind = PyValue::Kind::boolean;
        v.boolean = word == "True";
      } else if (word == "None") {
        v.kind = PyValue::Kind::none;
      } else {
        error(word.empty() ? "unexpected character" : "unknown name '" + std::string(word) + "'", true);
      }
    }
    return v;
  }

  std::string_view identifier() {
    const std::size_t start = pos_;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_')) ++pos_;
    return s_.substr(start, pos_ - start);
  }

  std::string string_literal() {
    const char quote = peek();
    ++pos_;
    std::string out;
    for (;;) {
      expect_more("a string");
      char c = peek();
      ++pos_;
      if (c == quote) return out;
      if (c == '\n') error("a string runs past the end of its line", true);
      if (c == '\\') {
        expect_more("a string");
        c = peek();
        ++pos_;
      }
      out += c;
    }
  }

  std::int64_t integer() {
    bool negative = false;
    if (peek() == '-' || peek() == '+') {
      negative = peek() == '-';
      ++pos_;
      expect_more("a number");
    }
    if (!(peek() >= '0' && peek() <= '9')) error("expected digits", true);
    // Accumulate as a negative number so that INT64_MIN is representable; overflow is an error.
    std::int64_t v = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      const int d = peek() - '0';
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, d, &v))
        error("an integer does not fit in 64 bits", true);
      ++pos_;
    }
    if (!at_end() && (peek() == 'L' || peek() == 'l')) ++pos_;  // Python 2 long suffix
    if (!at_end() && (peek() == '.' || peek() == 'e' || peek() == 'E' || peek() == 'j'))
      error("expected an integer, found a non-integer number", true);
    if (!negative && v == std::numeric_limits<std::int64_t>::min()) error("an integer does not fit in 64 bits", true);
    return negative ? v : -v;
  }

  void sequence(PyValue& v, char close, int depth) {
    ++pos_;  // the opening bracket
    bool trailing_comma = false;
    for (;;) {
      skip_space();
      expect_more(close == ')' ? "a tuple" : "a list");
      if (peek() == close) {
        ++pos_;
        break;
      }
      v.items.push_back(value(depth + 1));
      trailing_comma = false;
      skip_space();
      expect_more(close == ')' ? "a tuple" : "a list");
      if (peek() == ',') {
        ++pos_;
        trailing_comma = true;
      } else if (peek() != close) {
        error(std::string("expected ',' or '") + close + "'", true);
      }
    }
    // "(5)" is the int 5 in Python, not a tuple; NumPy writes "(5,)".
    if (close == ')' && v.items.size() == 1 && !trailing_comma) {
      PyValue inner = std::move(v.items[0]);
      v = std::move(inner);
    }
  }

  // Parses "{ key: value, ... }"; keys must be strings. Fills `entries` when given.
  std::vector<PyValue> dict_body(int depth, std::vector<std::pair<std::string, PyValue>>* entries) {
    ++pos_;  // '{'
    std::vector<PyValue> values;
    for (;;) {
      skip_space();
      expect_more("the dict");
      if (peek() == '}') {
        ++pos_;
        return values;
      }
      if (peek() != '\'' && peek() != '"') error("a dict key must be a string", true);
      std::string key = string_literal();
      skip_space();
      expect_more("the dict");
      if (peek() != ':') error("expected ':' after the key '" + printable(key) + "'", true);
      ++pos_;
      PyValue v = value(depth + 1);
      if (entries) entries->emplace_back(std::move(key), v);
      values.push_back(std::move(v));
      skip_space();
      expect_more("the dict");
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        error("expected ',' or '}'", true);
      }
    }
  }
};

struct Descr {
  std::string_view text;
  NpyType type;
};
constexpr Descr kDescrs[] = {{"<f8", NpyType::f64}, {"<f4", NpyType::f32}, {"<f2", NpyType::f16},
                             {"|b1", NpyType::b1},  {"|u1", NpyType::u8},  {"<i4", NpyType::i32},
                             {"<i8", NpyType::i64}, {"<u2", NpyType::u16}};

NpyType descr_type(const PyValue& d, std::string_view name) {
  auto fail = [&](const std::string& what) { throw InputError(std::string(name) + ": " + what); };
  if (d.kind == PyValue::Kind::list)
    fail("structured dtypes (a list descr) are not supported; save a plain numeric array");
  if (d.kind != PyValue::Kind::string)
    fail(std::string("malformed header: 'descr' must be a string, got ") + kind_name(d.kind));
  const std::string& s = d.text;
  for (const Descr& e : kDescrs)
    if (s == e.text) return e.type;
  // 1-byte types carry no byte order; accept the spellings other writers use.
  if (s == "b1" || s == "<b1" || s == "=b1" || s == "?" || s == "|?") return NpyType::b1;
  if (s == "u1" || s == "<u1" || s == "=u1" || s == "|B") return NpyType::u8;
  if (!s.empty() && s[0] == '>') {
    bool known = false;
    for (const Descr& e : kDescrs) known |= s.substr(1) == e.text.substr(1);
    if (known)
      fail("big-endian data ('" + s + "') is not supported; attnv needs little-endian (numpy: a.astype('<" +
           s.substr(1) + "'))");
  }
  if (s.find('O') != std::string::npos) fail("object arrays ('" + s + "') are not supported; save a numeric array");
  if (s.find('V') != std::string::npos) fail("void/structured dtypes ('" + s + "') are not supported");
  fail("dtype '" + s + "' is not supported; attnv reads <f8, <f4, <f2, |b1, |u1, <i4, <i8 and <u2 (raw bf16 bits)");
  return NpyType::f64;  // not reached: fail throws
}

}  // namespace

NpyHeader parse_npy_header(std::string_view text, std::string_view name) {
  const auto entries = Parser(text, name).top_dict();
  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape = nullptr;
  auto fail = [&](const std::string& what) { throw InputError(std::string(name) + ": " + what); };
  for (const auto& [key, v] : entries) {
    const PyValue** slot = key == "descr" ? &descr : key == "fortran_order" ? &fortran : key == "shape" ? &shape : nullptr;
    if (!slot) fail("malformed header: unknown key '" + key + "' (expected descr, fortran_order, shape)");
    if (*slot) fail("malformed header: the key '" + key + "' appears twice");
    *slot = &v;
  }
  for (auto [p, key] : {std::pair{descr, "descr"}, {fortran, "fortran_order"}, {shape, "shape"}})
    if (!p) fail(std::string("malformed header: the key '") + key + "' is missing");

  NpyHeader h;
  h.type = descr_type(*descr, name);
  if (fortran->kind != PyValue::Kind::boolean)
    fail(std::string("malformed header: 'fortran_order' must be True or False, got ") + kind_name(fortran->kind));
  if (fortran->boolean) fail("fortran_order is True; attnv needs C order (numpy.ascontiguousarray)");
  if (shape->kind != PyValue::Kind::tuple)
    fail(std::string("malformed header: 'shape' must be a tuple of integers, got ") + kind_name(shape->kind));
  if (shape->items.size() > kMaxNpyRank)
    fail("rank " + std::to_string(shape->items.size()) + " exceeds the limit of " + std::to_string(kMaxNpyRank));
  for (std::size_t d = 0; d < shape->items.size(); ++d) {
    const PyValue& dim = shape->items[d];
    if (dim.kind != PyValue::Kind::integer)
      fail("malformed header: shape dimension " + std::to_string(d) + " is " + kind_name(dim.kind) +
           ", not an integer");
    if (dim.integer < 0)
      fail("shape dimension " + std::to_string(d) + " is negative (" + std::to_string(dim.integer) + ")");
    h.shape.push_back(dim.integer);
  }
  return h;
}

}  // namespace attnv::io
