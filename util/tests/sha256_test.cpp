// SHA-256 against the FIPS 180-4 / NIST example vectors, across block boundaries, and on a file.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <unistd.h>

#include "util/sha256.h"

namespace attnv::util {
namespace {

std::string of(const std::string& s) {
  return sha256_hex(std::span(reinterpret_cast<const unsigned char*>(s.data()), s.size()));
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the padding needs a second block.
  EXPECT_EQ(of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(of(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // A wrong hash must not pass: one changed byte changes the digest.
  EXPECT_NE(of("abd"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, PiecewiseUpdatesEqualOneUpdate) {
  const std::string msg(200, 'x');
  Sha256 s;
  for (std::size_t i = 0; i < msg.size(); i += 7)
    s.update(std::span(reinterpret_cast<const unsigned char*>(msg.data()) + i, std::min<std::size_t>(7, msg.size() - i)));
  const auto d = s.digest();
  std::string hex;
  for (unsigned char c : d) {
    static const char* digits = "0123456789abcdef";
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  EXPECT_EQ(hex, of(msg));
}

TEST(Sha256, FileAndMissingFile) {
  const std::string path = ::testing::TempDir() + "sha256_test_" + std::to_string(::getpid());
  std::ofstream(path, std::ios::binary) << "abc";
  EXPECT_EQ(sha256_file_hex(path), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::remove(path.c_str());
  EXPECT_EQ(sha256_file_hex(path), "");
}

}  // namespace
}  // namespace attnv::util
