// own_headers: a consumer that has a stream/status.h of its own (examples/own_headers/,
// first on its include path) and uses caveman beside it. caveman's headers include each other
// as "caveman/stream/status.h", so the two never collide.
//
//   own_headers < build.log     # prints "<app status> <content type> <tokens before> -> <after>"
//
// Exit 0 when the view's handle retrieves the exact input (or the input passed through).
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include "stream/status.h"  // the application's own header, not caveman's

#include <caveman/engine/engine.h>
#include <caveman/store/store.h>
#include <caveman/stream/status.h>

int main() {
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  auto store = caveman::OpenMemoryStore();
  if (!store.ok()) {
    std::cerr << store.status().message() << "\n";
    return 1;
  }
  caveman::EngineOptions engine_options;
  engine_options.store = store->get();
  caveman::Engine engine(engine_options);
  caveman::CompressOptions options;
  options.mode = caveman::Mode::kCompress;
  std::string view;
  caveman::Result<caveman::CompressResult> result = engine.Compress(input, options, &view);
  if (!result.ok()) {
    std::cerr << "compress: " << result.status().message() << "\n";
    return 1;
  }
  app::StreamStatus status =
      result->passed_through() ? app::StreamStatus::kPassedThrough : app::StreamStatus::kCompressed;
  std::cout << app::StreamStatusName(status) << " " << result->content_type << " " << result->tokens_before << " -> "
            << result->tokens_after << "\n";
  if (result->passed_through()) return 0;
  std::ostringstream original;
  caveman::Status st = engine.Retrieve(result->recovery_handle, original);
  if (!st.ok() || original.str() != input) {
    std::cerr << "retrieve: " << (st.ok() ? "bytes differ" : st.message()) << "\n";
    return 1;
  }
  return 0;
}
