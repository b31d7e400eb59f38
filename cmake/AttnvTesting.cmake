include(GoogleTest)

# attnv_add_test(NAME SOURCES a.cpp ... LIBS lib ... [LABELS l ...] [TIMEOUT s])
# One GoogleTest binary; every TEST becomes a ctest test. RapidCheck runs with a fixed seed so CI
# is deterministic; a failure prints RC_PARAMS="reproduce=..." to replay it.
function(attnv_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  gtest_discover_tests(${name}
    DISCOVERY_TIMEOUT 60
    PROPERTIES
      LABELS "${ARG_LABELS}"
      TIMEOUT ${ARG_TIMEOUT}
      ENVIRONMENT "RC_PARAMS=seed=20261121 max_success=100;ATTNV_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()
