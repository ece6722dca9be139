# The ThreadSanitizer reports of a `ctest -L tsan` run (TSAN_OPTIONS
# log_path, set in tests/CMakeLists.txt): MODE=clear empties DIR before the
# run; MODE=check prints the summary of every report left in DIR and fails if there is one,
# so a race in a server started by the HTTP suite fails the run too.
if(MODE STREQUAL "clear")
  file(REMOVE_RECURSE ${DIR})
  file(MAKE_DIRECTORY ${DIR})
elseif(MODE STREQUAL "check")
  file(GLOB reports ${DIR}/report.*)
  if(reports)
    list(LENGTH reports count)
    # The summaries only: a run can leave a million lines; the reports
    # themselves stay in DIR.
    foreach(report ${reports})
      file(STRINGS ${report} summaries REGEX "^SUMMARY: ")
      list(JOIN summaries "\n" text)
      message("== ${report}\n${text}")
    endforeach()
    message(FATAL_ERROR "${count} ThreadSanitizer report file(s) in ${DIR} (full reports there)")
  endif()
  message("no ThreadSanitizer report in ${DIR}")
else()
  message(FATAL_ERROR "MODE must be clear or check")
endif()
