# cmake -DBUILD_DIR=<main build> -DSOURCE_DIR=<main source> -DWORK_DIR=<scratch> -P run.cmake
# Installs the main build into a scratch prefix, then configures, builds and runs the consumer
# project against it: find_package(attnv) must give the conformance suite.
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run.cmake needs -D${v}=...")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()
step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/ci/consumer -B ${WORK_DIR}/build -G Ninja -DCMAKE_BUILD_TYPE=Release
     -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step(${CMAKE_COMMAND} -E env ATTNV_CONFORMANCE_TIER=quick ${WORK_DIR}/build/consumer_conformance)
file(REMOVE_RECURSE ${WORK_DIR})
