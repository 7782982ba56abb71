#include "compressors/internal/json_skeleton.h"

#include <algorithm>

#include "compressors/internal/json_validity.h"

namespace caveman::internal {

bool JsonSkeleton::Build(std::string_view text, size_t min_node_bytes, int max_depth, JsonShape* shape,
                         size_t bytes_per_record) {
  constexpr size_t kMaxText = size_t{1} << 29;  // JsonTree's bound, so the verdicts agree
  *this = JsonSkeleton();
  if (text.size() >= kMaxText) {
    if (shape != nullptr) *shape = ValidateJsonBytes(text);
    return false;
  }
  min_node_bytes_ = min_node_bytes;
  max_depth_ = max_depth;
  max_records_ = text.size() / std::max<size_t>(bytes_per_record, 1) + 64;
  const JsonShape verdict = ValidateJsonBytes(text, this);
  if (shape != nullptr) *shape = verdict;
  if (!verdict.valid) return false;
  if (max_depth_ < 0) return false;  // too many children (OnValue)
  pend_ = {};
  open_ = {};
  return true;
}

int32_t JsonSkeleton::Keep(const Open& o) {
  const size_t count = pend_.size() - o.base;
  if (children_.size() + count > max_records_) {
    max_depth_ = -1;
    return -1;
  }
  const auto id = static_cast<int32_t>(nodes_.size());
  nodes_.push_back({o.is_array, static_cast<uint32_t>(children_.size()), static_cast<uint32_t>(count)});
  children_.insert(children_.end(), pend_.begin() + static_cast<std::ptrdiff_t>(o.base), pend_.end());
  return id;
}

}  // namespace caveman::internal
