# cmake --install:
#   bin/attnv, libexec/attnv/attnv-worker   the command line program and the worker it runs
#                                           plugins in (found relative to bin/attnv)
#   include/attnv/attnv_plugin.h            the plugin ABI; share/pkgconfig/attnv-plugin.pc for it
#   include/attnv/{problem,properties,...}  the public C++ headers (a curated list, below),
#                                           included as <attnv/problem/kernel.h>
#   lib/, lib/cmake/attnv                   the conformance suite's static libraries and the CMake
#                                           package: find_package(attnv) gives attnv::conformance
#                                           and attnv::conformance_gtest (its GoogleTest front end)
#   share/doc/attnv/semantics.md            the contract the headers point to
include(CMakePackageConfigHelpers)

set(ATTNV_EXPORTED_TARGETS attnv_conformance attnv_conformance_gtest attnv_prop_checks attnv_prop_generators attnv_problem
    attnv_abi_header attnv_bound attnv_visibility attnv_util attnv_fast_reference attnv_gen attnv_io attnv_judge)
foreach(t IN LISTS ATTNV_EXPORTED_TARGETS)
  string(REGEX REPLACE "^attnv_" "" export_name ${t})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${export_name})
endforeach()
# attnv_problem and attnv_util carry the source root as their include dir in the build tree.
# Installed, a user writes <attnv/problem/kernel.h> (include/ on the path); the headers' own
# includes ("problem/case.h") resolve through include/attnv, also on the path.
target_include_directories(attnv_problem INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
                                                   $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/attnv>)
target_include_directories(attnv_util INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/attnv>)

install(TARGETS ${ATTNV_EXPORTED_TARGETS} EXPORT attnvTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The public C++ headers: what the conformance suite's entry point (conformance_gtest.h) and a
# kernel behind attnv::Kernel include, and nothing else; the rest of the tree is internal. The
# install_consumer test builds a project against exactly these, so a missing one fails there.
set(ATTNV_PUBLIC_HEADERS
  problem/buffers.h problem/case.h problem/dtype.h problem/kernel.h problem/precision.h
  problem/problem.h problem/tensor.h problem/fail_kind.h problem/kernel_fault.h
  properties/checks/property_result.h properties/conformance/conformance.h properties/conformance/requirement.h
  properties/conformance/conformance_gtest.h properties/generators/property_case.h
  reference/bound/bound.h)
foreach(h IN LISTS ATTNV_PUBLIC_HEADERS)
  get_filename_component(dir ${h} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attnv/${dir})
endforeach()

# The command line program and its worker.
install(TARGETS attnv RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS attnv-worker RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/attnv)

# For plugin authors: the C header, and a pkg-config file that finds it wherever the tree was
# installed (its prefix is relative to the .pc file, so `cmake --install --prefix` and a moved
# tree both work). Header only, so it goes to share/pkgconfig.
install(FILES ${PROJECT_SOURCE_DIR}/plugin/include/attnv_plugin.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attnv)
file(RELATIVE_PATH ATTNV_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_DATADIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" ATTNV_PC_TO_PREFIX "${ATTNV_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/attnv-plugin.pc.in ${PROJECT_BINARY_DIR}/attnv-plugin.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/attnv-plugin.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig)
install(FILES ${PROJECT_SOURCE_DIR}/docs/semantics.md ${PROJECT_SOURCE_DIR}/docs/certificate.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The JSON Schemas of the exchange manifest and the certificate, as this build's `attnv schema` wrote them.
install(FILES ${ATTNV_SCHEMA_DIR}/manifest.schema.json ${ATTNV_SCHEMA_DIR}/certificate.schema.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/attnv/schemas)
install(EXPORT attnvTargets NAMESPACE attnv:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/attnv)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/attnvConfig.cmake.in
  ${PROJECT_BINARY_DIR}/attnvConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/attnv)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/attnvConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/attnvConfig.cmake ${PROJECT_BINARY_DIR}/attnvConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/attnv)
