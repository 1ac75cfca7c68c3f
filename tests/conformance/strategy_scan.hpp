// SPDX-License-Identifier: Apache-2.0
// Conformance: scan_reduce with the measured threshold and forced to reduce every run.
#pragma once
#include "../support/strategy_check.hpp"
CALM_STRATEGY_TEST("strategy scan_reduce: every op and type", "[scan_reduce]", calm::scan_reduce{})
CALM_STRATEGY_TEST("strategy scan_reduce, threshold 1: every op and type", "[scan_reduce]", calm::scan_reduce{1})
