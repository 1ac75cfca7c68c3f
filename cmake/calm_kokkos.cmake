# SPDX-License-Identifier: Apache-2.0
# find_package(Kokkos) for calm's Kokkos tests and benchmarks, and whether that Kokkos runs on calm's
# backend: sets CALM_KOKKOS (TRUE when usable) and the target Kokkos::kokkos.
#
# Debian's Kokkos 3.4 names an include folder that does not exist: calm_fix_kokkos_includes.
include(${CMAKE_CURRENT_LIST_DIR}/calm_kokkos_includes.cmake)
set(CALM_KOKKOS FALSE)
find_package(Kokkos QUIET)
if(NOT Kokkos_FOUND)
  message(STATUS "calm: no Kokkos found (Debian: libtrilinos-kokkos-dev; or -DKokkos_ROOT=...): no Kokkos tests or benchmarks")
  return()
endif()
calm_fix_kokkos_includes()

if((BACKEND STREQUAL "openmp" AND NOT Kokkos_ENABLE_CUDA AND NOT Kokkos_ENABLE_HIP) OR
   (BACKEND STREQUAL "cuda" AND Kokkos_ENABLE_CUDA) OR (BACKEND STREQUAL "hip" AND Kokkos_ENABLE_HIP))
  set(CALM_KOKKOS TRUE)
  message(STATUS "calm: Kokkos ${Kokkos_VERSION} (${Kokkos_DEVICES}): Kokkos tests and benchmarks")
else()
  message(STATUS "calm: Kokkos ${Kokkos_VERSION} (${Kokkos_DEVICES}) does not run on BACKEND=${BACKEND}: no Kokkos tests or benchmarks")
endif()
