#pragma once

// Reading rows through a row struct, shared by the soci_store files.

#include <soci/soci.h>

#include <string>
#include <string_view>
#include <vector>

namespace mailassay::storage {

/// Runs `columns + tail` (a SELECT of a table's columns and its WHERE ...
/// ORDER BY) with `args` bound in order and returns every row as
/// `Row::get()` reads it. `Row::bind_into(statement&)` binds one `into` per
/// column, in `columns`' order.
template <class Row, class... Args>
auto select_rows(soci::session& sql, std::string_view columns,
                 const std::string& tail, const Args&... args) {
  Row row;
  soci::statement st(sql);
  row.bind_into(st);
  (st.exchange(soci::use(args)), ...);
  st.alloc();
  st.prepare(std::string{columns} + tail);
  st.define_and_bind();
  st.execute();
  std::vector<decltype(row.get())> out;
  while (st.fetch())
    out.push_back(row.get());
  return out;
}

} // namespace mailassay::storage
