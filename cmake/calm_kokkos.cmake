# SPDX-License-Identifier: Apache-2.0
# find_package(Kokkos) for calm's Kokkos tests and benchmarks, and whether that Kokkos runs on calm's
# backend: sets CALM_KOKKOS (TRUE when usable) and the target Kokkos::kokkos.
#
# Debian's Kokkos 3.4 (Trilinos 13.2) declares Kokkos::kokkos with the include folder
# <prefix>/include, which does not exist (its headers are in include/trilinos, given as
# Kokkos_INCLUDE_DIRS): the folders that do not exist are replaced by Kokkos_INCLUDE_DIRS.
set(CALM_KOKKOS FALSE)
find_package(Kokkos QUIET)
if(NOT Kokkos_FOUND)
  message(STATUS "calm: no Kokkos found (Debian: libtrilinos-kokkos-dev; or -DKokkos_ROOT=...): no Kokkos tests or benchmarks")
  return()
endif()
get_target_property(calm_kokkos_includes Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
set(calm_kokkos_fixed)
foreach(dir IN LISTS calm_kokkos_includes)
  if(EXISTS "${dir}" OR dir MATCHES "^\\$<")
    list(APPEND calm_kokkos_fixed "${dir}")
  else()
    foreach(alt IN LISTS Kokkos_INCLUDE_DIRS)
      get_filename_component(alt "${alt}" ABSOLUTE)
      if(EXISTS "${alt}")
        list(APPEND calm_kokkos_fixed "${alt}")
      endif()
    endforeach()
  endif()
endforeach()
list(REMOVE_DUPLICATES calm_kokkos_fixed)
set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${calm_kokkos_fixed}")

if((BACKEND STREQUAL "openmp" AND NOT Kokkos_ENABLE_CUDA AND NOT Kokkos_ENABLE_HIP) OR
   (BACKEND STREQUAL "cuda" AND Kokkos_ENABLE_CUDA) OR (BACKEND STREQUAL "hip" AND Kokkos_ENABLE_HIP))
  set(CALM_KOKKOS TRUE)
  message(STATUS "calm: Kokkos ${Kokkos_VERSION} (${Kokkos_DEVICES}): Kokkos tests and benchmarks")
else()
  message(STATUS "calm: Kokkos ${Kokkos_VERSION} (${Kokkos_DEVICES}) does not run on BACKEND=${BACKEND}: no Kokkos tests or benchmarks")
endif()
