// INTERIM: approx-chars/4 only until the o200k_base implementation lands (issue 2, item 3).
#include "stream/tokens.h"

namespace caveman {
namespace {
class ApproxCounter final : public TokenCounter {
 public:
  std::string_view name() const override { return "approx-chars/4"; }
  uint64_t Count(std::string_view text) const override { return ApproxTokenCount(text); }
};
}  // namespace

uint64_t ApproxTokenCount(std::string_view text) {
  if (text.empty()) return 0;
  uint64_t cps = 0;
  for (unsigned char c : text) cps += (c & 0xC0) != 0x80;
  return cps / 4 > 0 ? cps / 4 : 1;
}
const TokenCounter& ApproxTokenCounter() {
  static const ApproxCounter c;
  return c;
}
const TokenCounter& DefaultTokenCounter() { return ApproxTokenCounter(); }
Result<const TokenCounter*> O200kCounter() { return Status::NotSupported("o200k not built"); }
std::vector<uint32_t> O200kEncode(std::string_view) { return {}; }
size_t LastSafeCut(std::string_view) { return 0; }
void StreamingTokenCount::Feed(std::string_view chunk) { carry_.append(chunk); }
uint64_t StreamingTokenCount::Finish() {
  uint64_t t = total_ + counter_.Count(carry_);
  carry_.clear();
  total_ = 0;
  return t;
}
}  // namespace caveman
