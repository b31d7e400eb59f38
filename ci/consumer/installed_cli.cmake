# cmake -DBUILD_DIR=<main build> -DSOURCE_DIR=<main source> -DWORK_DIR=<scratch> -DCC=<C compiler> -P installed_cli.cmake
# What a plugin author does after `cmake --install`: install into a scratch prefix, move the tree
# elsewhere (the CLI must find its worker relative to itself, not in the build folder), compile
# the README's minimal plugin against the installed header through pkg-config, and certify it
# with the installed `attnv`, reading the JSON certificate from standard output.
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR CC)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "installed_cli.cmake needs -D${v}=...")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()

step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/staged)
file(RENAME ${WORK_DIR}/staged ${WORK_DIR}/prefix)  # relocated: nothing may point at "staged"
set(P ${WORK_DIR}/prefix)
foreach(f bin/attnv libexec/attnv/attnv-worker include/attnv/attnv_plugin.h share/pkgconfig/attnv-plugin.pc
          include/attnv/problem/kernel.h include/attnv/properties/conformance/conformance_gtest.h
          lib/cmake/attnv/attnvConfig.cmake share/doc/attnv/semantics.md)
  if(NOT EXISTS ${P}/${f})
    message(FATAL_ERROR "cmake --install did not install ${f}")
  endif()
endforeach()
# A curated header list, not every header of the tree.
foreach(f include/attnv/io include/attnv/core include/attnv/reference/oracle include/attnv/properties/checks/checks.h)
  if(EXISTS ${P}/${f})
    message(FATAL_ERROR "cmake --install installed the internal ${f}")
  endif()
endforeach()

# The plugin, compiled as the README says but against the installed header via pkg-config.
find_program(PKG_CONFIG pkg-config REQUIRED)
execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${P}/share/pkgconfig ${PKG_CONFIG} --cflags attnv-plugin
                OUTPUT_VARIABLE cflags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT cflags MATCHES "include/attnv")
  message(FATAL_ERROR "pkg-config --cflags attnv-plugin failed (${rc}): '${cflags}'")
endif()
separate_arguments(cflags UNIX_COMMAND "${cflags}")
step(${CC} -std=c99 -O2 -shared -fPIC ${cflags} ${SOURCE_DIR}/plugin/tests/plugins/example_minimal.c
     -o ${WORK_DIR}/libexample.so -lm)

# The installed attnv certifies it; the JSON on standard output is the whole of standard output.
# ATTNV_WORKER is unset, and PATH does not hold the prefix: the certificate must say how to run
# its commands.
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=ATTNV_WORKER PATH=/usr/bin:/bin
                        ${P}/bin/attnv certify --kernel plugin:${WORK_DIR}/libexample.so --suite quick --json -
                WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "installed attnv certify exited ${rc}:\n${err}")
endif()
string(JSON certified GET "${json}" verdict certified)
string(JSON sha GET "${json}" kernel sha256)
file(SHA256 ${WORK_DIR}/libexample.so want_sha)
if(NOT certified OR NOT sha STREQUAL want_sha)
  message(FATAL_ERROR "certificate: certified=${certified}, sha256=${sha} (file: ${want_sha})")
endif()
string(FIND "${err}" "export PATH=${P}/bin:" at)
if(at EQUAL -1)
  message(FATAL_ERROR "attnv not on PATH, but the certificate did not say how to put it there:\n${err}")
endif()
string(FIND "${err}" "CERTIFIED" at)
if(at EQUAL -1)
  message(FATAL_ERROR "with --json - the summary goes to stderr; it is not there:\n${err}")
endif()
# With the prefix on PATH the note goes away (the printed commands already work).
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=ATTNV_WORKER PATH=${P}/bin:/usr/bin:/bin
                        attnv certify --kernel plugin:${WORK_DIR}/libexample.so --only R1 --dtype f32
                WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(FIND "${out}" "note: `attnv`" at)
if(NOT rc EQUAL 0 OR NOT at EQUAL -1)
  message(FATAL_ERROR "attnv on PATH: exit ${rc}, output:\n${out}\n${err}")
endif()
message(STATUS "installed attnv certified the README plugin (sha256 ${sha})")
file(REMOVE_RECURSE ${WORK_DIR})
