# cmake -DRUN="<program>;<args>" -DEXPECT_CODE=<n> -DEXPECT_REGEX=<re> -P ExpectFailure.cmake
# Passes only when the program exits with EXPECT_CODE and its output matches
# EXPECT_REGEX. A program that reports no CUDA device is passed through so
# that the test's SKIP_REGULAR_EXPRESSION marks it skipped.
execute_process(COMMAND ${RUN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(out MATCHES "no CUDA device available")
  return()
endif()
if(NOT code STREQUAL "${EXPECT_CODE}")
  message(FATAL_ERROR "expected exit code ${EXPECT_CODE}, got ${code}")
endif()
if(NOT out MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "exit code ${code} as expected, but the output does not match '${EXPECT_REGEX}'")
endif()
message("exit code ${code} and the expected message: the check caught it")
