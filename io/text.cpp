#include "io/text.h"

namespace attnv::io {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] (2 to 4 bytes, no overlong forms,
// no surrogates, at most U+10FFFF) with its code point in `cp`; 0 when there is none.
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t& cp) {
  const auto lead = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  char32_t least = 0;
  if (lead >= 0xC2 && lead <= 0xDF) n = 2, cp = lead & 0x1Fu, least = 0x80;
  else if (lead >= 0xE0 && lead <= 0xEF) n = 3, cp = lead & 0x0Fu, least = 0x800;
  else if (lead >= 0xF0 && lead <= 0xF4) n = 4, cp = lead & 0x07u, least = 0x10000;
  else return 0;
  if (n > s.size() - i) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// Code points (>= U+0080) a terminal shows as text without acting on them.
bool harmless(char32_t cp) {
  const bool c1 = cp < 0xA0;
  const bool bidi = (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
  return !c1 && !bidi;
}

}  // namespace

std::string printable(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c >= 0x20 && c < 0x7F) || (c == '\n' && keep_newlines)) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t n = c >= 0x80 ? utf8_sequence(s, i, cp) : 0;
    if (n > 0 && harmless(cp)) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += '?';  // one '?' per byte: the length shows how much was replaced
      ++i;
    }
  }
  return out;
}

std::string single_quoted(std::string_view s) {
  std::string out = "'";  // appended, not "'" + printable(s): GCC 12 warns (-Wrestrict) on that form
  out += printable(s);
  out += '\'';
  return out;
}

std::string indent_lines(const std::string& text, const std::string& indent) {
  std::string out;
  for (char ch : text) {
    out += ch;
    if (ch == '\n') out += indent;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out;
}

}  // namespace attnv::io
