# The parts' dependency direction (README "Layout"): data flows generators -> kernel and reference
# -> comparison -> report, so
#   reference/ includes nothing of kernels/, properties/, core/, calibration/, plugin/, cases/,
#              cli/, fuzz/ (an independent reference shares no code with what it judges);
#   kernels/   includes only problem/, util/ and reference/visibility.h (the emulated kernels' docs/semantics.md
#              visibility), never the checks that judge them;
#   fuzz/      (its library and harnesses, not its tests) does not reach into properties/ or
#              plugin/ internals (the plugin parser harness excepted: plugin/ is what it fuzzes).
# Usage: cmake -DSOURCE_DIR=... -P ci/layering.cmake; fails naming each offending include.
set(violations "")
function(check part pattern allowed_regex)
  file(GLOB_RECURSE files ${SOURCE_DIR}/${part}/*.h ${SOURCE_DIR}/${part}/*.cpp)
  foreach(f IN LISTS files)
    if(f MATCHES "/tests/" AND NOT part STREQUAL "reference")
      continue()
    endif()
    file(STRINGS ${f} lines REGEX "^#include \"${pattern}")
    foreach(l IN LISTS lines)
      if(allowed_regex AND l MATCHES "${allowed_regex}")
        continue()
      endif()
      file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
      list(APPEND violations "${rel}: ${l}")
    endforeach()
  endforeach()
  set(violations "${violations}" PARENT_SCOPE)
endfunction()

check(reference "(kernels|properties|core|calibration|plugin|cases|cli|fuzz)/" "")
check(kernels "(properties|core|calibration|plugin|cases|cli|fuzz|reference|io|gen)/" "reference/visibility\\.h")
check(fuzz "(properties|plugin)/" "")
list(FILTER violations EXCLUDE REGEX "^fuzz/plugin_decl_fuzzer\\.cpp: #include \"plugin/")
if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "layering: includes against the dependency direction:\n  ${text}")
endif()
