#include "stream/sha256.h"

#include <openssl/evp.h>

namespace caveman {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) { Reset(); }
Sha256::~Sha256() = default;

void Sha256::Reset() { EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr); }

void Sha256::Update(std::string_view data) { EVP_DigestUpdate(impl_->ctx, data.data(), data.size()); }

std::array<uint8_t, 32> Sha256::Final() {
  std::array<uint8_t, 32> out{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(impl_->ctx, out.data(), &len);
  return out;
}

std::array<uint8_t, 32> Sha256::Peek() const {
  std::array<uint8_t, 32> out{};
  EVP_MD_CTX* copy = EVP_MD_CTX_new();
  unsigned int len = 0;
  if (copy != nullptr && EVP_MD_CTX_copy_ex(copy, impl_->ctx) == 1) {
    EVP_DigestFinal_ex(copy, out.data(), &len);
  }
  EVP_MD_CTX_free(copy);
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

std::string HandleFromDigest(const std::array<uint8_t, 32>& digest) {
  return "ccr_" + Sha256::Hex(digest, 16);
}

bool IsWellFormedHandle(std::string_view h) {
  if (h.size() != 36 || h.substr(0, 4) != "ccr_") return false;
  for (char c : h.substr(4)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace caveman
