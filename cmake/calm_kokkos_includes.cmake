# SPDX-License-Identifier: Apache-2.0
# calm_fix_kokkos_includes(): where Kokkos::kokkos names include folders that do not exist, put
# Kokkos_INCLUDE_DIRS in their place. Debian's Kokkos 3.4 (Trilinos 13.2) declares <prefix>/include,
# while its headers are in include/trilinos: a project that links it fails at generation ("includes
# non-existent path"). calm's build calls it after find_package(Kokkos); the installed calmConfig.cmake
# calls it too, at once and again at the end of the directory that found calm (after a later
# find_package(Kokkos) there). A Kokkos whose folders exist is left as it is.
function(calm_fix_kokkos_includes)
  if(NOT TARGET Kokkos::kokkos)
    return()
  endif()
  get_target_property(includes Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT includes)
    return()
  endif()
  set(fixed)
  foreach(dir IN LISTS includes)
    if(EXISTS "${dir}" OR dir MATCHES "^\\$<")
      list(APPEND fixed "${dir}")
    else()
      foreach(alt IN LISTS Kokkos_INCLUDE_DIRS)
        get_filename_component(alt "${alt}" ABSOLUTE)
        if(EXISTS "${alt}")
          list(APPEND fixed "${alt}")
        endif()
      endforeach()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES fixed)
  if(NOT "${fixed}" STREQUAL "${includes}")
    set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${fixed}")
  endif()
endfunction()
