// compress_stream: std::cin → std::cout through the engine, report on stderr — the library
// version of `caveman-engine compress`, in about thirty lines.
//
//   make 2>&1 | compress_stream            # detect the type
//   compress_stream json < pods.json       # force a type
//
// The original goes to the default recovery store (CAVEMAN_HOME, default ~/.caveman), so the
// printed handle works with `caveman-engine retrieve`.
#include <iostream>

#include <caveman/engine/engine.h>

int main(int argc, char** argv) {
  auto store = caveman::OpenDefaultStore();
  if (!store.ok()) {
    std::cerr << store.status().message() << "\n";
    return 1;
  }
  caveman::EngineOptions engine_options;
  engine_options.store = store->get();  // not owned; must outlive the engine
  caveman::Engine engine(engine_options);

  caveman::CompressOptions options;
  options.mode = caveman::Mode::kCompress;  // the default, kRecord, only passes through
  if (argc > 1) options.type = argv[1];     // empty or "auto" = detect

  // Streams in chunks: memory stays bounded for line-based types whatever the input size.
  auto result = engine.Compress(std::cin, options, std::cout);
  if (!result.ok()) {
    std::cerr << "compress: " << result.status().message() << "\n";
    return 1;
  }
  std::cerr << result->ReportJson() << "\n";
  return 0;
}
