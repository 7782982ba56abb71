// Streaming SHA-256 (OpenSSL EVP underneath) and the recovery handle derived from it.
#ifndef CAVEMAN_STREAM_SHA256_H_
#define CAVEMAN_STREAM_SHA256_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace caveman {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(std::string_view data);
  // Finalises; the object must be Reset() before reuse.
  std::array<uint8_t, 32> Final();
  void Reset();
  // Digest of the bytes so far, without finalising (the object keeps accumulating).
  std::array<uint8_t, 32> Peek() const;

  static std::array<uint8_t, 32> Digest(std::string_view data);
  static std::string Hex(const std::array<uint8_t, 32>& d, size_t bytes = 32);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `ccr_` + lowercase hex of the first 16 digest bytes (§6.1).
std::string HandleFromDigest(const std::array<uint8_t, 32>& digest);
// True iff `h` matches ^ccr_[0-9a-f]{32}$.
bool IsWellFormedHandle(std::string_view h);

}  // namespace caveman

#endif  // CAVEMAN_STREAM_SHA256_H_
