// SPDX-License-Identifier: Apache-2.0
// Conformance: naive, peer_reduce and peer_reduce_if against the sequential reference (see support/strategy_check.hpp).
#pragma once
#include "../support/strategy_check.hpp"
CALM_STRATEGY_TEST("strategy naive: every op and type", "[naive]", calm::naive{})
CALM_STRATEGY_TEST("strategy peer_reduce: every op and type", "[peer_reduce]", calm::peer_reduce{})
CALM_STRATEGY_TEST("strategy peer_reduce_if: merging and not, picked at run time", "[peer_reduce]", calm::peer_reduce_if{GENERATE(false, true)})
