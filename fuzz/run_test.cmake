# One fuzz ctest (fuzz/CMakeLists.txt). Every input of the target's corpus
# goes first through the replay build (the project's compiler, on every
# machine: the regression test proper, deterministic), then, where clang
# built the libFuzzer target, through it with its sanitizers, followed by
# SECONDS of fuzzing from there (0: none). New inputs go to WORK, never
# into the repository; a failing input is left there.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/new")
execute_process(COMMAND ${REPLAY} ${CORPUS} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a corpus input fails in the replay build (exit ${rc})")
endif()
if(FUZZER AND EXISTS "${FUZZER}")
  set(args -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2048
           -print_final_stats=1 -artifact_prefix=${WORK}/)
  if(SECONDS EQUAL 0)
    # The corpus once, no fuzzing.
    set(args -runs=0 -timeout=10 -rss_limit_mb=2048
             -artifact_prefix=${WORK}/)
  endif()
  if(DICT)
    list(APPEND args -dict=${DICT})
  endif()
  execute_process(COMMAND ${FUZZER} ${args} ${WORK}/new ${CORPUS}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "libFuzzer found a failure (exit ${rc}); the input "
                        "is in ${WORK}")
  endif()
else()
  message(STATUS "no libFuzzer build (clang or libclang-rt-14-dev missing): "
                 "the corpus went through the replay build only")
endif()
