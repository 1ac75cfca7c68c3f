// SPDX-License-Identifier: Apache-2.0
// The Catch2 main of every test executable (plain C++, no device code).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
