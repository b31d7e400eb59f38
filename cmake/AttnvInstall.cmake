# cmake --install: the headers under include/attnv (so "problem/case.h" style includes work with
# include/attnv on the include path), the static libraries of the conformance suite, and the
# package files: find_package(attnv) gives attnv::conformance.
include(CMakePackageConfigHelpers)

set(ATTNV_EXPORTED_TARGETS attnv_conformance attnv_prop_checks attnv_prop_generators attnv_problem
    attnv_bound attnv_visibility attnv_util attnv_fast_reference attnv_gen attnv_io)
foreach(t IN LISTS ATTNV_EXPORTED_TARGETS)
  string(REGEX REPLACE "^attnv_" "" export_name ${t})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${export_name})
endforeach()
# attnv_problem and attnv_util carry the source root as their include dir in the build tree.
target_include_directories(attnv_problem INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/attnv>)
target_include_directories(attnv_util INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/attnv>)

install(TARGETS ${ATTNV_EXPORTED_TARGETS} EXPORT attnvTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(dir problem util gen io reference properties)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attnv
          FILES_MATCHING PATTERN "*.h" PATTERN "tests" EXCLUDE PATTERN "fuzz" EXCLUDE)
endforeach()
install(EXPORT attnvTargets NAMESPACE attnv:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/attnv)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/attnvConfig.cmake.in
  ${PROJECT_BINARY_DIR}/attnvConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/attnv)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/attnvConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/attnvConfig.cmake ${PROJECT_BINARY_DIR}/attnvConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/attnv)
