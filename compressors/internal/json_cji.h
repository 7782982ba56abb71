// CJI (§0.3, two-space indented canonical JSON) for a JsonTree, the indented sibling of
// AppendCanonicalJson in json_tree.h. Used by RetrieveQuery narrowing (§2.6) to render group
// elements.
//
// Thread-safety: pure function of a const tree.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_JSON_CJI_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_JSON_CJI_H_

#include <string>

#include "compressors/internal/json_tree.h"

namespace caveman::internal {

// CJI of the subtree at `n`, appended to `out`: `{`/`[` then LF, one member or element per
// line indented two spaces per depth (`"key": value`), commas at line ends, the closing bracket
// on its own line at the parent depth; empty containers are `{}` / `[]`. Iterative.
void AppendCanonicalJsonIndented(const JsonTree& tree, JsonTree::NodeId n, std::string* out);

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_JSON_CJI_H_
