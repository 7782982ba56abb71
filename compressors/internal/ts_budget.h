// A memory budget for tree-sitter parses (issue 15, memory ceiling).
//
// A tree-sitter tree costs from a few bytes per source byte (comment-heavy headers) to
// ~66 (dense TypeScript), so no fixed per-byte model fits code: the parse itself is metered.
// tree-sitter's allocator is set once, process-wide, to functions that call malloc and
// friends and, on a thread inside a TreeSitterBudget, keep the live bytes tree-sitter holds;
// past the budget they raise the parser's cancellation flag, and the parse returns NULL.
// Outside a budget they only forward to malloc (same heap, so objects allocated before the
// allocator was set are freed correctly).
//
// HowTo:
//   TreeSitterBudget budget(bytes);               // on the thread that parses
//   ts_parser_set_cancellation_flag(parser, budget.flag());
//   TSTree* t = ts_parser_parse_string(...);      // NULL once over budget
//   if (budget.exceeded()) ...decline...
//
// Thread-safety: a budget belongs to the thread that made it; budgets do not nest.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_TS_BUDGET_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_TS_BUDGET_H_

#include <cstddef>
#include <cstdint>

namespace caveman::internal {

class TreeSitterBudget {
 public:
  explicit TreeSitterBudget(uint64_t bytes);
  ~TreeSitterBudget();
  TreeSitterBudget(const TreeSitterBudget&) = delete;
  TreeSitterBudget& operator=(const TreeSitterBudget&) = delete;

  // The cancellation flag to give every parser used under this budget.
  const size_t* flag() const { return &flag_; }
  bool exceeded() const { return flag_ != 0; }
  // Most live bytes tree-sitter held at once under this budget (for tests and measurements).
  uint64_t peak_bytes() const;

 private:
  size_t flag_ = 0;
};

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_TS_BUDGET_H_
