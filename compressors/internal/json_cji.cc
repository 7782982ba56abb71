#include "compressors/internal/json_cji.h"

#include <cstdint>
#include <vector>

namespace caveman::internal {

void AppendCanonicalJsonIndented(const JsonTree& tree, JsonTree::NodeId n, std::string* out) {
  struct Frame {
    JsonTree::NodeId node;
    uint32_t i;
  };
  // Explicit stack: elements may nest up to 10,000 levels, too deep for recursion.
  std::vector<Frame> stack;
  auto open = [&](JsonTree::NodeId x) {
    switch (tree.kind(x)) {
      case JsonKind::kNull: out->append("null"); break;
      case JsonKind::kTrue: out->append("true"); break;
      case JsonKind::kFalse: out->append("false"); break;
      case JsonKind::kNumber: out->append(tree.text(x)); break;
      case JsonKind::kString: AppendJsonString(tree.text(x), out); break;
      case JsonKind::kArray:
      case JsonKind::kObject: {
        const bool obj = tree.kind(x) == JsonKind::kObject;
        if (tree.size(x) == 0) {
          out->append(obj ? "{}" : "[]");
        } else {
          out->append(obj ? "{\n" : "[\n");
          stack.push_back({x, 0});
        }
        break;
      }
    }
  };
  open(n);
  while (!stack.empty()) {
    const JsonTree::NodeId node = stack.back().node;
    const uint32_t i = stack.back().i;
    const size_t depth = stack.size();  // children of the top frame sit at this depth
    const bool obj = tree.kind(node) == JsonKind::kObject;
    if (i == tree.size(node)) {
      out->push_back('\n');
      out->append((depth - 1) * 2, ' ');
      out->push_back(obj ? '}' : ']');
      stack.pop_back();
      continue;
    }
    stack.back().i = i + 1;
    if (i > 0) out->append(",\n");
    out->append(depth * 2, ' ');
    if (obj) {
      AppendJsonString(tree.key(node, i), out);
      out->append(": ");
      open(tree.member_value(node, i));
    } else {
      open(tree.item(node, i));
    }
  }
}

}  // namespace caveman::internal
