#include "cli/internal/marker_format.h"
#include "stream/json_writer.h"

#include <algorithm>
#include <array>

namespace caveman::internal {

std::string MarkerMapJson(std::string_view handle, const std::vector<MarkerEntry>& markers) {
  JsonWriter w;
  w.BeginObject().Key("handle").String(handle).Key("markers").BeginArray();
  for (const MarkerEntry& e : markers) {
    w.BeginObject().Key("marker").Uint(e.index).Key("kind").String(e.kind).Key("view_line").Uint(e.view_line);
    w.Key("count").Uint(e.count).Key("first_line").Uint(e.first_line).Key("last_line").Uint(e.last_line);
    w.Key("byte_begin").Uint(e.byte_begin).Key("byte_end").Uint(e.byte_end);
    if (e.first_index >= 0) {
      w.Key("pointer").String(e.pointer).Key("first_index").Int(e.first_index).Key("last_index").Int(e.last_index);
    }
    w.EndObject();
  }
  w.EndArray().EndObject();
  return w.Take() + "\n";
}

std::string MarkerMapTable(const std::vector<MarkerEntry>& markers) {
  if (markers.empty()) return "no markers\n";
  using Row = std::array<std::string, 7>;
  std::vector<Row> rows = {{"marker", "kind", "view line", "count", "original lines", "bytes", "array"}};
  for (const MarkerEntry& e : markers) {
    std::string lines = e.first_line == e.last_line ? std::to_string(e.first_line)
                                                    : std::to_string(e.first_line) + "-" + std::to_string(e.last_line);
    std::string array;
    if (e.first_index >= 0) {
      array = (e.pointer.empty() ? std::string("(root)") : e.pointer) + " [" + std::to_string(e.first_index) + ".." +
              std::to_string(e.last_index) + "]";
    }
    rows.push_back({std::to_string(e.index), e.kind, std::to_string(e.view_line), std::to_string(e.count), lines,
                    "[" + std::to_string(e.byte_begin) + ", " + std::to_string(e.byte_end) + ")", array});
  }
  // The array column only when some marker is a JSON one.
  const bool json =
      std::any_of(markers.begin(), markers.end(), [](const MarkerEntry& e) { return e.first_index >= 0; });
  const size_t columns = json ? 7 : 6;
  std::array<size_t, 7> width{};
  for (const Row& r : rows) {
    for (size_t c = 0; c < columns; ++c) width[c] = std::max(width[c], r[c].size());
  }
  auto right = [](size_t c) { return c == 0 || c == 2 || c == 3; };
  std::string out;
  for (const Row& r : rows) {
    std::string line;
    for (size_t c = 0; c < columns; ++c) {
      if (c > 0) line += "  ";
      const std::string pad(width[c] - r[c].size(), ' ');
      line += right(c) ? pad + r[c] : r[c] + (c + 1 < columns ? pad : "");
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

MarkerCommandOutcome RunMarkerCommand(Engine& engine, std::string_view handle, std::optional<uint64_t> marker,
                                      ReportFormat format, ByteSink& out) {
  MarkerCommandOutcome o;
  auto fail = [&](const Status& s) {
    o.exit_code = s.code() == StatusCode::kNotSupported ? kExitNoMarkerMap : 1;
    o.error = s.message();
    return o;
  };
  if (marker.has_value()) {
    // Nothing is written before the whole frame is verified (the store spools the slice).
    Status s = engine.RetrieveMarker(handle, *marker, out);
    if (!s.ok()) return fail(s);
    Status f = out.Flush();
    if (!f.ok()) {
      o.exit_code = 1;
      o.write_failed = true;
      o.error = f.message();
    }
    return o;
  }
  auto map = engine.RetrieveMarkerMap(handle);
  if (!map.ok()) return fail(map.status());
  const std::string text = format == ReportFormat::kPretty ? MarkerMapTable(*map) : MarkerMapJson(handle, *map);
  Status s = out.Write(text);
  if (s.ok()) s = out.Flush();
  if (!s.ok()) {
    o.exit_code = 1;
    o.write_failed = true;
    o.error = s.message();
  }
  return o;
}

}  // namespace caveman::internal
