// printable(): what reaches a terminal from ids, paths and plugin text cannot control it.
#include <gtest/gtest.h>

#include <string>

#include "io/text.h"

namespace attnv::io {
namespace {

using namespace std::string_literals;

TEST(Printable, ControlCharactersBecomeQuestionMarks) {
  // ESC (an OSC title sequence and a screen clear), BEL, CR, NUL, DEL, TAB.
  EXPECT_EQ(printable("a\x1b]0;t\x07\rb\x1b[2J"s + '\0' + "c\x7f\td"), "a?]0;t??b?[2J?c??d");
  EXPECT_EQ(printable("line\nnext"), "line?next");
  EXPECT_EQ(printable("line\nnext\r", true), "line\nnext?");
  EXPECT_EQ(printable("plain ASCII: [A-Za-z0-9._-] ~!"), "plain ASCII: [A-Za-z0-9._-] ~!");
}

TEST(Printable, WellFormedUtf8IsKept) {
  for (const char* s : {"caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x98\x80", "\xc2\xa0nbsp"})
    EXPECT_EQ(printable(s), s) << s;
}

TEST(Printable, C1ControlsBidiOverridesAndMalformedUtf8AreReplacedBytewise) {
  EXPECT_EQ(printable("a\xc2\x9b" "31mb"), "a??31mb");         // U+009B, the 8-bit CSI
  EXPECT_EQ(printable("x\xe2\x80\xaey"), "x???y");             // U+202E right-to-left override
  EXPECT_EQ(printable("x\xe2\x81\xa6y"), "x???y");             // U+2066 left-to-right isolate
  EXPECT_EQ(printable("\xff\xfe"), "??");                      // never valid in UTF-8
  EXPECT_EQ(printable("\xc0\xaf"), "??");                      // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "???");                 // a surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "????");            // above U+10FFFF
  EXPECT_EQ(printable("end\xe2\x82"), "end??");                // cut short
  EXPECT_EQ(printable("\xe2\x82" "A"), "??A");                 // a continuation byte missing
}

TEST(Printable, QuotedWrapsInSingleQuotes) {
  EXPECT_EQ(single_quoted("a/1"), "'a/1'");
  EXPECT_EQ(single_quoted("a\x1b" "b"), "'a?b'");
}

}  // namespace
}  // namespace attnv::io
