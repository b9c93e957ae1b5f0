# One helper adds a lesson and its tests.
#
#   add_lesson(<name> <dir>/<file>.cu)
#       the executable, plus the tests <name>_selftest (host only, runs
#       anywhere) and <name>_verify (needs a GPU; skipped, code 77, without one)
#   add_lesson_variant(<name> <file>.cu <MACRO>)
#       the same file built with -D<MACRO> (an exercise's injected bug)
#   add_gpu_test(<test> <target> <args...>)
#       runs the target; passes on exit 0, skipped on 77 (no GPU)
#   add_expected_failure_test(<test> <exit code> <regex> <target> <args...>)
#       passes only if the target exits with that code AND prints the regex;
#       skipped where there is no GPU

function(add_lesson name source)
  add_lesson_variant(${name} ${source} "")
  add_test(NAME ${name}_selftest COMMAND ${name} --selftest)
  add_gpu_test(${name}_verify ${name} --verify)
endfunction()

function(add_lesson_variant name source macro)
  add_executable(${name} ${source})
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  if(macro)
    target_compile_definitions(${name} PRIVATE ${macro})
  endif()
endfunction()

function(add_gpu_test test target)
  add_test(NAME ${test} COMMAND ${target} ${ARGN})
  set_tests_properties(${test} PROPERTIES SKIP_RETURN_CODE 77)
endfunction()

function(add_expected_failure_test test code regex target)
  string(REPLACE ";" "\\;" quoted_regex "${regex}")
  add_test(NAME ${test}
           COMMAND ${CMAKE_COMMAND} "-DRUN=$<TARGET_FILE:${target}>;${ARGN}"
                   -DEXPECT_CODE=${code} "-DEXPECT_REGEX=${quoted_regex}"
                   -P ${PROJECT_SOURCE_DIR}/cmake/ExpectFailure.cmake)
  set_tests_properties(${test} PROPERTIES SKIP_REGULAR_EXPRESSION "no CUDA device available")
endfunction()
