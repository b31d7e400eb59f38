include(GoogleTest)

# attnv_add_test(NAME SOURCES a.cpp ... LIBS lib ... [LABELS label] [TIMEOUT s] [ONE_PROCESS])
# One GoogleTest binary; every TEST becomes a ctest test, or, with ONE_PROCESS, the binary is one
# ctest test (for binaries whose TESTs share an expensive fixture computed once per process). RapidCheck runs with a fixed seed so CI
# is deterministic; a failure prints RC_PARAMS="reproduce=..." to replay it.
#
# One label per binary: CMake 3.25's POST_BUILD discovery splits a list-valued property into
# separate words whatever the escaping, so a second label (or a second environment variable)
# would silently become a property name. Labels in use: unit, property, slow (heavy binaries the
# sanitizer run skips). Tests find source-tree data through compile definitions, not the
# environment.
function(attnv_add_test name)
  cmake_parse_arguments(ARG "ONE_PROCESS" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  list(LENGTH ARG_LABELS n_labels)
  if(n_labels GREATER 1)
    message(FATAL_ERROR "attnv_add_test(${name}): one label only (got '${ARG_LABELS}'), see above")
  endif()
  if(ARG_ONE_PROCESS)
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
                         ENVIRONMENT "RC_PARAMS=seed=20261121 max_success=100")
    return()
  endif()
  gtest_discover_tests(${name}
    DISCOVERY_TIMEOUT 60
    PROPERTIES
      LABELS "${ARG_LABELS}"
      TIMEOUT ${ARG_TIMEOUT}
      ENVIRONMENT "RC_PARAMS=seed=20261121 max_success=100")
endfunction()
