// roundtrip: compresses a file with a private in-memory store, then proves the view can be
// undone — the handle retrieves the exact original bytes.
//
//   roundtrip build.log       # prints "<type> <tokens before> -> <tokens after> <handle>"
//
// Exit 0 when the retrieved bytes equal the file, 1 otherwise.
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include <caveman/engine/engine.h>
#include <caveman/store/store.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: roundtrip <file>\n";
    return 2;
  }
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
  auto source = caveman::NewFileSource(argv[1]);
  if (!source.ok()) {
    std::cerr << source.status().message() << "\n";
    return 1;
  }
  std::ostringstream view;
  auto sink = caveman::NewOstreamSink(view);
  auto result = engine.Compress(**source, options, *sink);
  if (!result.ok()) {
    std::cerr << "compress: " << result.status().message() << "\n";
    return 1;
  }
  std::cout << result->content_type << " " << result->tokens_before << " -> " << result->tokens_after << " "
            << result->recovery_handle << "\n";
  if (result->passed_through()) return 0;  // nothing stored: the view is the original

  std::ostringstream original;
  caveman::Status st = engine.Retrieve(result->recovery_handle, original);
  if (!st.ok()) {
    std::cerr << "retrieve: " << st.message() << "\n";
    return 1;
  }
  std::ifstream file(argv[1], std::ios::binary);
  std::string expected((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (original.str() != expected) {
    std::cerr << "retrieved bytes differ from " << argv[1] << "\n";
    return 1;
  }
  std::cout << "retrieved " << expected.size() << " bytes, identical\n";
  return 0;
}
