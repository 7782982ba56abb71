// engine.h as a library API (issue 17): Engine is movable, Compress/Simulate work on a const
// Engine, and constructing one reads no environment variable (CAVE_ENGINE_TOON is the CLI's;
// the library takes EngineOptions::json_best_of).
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>

#include <gtest/gtest.h>

#include "caveman/engine/engine.h"

namespace caveman {
namespace {

static_assert(std::is_nothrow_move_constructible_v<Engine>);
static_assert(std::is_nothrow_move_assignable_v<Engine>);
static_assert(!std::is_copy_constructible_v<Engine>);

// A small nested document: the default json compressor emits it minified (fewer tokens than
// TOON), the best-of selector (§5.1.7: TOON or elision, never minify) as TOON.
std::string Rows() {
  return "{\n  \"name\": \"demo\",\n  \"tags\": {\n    \"a\": [1, 2, 3],\n    \"b\": {\"c\": null}\n  }\n}\n";
}

CompressOptions CompressMode() {
  CompressOptions o;
  o.mode = Mode::kCompress;
  return o;
}

std::string MethodOf(const Engine& engine, const std::string& in) {
  std::string out;
  auto r = engine.Compress(in, CompressMode(), &out);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->method : "error";
}

TEST(EngineApi, MovedEngineKeepsItsOptions) {
  auto store = OpenMemoryStore();
  ASSERT_TRUE(store.ok());
  Engine first(EngineOptions{.store = store->get(), .json_best_of = true});
  Engine moved(std::move(first));
  EXPECT_EQ(MethodOf(moved, Rows()), "toon");
  Engine assigned(EngineOptions{.store = store->get()});
  EXPECT_EQ(MethodOf(assigned, Rows()), "minify");
  assigned = std::move(moved);
  EXPECT_EQ(MethodOf(assigned, Rows()), "toon");
  std::string retrieved;
  StringSink sink;
  std::string view;
  auto r = assigned.Compress(Rows(), CompressMode(), &view);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(assigned.Retrieve(r->recovery_handle, sink).ok());
  EXPECT_EQ(sink.data(), Rows());
}

TEST(EngineApi, CompressAndSimulateOnAConstEngine) {
  auto store = OpenMemoryStore();
  ASSERT_TRUE(store.ok());
  const Engine engine(EngineOptions{.store = store->get()});
  std::string view;
  auto c = engine.Compress(Rows(), CompressMode(), &view);
  ASSERT_TRUE(c.ok());
  auto s = engine.Simulate(Rows(), CompressMode());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->output, view);
  EXPECT_EQ(s->method, c->method);
}

TEST(EngineApi, ConstructorReadsNoEnvironment) {
  auto store = OpenMemoryStore();
  ASSERT_TRUE(store.ok());
  ASSERT_EQ(setenv("CAVE_ENGINE_TOON", "best-of", 1), 0);
  const Engine from_env_if_any(EngineOptions{.store = store->get()});
  ASSERT_EQ(unsetenv("CAVE_ENGINE_TOON"), 0);
  const Engine plain(EngineOptions{.store = store->get()});
  const Engine best_of(EngineOptions{.store = store->get(), .json_best_of = true});
  EXPECT_EQ(MethodOf(best_of, Rows()), "toon");
  EXPECT_EQ(MethodOf(plain, Rows()), "minify");
  EXPECT_EQ(MethodOf(from_env_if_any, Rows()), MethodOf(plain, Rows()));
}

}  // namespace
}  // namespace caveman
