// a11y compressor (§5.14, forced only, method `a11y`): renders a CDP Accessibility.getFullAXTree
// dump as an indented outline of meaningful nodes, with short UIDs on actionable ones; with a
// query only the matching records and their context are kept. The UID → backend node map is
// returned as recovery metadata so a caller can act on a UID later.
//
// Thread-safety: stateless; the compressor may be used from any thread.
#ifndef CAVEMAN_COMPRESSORS_A11Y_H_
#define CAVEMAN_COMPRESSORS_A11Y_H_

#include <memory>
#include <string>
#include <string_view>

#include "compressors/compressor.h"

namespace caveman {

std::unique_ptr<Compressor> NewA11yCompressor();

// QUOTE(s) of §4.7.
std::string A11yQuote(std::string_view s);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_A11Y_H_
