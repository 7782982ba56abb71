#include "stream/sha256.h"

// The low-level SHA-256 functions (deprecated in OpenSSL 3 in favour of EVP, but kept and
// the same assembly): EVP_DigestInit fetches the algorithm from a provider, which on the
// first call of a process initialises OpenSSL's provider machinery, about 2 ms of a 4 KiB
// `compress` (issue 19). The state is a plain struct, so Peek is a copy.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace caveman {

struct Sha256::Impl {
  SHA256_CTX ctx;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) { Reset(); }
Sha256::~Sha256() = default;

void Sha256::Reset() { SHA256_Init(&impl_->ctx); }

void Sha256::Update(std::string_view data) { SHA256_Update(&impl_->ctx, data.data(), data.size()); }

std::array<uint8_t, 32> Sha256::Final() {
  std::array<uint8_t, 32> out{};
  SHA256_Final(out.data(), &impl_->ctx);
  return out;
}

std::array<uint8_t, 32> Sha256::Peek() const {
  std::array<uint8_t, 32> out{};
  SHA256_CTX copy = impl_->ctx;
  SHA256_Final(out.data(), &copy);
  return out;
}

std::array<uint8_t, 32> Sha256::Digest(std::string_view data) {
  Sha256 h;
  h.Update(data);
  return h.Final();
}

std::string Sha256::Hex(const std::array<uint8_t, 32>& d, size_t bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < bytes && i < d.size(); ++i) {
    s.push_back(kHex[d[i] >> 4]);
    s.push_back(kHex[d[i] & 15]);
  }
  return s;
}

std::string HandleFromDigest(const std::array<uint8_t, 32>& digest) { return "ccr_" + Sha256::Hex(digest, 16); }

bool IsWellFormedHandle(std::string_view h) {
  if (h.size() != 36 || h.substr(0, 4) != "ccr_") return false;
  for (char c : h.substr(4)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace caveman
