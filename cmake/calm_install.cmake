# SPDX-License-Identifier: Apache-2.0
# cmake --install: headers to include/calm/, the calm::calm target and a package config that records
# the backend and brings its dependencies, so find_package(calm) gives a target with the backend's flags.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY core backends algorithms DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/calm
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.inc")  # *.inc: the fitted trees of algorithms/choice/models
install(FILES calm.hpp kokkos.hpp mpi.hpp nccl.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/calm)
install(TARGETS calm EXPORT calmTargets)

set(CALM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/calm)
install(EXPORT calmTargets NAMESPACE calm:: DESTINATION ${CALM_CMAKE_DIR})
configure_package_config_file(cmake/calmConfig.cmake.in ${PROJECT_BINARY_DIR}/calmConfig.cmake INSTALL_DESTINATION ${CALM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/calmConfigVersion.cmake COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/calmConfig.cmake ${PROJECT_BINARY_DIR}/calmConfigVersion.cmake cmake/calm_kokkos_includes.cmake cmake/calm_mpi.cmake
              cmake/calm_nccl.cmake
        DESTINATION ${CALM_CMAKE_DIR})
