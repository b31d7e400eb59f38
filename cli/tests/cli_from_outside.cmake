# The CLI from the outside: usage and input errors exit 2 and say what is wrong; small runs of
# the self-contained subcommands exit 0 with their report.
# Run as: cmake -DATTNV=path/to/attnv -P cli_from_outside.cmake
function(expect_exit code pattern)
  execute_process(COMMAND ${ATTNV} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL ${code})
    message(FATAL_ERROR "attnv ${ARGN}: exit ${rc}, expected ${code}\n${out}${err}")
  endif()
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "attnv ${ARGN}: output does not match '${pattern}':\n${out}${err}")
  endif()
endfunction()

expect_exit(2 "A subcommand is required|subcommand")
expect_exit(2 "could not be matched|not expected|unknown" frobnicate)  # an unknown subcommand
expect_exit(2 "--in.*required|required" reference)
expect_exit(2 "does not exist|no manifest|manifest.json" reference --in /nonexistent/attnv-dir)
expect_exit(2 "not a dtype|f8" reference --in . --accum f8)
expect_exit(0 "reference" --help)
expect_exit(0 "model +cases +fwd max" calibrate --cases 12 --no-backward)
expect_exit(0 "RESULT: PASS" selfcheck --cases 1 --medium-cases 0 --dtype f16)
# Nothing compared is no evidence: NOT EXERCISED, exit 2, never a PASS.
expect_exit(2 "RESULT: NOT EXERCISED: no element compared in any family" selfcheck --cases 0 --medium-cases 0)
expect_exit(2 "not a dtype" selfcheck --dtype f8)
# The JSON Schemas, completed from the feature registry: a later option and a later claim each
# named; an unknown document, or --out into a folder, is a usage or input error.
expect_exit(0 "\"varlen_sequences\": {" schema manifest)
expect_exit(0 "\"varlen_kv_len\": {" schema certificate)
expect_exit(2 "manifest|certificate" schema bogus)
expect_exit(2 "--out" schema manifest --out /)
