// SPDX-License-Identifier: Apache-2.0
// Conformance: vote_reduce, VR1 with the measured threshold and VRm (3 samples) merging any pair.
#pragma once
#include "../support/strategy_check.hpp"
CALM_STRATEGY_TEST("strategy vote_reduce<1>: every op and type", "[vote_reduce]", calm::vote_reduce<1>{})
CALM_STRATEGY_TEST("strategy vote_reduce<3>, threshold 2: every op and type", "[vote_reduce]", (calm::vote_reduce<3>{12345u, 2}))
