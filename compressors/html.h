// html compressor (§5.8): readability-style extraction of the main content of an HTML page
// to plain text, with a WHATWG HTML5 parser (gumbo). No query, no marker.
//
// Thread-safety: stateless; the compressor may be used from any thread.
#ifndef CAVEMAN_COMPRESSORS_HTML_H_
#define CAVEMAN_COMPRESSORS_HTML_H_

#include <memory>

#include "compressors/compressor.h"

namespace caveman {

std::unique_ptr<Compressor> NewHtmlCompressor();

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_HTML_H_
