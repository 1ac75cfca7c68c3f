# SPDX-License-Identifier: Apache-2.0
# calm::mpi: calm/mpi.hpp's tables over MPI ranks (the host backend), defined where MPI for C++ is found;
# included by the build and by the installed package config alike.
function(calm_define_mpi_target)
  if(TARGET calm::mpi)
    return()
  endif()
  find_package(MPI QUIET COMPONENTS CXX)
  if(NOT MPI_CXX_FOUND)
    return()
  endif()
  add_library(calm_mpi INTERFACE IMPORTED GLOBAL)
  target_link_libraries(calm_mpi INTERFACE calm::calm MPI::MPI_CXX)
  add_library(calm::mpi ALIAS calm_mpi)
endfunction()
