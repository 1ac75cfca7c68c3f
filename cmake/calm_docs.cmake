# SPDX-License-Identifier: Apache-2.0
# The API docs: the `docs` target runs Doxygen (Debian's doxygen) over the public headers, with the README
# as the main page, into <build>/docs/html. An undocumented public entity fails the build (the test
# command builds it). Internals (namespaces detail and models) and the backends' warp types (their
# concept is core/warp.hpp's) are left out.
option(CALM_DOCS "add the docs target (Doxygen)" ${PROJECT_IS_TOP_LEVEL})
if(CALM_DOCS)
  find_package(Doxygen QUIET)
  if(DOXYGEN_FOUND)
    set(DOXYGEN_PROJECT_NAME calm)
    set(DOXYGEN_PROJECT_BRIEF "collision-aware, lane-merged atomics")
    set(DOXYGEN_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/docs")
    set(DOXYGEN_USE_MDFILE_AS_MAINPAGE README.md)
    set(DOXYGEN_FILE_PATTERNS *.hpp *.md)
    set(DOXYGEN_RECURSIVE YES)
    set(DOXYGEN_EXCLUDE algorithms/README.md algorithms/choice/models)
    set(DOXYGEN_EXCLUDE_SYMBOLS detail calm::detail calm::*::detail calm::models)
    set(DOXYGEN_EXTRACT_ALL NO)
    set(DOXYGEN_WARN_IF_UNDOCUMENTED YES)
    set(DOXYGEN_WARN_NO_PARAMDOC NO)
    set(DOXYGEN_WARN_AS_ERROR FAIL_ON_WARNINGS)
    set(DOXYGEN_DISTRIBUTE_GROUP_DOC YES)
    set(DOXYGEN_HAVE_DOT NO)
    set(DOXYGEN_GENERATE_LATEX NO)
    set(DOXYGEN_QUIET YES)
    set(DOXYGEN_MACRO_EXPANSION YES)
    set(DOXYGEN_PREDEFINED "CALM_HD=" "CALM_BACKEND_OPENMP=1")
    doxygen_add_docs(docs calm.hpp kokkos.hpp mpi.hpp core algorithms backends/kokkos backends/mpi README.md
                     WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" COMMENT "calm: API docs (Doxygen) into ${PROJECT_BINARY_DIR}/docs")
  endif()
endif()
