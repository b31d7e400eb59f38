#pragma once
// SHA-256 (FIPS 180-4), so a certificate names the exact plugin file it certified: two builds
// of one plugin with the same name and version string still differ here. Small and
// self-contained: Debian's crypto libraries would be a dependency for one hash.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace attnv::util {

class Sha256 {
 public:
  Sha256();
  void update(std::span<const unsigned char> bytes);
  std::array<unsigned char, 32> digest();  // finishes the hash; call once

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> h_;
  std::array<unsigned char, 64> buf_{};
  std::size_t used_ = 0;
  std::uint64_t bits_ = 0;
};

// Lower-case hex of the SHA-256 of `bytes`.
std::string sha256_hex(std::span<const unsigned char> bytes);
// Lower-case hex of the SHA-256 of a file's content; "" when it cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace attnv::util
