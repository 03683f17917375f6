# `cmake --install`: the runtime library (kgemm::kgemm: kernels, dispatch, the API header), the
# tools, the committed stores under share/kgemm/configs, and a CMake package, so that another
# project finds it with find_package(kgemm CONFIG REQUIRED).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS kgemm kgemm_dispatch kgemm_kernels kgemm_spaces EXPORT kgemmTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(KGEMM_BUILD_TOOLS)
  install(TARGETS kgemm-run autotune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
foreach(_layer IN ITEMS spaces kernels dispatch)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_layer}/kgemm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.hpp")
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/api/kgemm.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kgemm/configs
        FILES_MATCHING PATTERN "*.yaml")

set(_kgemm_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kgemm)
install(EXPORT kgemmTargets NAMESPACE kgemm:: DESTINATION ${_kgemm_package_dir})
# The package looks for the Kokkos it was built with first (kokkos_DIR at build time).
set(KGEMM_BUILT_WITH_KOKKOS_DIR "${Kokkos_DIR}")
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kgemmConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/kgemmConfig.cmake INSTALL_DESTINATION ${_kgemm_package_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kgemmConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kgemmConfig.cmake ${PROJECT_BINARY_DIR}/kgemmConfigVersion.cmake
        DESTINATION ${_kgemm_package_dir})
