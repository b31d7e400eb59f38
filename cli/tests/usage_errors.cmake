# The CLI's usage and input errors: each must exit with status 2 and say what is wrong.
# Run as: cmake -DATTNV=path/to/attnv -P usage_errors.cmake
function(expect_failure code pattern)
  execute_process(COMMAND ${ATTNV} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL ${code})
    message(FATAL_ERROR "attnv ${ARGN}: exit ${rc}, expected ${code}\n${out}${err}")
  endif()
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "attnv ${ARGN}: output does not match '${pattern}':\n${out}${err}")
  endif()
endfunction()

expect_failure(2 "A subcommand is required|subcommand")
expect_failure(2 "could not be matched|not expected|unknown" frobnicate)  # an unknown subcommand
expect_failure(2 "--in.*required|required" reference)
expect_failure(2 "does not exist|no manifest|manifest.json" reference --in /nonexistent/attnv-dir)
expect_failure(2 "not a dtype|f8" reference --in . --accum f8)
expect_failure(0 "reference" --help)
