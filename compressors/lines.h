// Line splitting, joining and the majority-CRLF rule of §4.1, shared by the line-based
// compressors (log, terminal, diff, search-result, config, text, tabular).
//
// Thread-safety: free functions are pure; a CrlfCounter belongs to one stream.
#ifndef CAVEMAN_COMPRESSORS_LINES_H_
#define CAVEMAN_COMPRESSORS_LINES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace caveman::internal {

// The result of Split: views into the input. Each line keeps its own CR, if any.
struct SplitResult {
  std::vector<std::string_view> lines;
  bool trailing = false;  // the input ended with LF (that one LF is not part of any line)
};

// §4.1 Split: drop one final LF (remembered as `trailing`), split the rest on LF. The empty
// input yields one empty line, as splitting "" on LF does.
// Lifetime: the views point into `input`.
SplitResult SplitLines(std::string_view input);

// §4.1 Join: lines joined with LF, plus one LF if `trailing`.
std::string JoinLines(const std::vector<std::string_view>& lines, bool trailing);
std::string JoinLines(const std::vector<std::string>& lines, bool trailing);

// §4.1 Majority CRLF: at least one LF and count(CRLF) × 2 > count(LF).
bool IsMajorityCrlf(std::string_view input);

// The same rule fed chunk by chunk (a CR at the end of one chunk pairs with an LF at the start
// of the next).
class CrlfCounter {
 public:
  void Feed(std::string_view chunk);
  bool majority_crlf() const { return lf_ > 0 && crlf_ * 2 > lf_; }
  uint64_t lf_count() const { return lf_; }
  uint64_t crlf_count() const { return crlf_; }

 private:
  uint64_t lf_ = 0;
  uint64_t crlf_ = 0;
  bool last_was_cr_ = false;
};

// A synthesized line (marker or note) gets a CR appended iff the input is majority CRLF.
inline std::string SynthesizedLine(std::string_view text, bool majority_crlf) {
  std::string s(text);
  if (majority_crlf) s.push_back('\r');
  return s;
}

// The kept units in order, each maximal run [from, to) of dropped units (keep[k] false)
// replaced by the one synthesized line marker(from, to) (a std::string). Shared by the
// in-memory line and section compressors; each keeps its own decline test on the result.
template <class MarkerFn>
std::vector<std::string> ReplaceDroppedRuns(const std::vector<std::string_view>& units, const std::vector<bool>& keep,
                                            bool majority_crlf, MarkerFn&& marker) {
  const size_t n = units.size();
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n;) {
    if (keep[i]) {
      out.emplace_back(units[i++]);
      continue;
    }
    size_t j = i;
    while (j < n && !keep[j]) ++j;
    out.push_back(SynthesizedLine(marker(i, j), majority_crlf));
    i = j;
  }
  return out;
}

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_LINES_H_
