// RetrieveQuery narrowing (§2.6): the units of an original most relevant to a query, in
// source order, with `… [caveman: non-adjacent] …` between gaps. A pure function of the bytes.
#ifndef CAVEMAN_COMPRESSORS_NARROW_H_
#define CAVEMAN_COMPRESSORS_NARROW_H_

#include <string>
#include <string_view>

namespace caveman {

// Returns the narrowed view, or the original unchanged when the query is empty or blank, no
// unit scores, or the view would not be shorter in bytes.
std::string NarrowForQuery(std::string_view original, std::string_view query);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_NARROW_H_
