#include "compressors/lines.h"

#include <cstring>

namespace caveman::internal {

SplitResult SplitLines(std::string_view input) {
  SplitResult r;
  if (!input.empty() && input.back() == '\n') {
    r.trailing = true;
    input.remove_suffix(1);
  }
  size_t start = 0;
  while (true) {
    const void* p = std::memchr(input.data() + start, '\n', input.size() - start);
    if (p == nullptr) {
      r.lines.push_back(input.substr(start));
      break;
    }
    size_t pos = static_cast<const char*>(p) - input.data();
    r.lines.push_back(input.substr(start, pos - start));
    start = pos + 1;
  }
  return r;
}

template <class S>
static std::string JoinImpl(const std::vector<S>& lines, bool trailing) {
  size_t total = trailing ? 1 : 0;
  for (const auto& l : lines) total += l.size() + 1;
  std::string out;
  out.reserve(total);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out.push_back('\n');
    out.append(lines[i]);
  }
  if (trailing) out.push_back('\n');
  return out;
}

std::string JoinLines(const std::vector<std::string_view>& lines, bool trailing) { return JoinImpl(lines, trailing); }
std::string JoinLines(const std::vector<std::string>& lines, bool trailing) { return JoinImpl(lines, trailing); }

void CrlfCounter::Feed(std::string_view chunk) {
  for (char c : chunk) {
    if (c == '\n') {
      ++lf_;
      if (last_was_cr_) ++crlf_;
    }
    last_was_cr_ = c == '\r';
  }
}

bool IsMajorityCrlf(std::string_view input) {
  CrlfCounter c;
  c.Feed(input);
  return c.majority_crlf();
}

}  // namespace caveman::internal
