#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fit calm's strategy tree (000 §3.3) to a bulk training sweep and write it as a model file.

    python3 perf/fit_tree.py TRAIN.json --family hopper [--out algorithms/choice/models/hopper.inc] [--report FILE.md] [--jobs N]

TRAIN.json: the Google Benchmark JSON of `CALM_BULK_SET=train calm_bench --benchmark_filter=^bulk/train/`.
Each input (workload, distribution, table size, keys) gives the time of every forced strategy and its
collision statistics ("stats" case, with the time to sample them). The tree is a CART over the features of
algorithms/choice/choose.hpp whose leaves pick the strategy with the least loss over their inputs, the loss of an
input being log(time / best time) plus a steep penalty below 0.9x of the best; a path that tests a sampled
statistic pays the sampling time on each of its inputs (the "sampling" case: the device-side sampling
a choice finished on the device costs; older files: the "stats" case, which also waits for the host).
Greedy splits look ahead through static splits (the table, the types, the keys' count) that gain
nothing themselves: one such split, then, where none helps, one more on a feature of few values (float
or not, the value size), so that a region such as "float values in a table of four copies" can be cut
out before it samples. The report gives leave-one-out quality the paper's
way: for each input, a tree fitted to the others chooses, and "% off optimal" is its time over the best.
Plain Python: no numpy needed.
"""
import argparse
import json
import math
import re
import statistics
import sys
from collections import defaultdict

# in the order of calm::strategy (after automatic): a bench case's "ran" counter indexes it
STRATEGIES = ["naive", "scan_reduce", "vote_reduce", "peer_reduce", "privatize", "privatize_peer_reduce", "hot_key", "cluster_privatize",
              "privatize_adaptive"]
# the strategies that need the table in one block (a forced call elsewhere fails: its time is infinite)
# forced cases that eval_tree.py counts in the per-input best, but no fit reads (thread_private: a table per CPU
# thread; on a GPU it runs as privatize or hot_key); in the order of calm::strategy after STRATEGIES
SCORED_ONLY = ["thread_private"]
BLOCK_LOCAL = {"privatize", "privatize_peer_reduce", "privatize_adaptive"}
# the features a tree may test (algorithms/choice/choose.hpp); the all-thread level is left out: calm finishes a
# sampled choice on the device, where distinct keys are not counted
FEATURES = ["log2_bins", "value_bytes", "is_float", "counting", "op_kind", "fits_block", "log2_copies", "log2_items", "warp_level",
            "block_level", "clustering", "line_share", "line_repeats", "block_excess", "hot_share"]
# what a leaf may pick: the strategies a choice finished on the device launches (algorithms/bulk/scatter.hpp,
# device_choosable); vote_reduce was never the best by more than 3% on any input, nor was scan_reduce until
# 781c507 kept its tile in registers (then up to 1.3x over peer_reduce on sorted keys into large tables): the
# training files before cuda-h100-2026-11-26-bulk-train-resweep-52e2b90.json (its times again, on the inputs larger than a block) hold its slower times
LEAVES = {"naive", "scan_reduce", "peer_reduce", "privatize", "privatize_peer_reduce", "hot_key", "cluster_privatize", "privatize_adaptive"}
# H100 (sm_90): one block's block-local memory and privatize's replication budget (58% of it), for
# training files written before the "copies" counter existed
H100_BLOCK_BYTES, H100_COPY_BUDGET = 232448, 232448 // 100 * 58


def replication_for(bins, elem, budget, max_copies):
    """algorithms/bulk/privatize.hpp's rule."""
    r = 1
    while r * 2 <= max_copies and r * 2 * (bins + 1) * elem <= budget:
        r *= 2
    return r
SAMPLED = {"warp_level", "block_level", "all_thread_level", "clustering", "line_share", "line_repeats", "block_excess", "hot_share"}
FLOOR = math.log(1 / 0.9)  # below 0.9x of the best costs extra
LOOKAHEAD = 2  # static splits a node may look through before a split pays (1: one, as the trees before 2026-11-24's refit)
GROW_MIN_LEAF = 3  # the fewest training inputs a leaf of a --grow subtree holds (--grow-min-leaf)


def load_inputs(path, sampling=None, sampled_path=None, auto_case="automatic", features_from=()):
    """{input id: {"times": {strategy: seconds}, "auto": seconds, "cub": seconds, "features": {...}, "stats_time": s}}
    stats_time: `sampled_path` (seconds) if given, else the input's "sampling" case, else `sampling` if
    given, else its "stats" case. "auto" is the case named `auto_case` (automatic_launches: without the
    graph CUDA records for repeated calls). Only inputs with every strategy's time."""
    return complete_inputs(read_cases([path], auto_case), sampling, sampled_path, features_from)


def read_cases(paths, auto_case="automatic"):
    """The cases of the files in `paths`, by input: what a later file measured of an input (a sweep of
    some strategies only) replaces what the files before it measured of the same input (the set name,
    train or heldout, is kept)."""
    inputs = defaultdict(lambda: {"times": {}, "features": {}})
    for path in paths:
        read_file(path, inputs, auto_case)
    return inputs


def with_repetitions_merged(benchmarks):
    """The rows of a Google Benchmark file with each case's repetitions (--benchmark_repetitions=N) merged into one row,
    the first's with the medians of their median_us and real_time; aggregate rows (mean, median, stddev, cv) left
    out (read as times they would replace the case's). Rows without repetitions pass as they are, in order.
    bench_bulk times an input's cases together once and reuses those times while the next case run is of the same
    input, so repetitions are measurements of their own only with --benchmark_enable_random_interleaving=true;
    otherwise they repeat one measurement, and the merge changes nothing."""
    reps = {}
    for b in benchmarks:
        if b.get("run_type") != "aggregate" and b.get("repetitions", 1) > 1:
            reps.setdefault(b["name"], []).append(b)
    done = set()
    for b in benchmarks:
        if b.get("run_type") == "aggregate":
            continue
        if b["name"] not in reps:
            yield b
        elif b["name"] not in done:
            done.add(b["name"])
            yield median_row([r for r in reps[b["name"]] if not r.get("error_occurred")] or reps[b["name"]])


def median_row(runs):
    """One row for several runs of a case: the first's, with the medians of their median_us and real_time."""
    row = dict(runs[0])
    for field in ("median_us", "real_time"):
        if all(field in r for r in runs):
            row[field] = statistics.median(r[field] for r in runs)
    return row


def read_file(path, inputs, auto_case):
    with open(path) as f:
        data = json.load(f)
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    for b in with_repetitions_merged(data["benchmarks"]):
        parts = b["name"].split("/")
        if len(parts) < 8 or parts[0] != "bulk":
            continue
        _, set_, workload, dist, bins, log2n, case = parts[:7]
        key = (set_, workload, dist, int(bins), int(log2n))
        rec = inputs[key]
        # the median the case recorded (perf/bench_bulk.cpp: round_robin, or time_calls in files before it), else the mean
        t = b["median_us"] * 1e-6 if "median_us" in b else b.get("real_time", float("inf")) * unit[b.get("time_unit", "ns")]
        if b.get("error_occurred"):
            t = float("inf")
        if case == "sampling":  # the device-side sampling a choice finished on the device costs
            rec["sampling_time"] = t
            if "line_repeats" in b:  # what the line rule reads (files from 2026-11-28 on)
                rec["line_repeats"] = float(b["line_repeats"])
        elif case == "stats":
            rec["stats_time"] = t
            f = rec["features"]
            f["log2_bins"] = math.log2(int(bins))
            f["log2_items"] = float(log2n)
            f["op_kind"] = 0.0
            for k in ["value_bytes", "is_float", "counting", "fits_block", "warp_level", "block_level", "all_thread_level", "clustering"]:
                f[k] = float(b.get(k, 0.0))
            for k in ["line_share", "hot_share"]:  # files from before them lack them: the fitter then does not test them
                if k in b:
                    f[k] = float(b[k])
            copies = b.get("copies")
            if copies is None:
                copies = replication_for(int(bins), int(f["value_bytes"]), H100_COPY_BUDGET, 8 if f["counting"] else 32) if f["fits_block"] else 0
            f["log2_copies"] = math.log2(copies) if copies > 0 else -1.0
        elif case == auto_case:
            rec["auto"] = t
            rec["auto_ran"] = int(b.get("ran", -1))
        elif case in ("cub", "rocprim"):  # the vendor's histogram (CUDA, HIP)
            rec["cub"] = t
        elif case in STRATEGIES:
            rec["times"][case] = t
        elif case in SCORED_ONLY:
            rec.setdefault("scored_only", {})[case] = t


def complete_inputs(inputs, sampling=None, sampled_path=None, features_from=()):
    """The inputs of read_cases with a "stats" case and every strategy's time, their sampling time, best
    time and losses filled in. A block-local strategy a file did not run on a table that does not fit
    a block counts as failed there, as the forced call does (files from before privatize_adaptive)."""
    # files of later "stats" cases: their statistics replace these inputs'. The statistics are the
    # keys' alone (the same sample plan on every backend), so a case of one workload serves every
    # workload of the same keys (set, distribution, bins, log2 n), and a host run serves a device's.
    later = {}
    for extra in features_from:
        with open(extra) as f:
            for b in json.load(f)["benchmarks"]:
                parts = b["name"].split("/")
                if len(parts) >= 8 and parts[0] == "bulk" and parts[6] == "stats" and not b.get("error_occurred"):
                    later[(parts[1], parts[3], int(parts[4]), int(parts[5]))] = b
    for key, rec in inputs.items():
        # the line repeats the sampling case counted (files from 2026-11-28 on), in the direct scatter's layout
        # (algorithms/bulk/scatter.hpp, direct_lines_of): the feature line_repeats
        if "line_repeats" in rec and "stats_time" in rec:
            rec["features"]["line_repeats"] = rec["line_repeats"]
        b = later.get((key[0], key[2], key[3], key[4]))
        if b is not None and "stats_time" in rec:
            for name in ["warp_level", "block_level", "all_thread_level", "clustering", "line_share", "hot_share"]:
                if name in b:
                    rec["features"][name] = float(b[name])
    for rec in inputs.values():  # calm's feature::block_excess
        f = rec["features"]
        if "warp_level" in f and "block_level" in f:
            f["block_excess"] = f["block_level"] - f["warp_level"]
    out = {}
    for k, r in inputs.items():
        if sampled_path is not None:
            r["stats_time"] = sampled_path
        elif "sampling_time" in r:
            r["stats_time"] = r["sampling_time"]
        elif sampling is not None:
            r["stats_time"] = sampling
        if "stats_time" in r and r["features"].get("fits_block") == 0.0:
            for s in BLOCK_LOCAL:
                r["times"].setdefault(s, float("inf"))
        if "stats_time" in r and all(s in r["times"] for s in STRATEGIES):
            r["best"] = min(r["times"].values())
            r["loss"] = {False: input_loss(r, False), True: input_loss(r, True)}
            out[k] = r
    return out


def loss_rows(inputs, keys, sampled):
    """Per input, per strategy: the loss of choosing it (with the sampling time when `sampled`)."""
    return [inputs[k]["loss"][sampled] for k in keys]


def input_loss(r, sampled):
    """The loss of each strategy on input r: log of its time (plus the sampling time when `sampled`)
    over the best, and eight times more for what falls below 0.9x; a strategy that failed costs 50."""
    extra = r["stats_time"] if sampled else 0.0
    row = []
    for s in STRATEGIES:
        t = r["times"][s]
        if math.isinf(t) or s not in LEAVES:
            row.append(50.0)
            continue
        x = math.log((t + extra) / r["best"])
        row.append(x + 8.0 * max(0.0, x - FLOOR))
    return row


def best_leaf(rows):
    sums = [sum(r[j] for r in rows) for j in range(len(STRATEGIES))]
    j = min(range(len(STRATEGIES)), key=lambda i: (sums[i], i))
    return j, sums[j]


def best_split(inputs, keys, sampled, min_leaf, features=FEATURES):
    """(loss, feature, threshold) of the best single split of `keys`, or None."""
    rows = {s: loss_rows(inputs, keys, s) for s in (sampled, True)}
    best = None
    for f in features:
        if any(f not in inputs[k]["features"] for k in keys):  # a statistic older files did not record
            continue
        child_sampled = sampled or f in SAMPLED
        lr = rows[child_sampled]
        order = sorted(range(len(keys)), key=lambda i: inputs[keys[i]]["features"][f])
        vals = [inputs[keys[i]]["features"][f] for i in order]
        total = [sum(lr[i][j] for i in range(len(keys))) for j in range(len(STRATEGIES))]
        left = [0.0] * len(STRATEGIES)
        for pos in range(len(order) - 1):
            i = order[pos]
            for j in range(len(STRATEGIES)):
                left[j] += lr[i][j]
            if vals[pos] == vals[pos + 1] or pos + 1 < min_leaf or len(order) - pos - 1 < min_leaf:
                continue
            loss = min(left) + min(t - l for t, l in zip(total, left))
            if best is None or loss < best[0] - 1e-12:
                best = (loss, f, (vals[pos] + vals[pos + 1]) / 2)
    return best


def static_splits(inputs, keys, min_leaf, features=FEATURES, most_values=None):
    """Each split of `keys` on a static feature (of at most most_values values, if given) that leaves
    min_leaf inputs on each side: (feature, threshold, [left keys, right keys])."""
    for f in [f for f in features if f not in SAMPLED]:
        vals = sorted({inputs[k]["features"][f] for k in keys})
        if most_values is not None and len(vals) > most_values:
            continue
        for lo, hi in zip(vals, vals[1:]):
            thr = (lo + hi) / 2
            sides = [[k for k in keys if inputs[k]["features"][f] <= thr], [k for k in keys if inputs[k]["features"][f] > thr]]
            if min(len(x) for x in sides) >= min_leaf:
                yield f, thr, sides


def side_loss(inputs, side, sampled, min_leaf, features, deep):
    """The least loss one side of a static split can reach: its best leaf, its best single split, or
    (deep) a static split of few values followed by those (static_then_split)."""
    _, loss = best_leaf(loss_rows(inputs, side, sampled))
    inner = best_split(inputs, side, sampled, min_leaf, features) if len(side) >= 2 * min_leaf else None
    further = static_then_split(inputs, side, sampled, min_leaf, features) if deep and len(side) >= 4 * min_leaf else None
    return min([loss] + [x[0] for x in (inner, further) if x is not None])


def static_then_split(inputs, keys, sampled, min_leaf, features=FEATURES):
    """(loss, feature, threshold) of the best split on a static feature of few values (the type, the op,
    the keys' count) followed on each side by that side's best leaf or single split, or None: a second
    step of lookahead, so that a region such as "float values, four copies" can be cut out before it
    samples (two static splits, then a sampled one)."""
    best = None
    for f, thr, sides in static_splits(inputs, keys, min_leaf, features, most_values=4):
        loss = sum(side_loss(inputs, side, sampled, min_leaf, features, False) for side in sides)
        if best is None or loss < best[0]:
            best = (loss, f, thr)
    return best


def min_gain(n):
    """What a split must save to be taken: it must pay for itself clearly, not fit noise."""
    return 0.02 * n ** 0.5


def grow(inputs, keys, sampled, depth, max_depth, min_leaf, features=FEATURES):
    """A node: {"leaf": j} or {"feature", "threshold", "left", "right"}."""
    leaf_j, leaf_loss = best_leaf(loss_rows(inputs, keys, sampled))
    node = {"leaf": leaf_j, "loss": leaf_loss, "n": len(keys)}
    if depth >= max_depth or len(keys) < 2 * min_leaf:
        return node
    best = best_split(inputs, keys, sampled, min_leaf, features)

    def look_through(deep):
        """The best static split whose sides then gain by their best leaf or single split (deep: or by a
        static split of few values and then that): a split that gains nothing itself may let each side
        sample only where sampling pays (greedy CART cannot see that)."""
        found = None
        for f, thr, sides in static_splits(inputs, keys, min_leaf, features):
            loss = sum(side_loss(inputs, side, sampled, min_leaf, features, deep) for side in sides)
            if loss < leaf_loss - min_gain(len(keys)) and (found is None or loss < found[0]):
                found = (loss, f, thr)
        return found

    gains = lambda b: b is not None and b[0] <= leaf_loss - min_gain(len(keys))  # noqa: E731
    if not gains(best) and depth + 1 < max_depth:
        best = look_through(False) or best
    if not gains(best) and LOOKAHEAD > 1 and depth + 2 < max_depth:
        best = look_through(True) or best
    if best is None or best[0] > leaf_loss - min_gain(len(keys)):
        return node
    _, f, thr = best
    lk = [k for k in keys if inputs[k]["features"][f] <= thr]
    rk = [k for k in keys if inputs[k]["features"][f] > thr]
    child_sampled = sampled or f in SAMPLED
    return {"feature": f, "threshold": thr, "n": len(keys),
            "left": grow(inputs, lk, child_sampled, depth + 1, max_depth, min_leaf, features),
            "right": grow(inputs, rk, child_sampled, depth + 1, max_depth, min_leaf, features)}


def collapse(node):
    """Merge splits whose two sides end in the same single strategy."""
    if "leaf" in node:
        return node
    node["left"], node["right"] = collapse(node["left"]), collapse(node["right"])
    if "leaf" in node["left"] and "leaf" in node["right"] and node["left"]["leaf"] == node["right"]["leaf"]:
        return {"leaf": node["left"]["leaf"], "n": node["n"]}
    return node


def fit(inputs, keys, max_depth=6, min_leaf=3, features=FEATURES):
    """The tree over `features` (those a left-out input lacks are left out of its tree)."""
    return collapse(grow(inputs, keys, False, 0, max_depth, min_leaf, features))


def relabel(tree, inputs, keys, sampled=False):
    """The tree with its splits kept and each leaf's strategy picked again, as grow() picks it, from the
    training inputs that reach it (a leaf no input reaches keeps its strategy); the counts are those
    inputs'. For a strategy whose times changed: the same questions, the answers measured again."""
    if "leaf" in tree:
        return {"leaf": best_leaf(loss_rows(inputs, keys, sampled))[0] if keys else tree["leaf"], "n": len(keys)}
    f, thr = tree["feature"], tree["threshold"]
    child_sampled = sampled or f in SAMPLED
    return {"feature": f, "threshold": thr, "n": len(keys),
            "left": relabel(tree["left"], inputs, [k for k in keys if inputs[k]["features"][f] <= thr], child_sampled),
            "right": relabel(tree["right"], inputs, [k for k in keys if inputs[k]["features"][f] > thr], child_sampled)}


def regrow(tree, inputs, keys, at, max_depth, sampled=False, seen=None, features=FEATURES):
    """The tree (read_model's) with each node whose line in the model file is in `at` (a leaf, or an
    inner node with all it holds) replaced by a subtree grown, as fit() grows one (the same loss,
    sampling charge and lookahead, within max_depth), from the training inputs that reach it; every
    other node kept (the counts are those inputs'). A grown node where no split pays becomes a leaf of
    the strategy picked again; one that no input reaches is kept. The grown subtrees test only `features`."""
    top = seen is None
    seen = set() if top else seen
    i = tree["row"]
    seen.add(i)
    if i in at and keys:
        out = collapse(grow(inputs, keys, sampled, 0, max_depth, GROW_MIN_LEAF, features))
    elif "leaf" in tree:
        out = dict(tree, n=len(keys))
    else:
        f, thr = tree["feature"], tree["threshold"]
        child_sampled = sampled or f in SAMPLED
        out = {"feature": f, "threshold": thr, "n": len(keys),
               "left": regrow(tree["left"], inputs, [k for k in keys if inputs[k]["features"][f] <= thr], at, max_depth, child_sampled, seen,
                              features),
               "right": regrow(tree["right"], inputs, [k for k in keys if inputs[k]["features"][f] > thr], at, max_depth, child_sampled, seen,
                               features)}
    if top and set(at) - seen:
        sys.exit("fit_tree: no node " + " ".join(map(str, sorted(set(at) - seen))) + " in the tree")
    return out


def counted(tree, inputs, keys):
    """The tree as it is, each node's count the training inputs that reach it."""
    if "leaf" in tree:
        return dict(tree, n=len(keys))
    f, thr = tree["feature"], tree["threshold"]
    return dict(tree, n=len(keys), left=counted(tree["left"], inputs, [k for k in keys if inputs[k]["features"][f] <= thr]),
                right=counted(tree["right"], inputs, [k for k in keys if inputs[k]["features"][f] > thr]))


def guarded(tree, leaf, feature, threshold, fallback, larger=False):
    """The tree with each leaf of strategy `leaf` on a table larger than a block (the left side of a fits_block
    test) made a test of `feature`: at most `threshold` -> `fallback`, above -> the leaf. A prior, not a fit:
    where the statistics say little, the candidate whose worst case is mild."""
    if "leaf" in tree:
        if larger and STRATEGIES[tree["leaf"]] == leaf:
            return {"feature": feature, "threshold": threshold, "n": 0, "left": {"leaf": STRATEGIES.index(fallback), "n": 0}, "right": dict(tree)}
        return tree
    return dict(tree, left=guarded(tree["left"], leaf, feature, threshold, fallback, larger or tree["feature"] == "fits_block"),
                right=guarded(tree["right"], leaf, feature, threshold, fallback, larger))


def raised(tree, leaves, feature, threshold, target, integers=False, larger=False, is_float=None):
    """The tree with each leaf of a strategy in `leaves` on a table larger than a block made a test of `feature`: above
    `threshold` -> `target`, at most -> the leaf; with `integers`, only for integer tables (an is_float test first where
    the path has not made one). A prior, not a fit: for what the training inputs do not show."""
    if "leaf" in tree:
        if not larger or STRATEGIES[tree["leaf"]] not in leaves or (integers and is_float == 1):
            return tree
        test = {"feature": feature, "threshold": threshold, "n": 0, "left": dict(tree), "right": {"leaf": STRATEGIES.index(target), "n": 0}}
        if integers and is_float is None:
            return {"feature": "is_float", "threshold": 0.5, "n": 0, "left": test, "right": dict(tree)}
        return test
    f = tree["feature"]
    left_float, right_float = (0, 1) if f == "is_float" else (is_float, is_float)
    return dict(tree, left=raised(tree["left"], leaves, feature, threshold, target, integers, larger or f == "fits_block", left_float),
                right=raised(tree["right"], leaves, feature, threshold, target, integers, larger, right_float))


def predict(tree, features):
    """(strategy, whether the path sampled)."""
    sampled = False
    while "leaf" not in tree:
        sampled |= tree["feature"] in SAMPLED
        if tree["feature"] not in features:
            sys.exit(f"fit_tree: the tree tests {tree['feature']}, which this file did not record")
        tree = tree["left"] if features[tree["feature"]] <= tree["threshold"] else tree["right"]
    return STRATEGIES[tree["leaf"]], sampled


def chosen_time(inputs, k, tree):
    """The time of the tree's choice on input k, as calm::scatter runs it: a block-local or cluster
    strategy on a table too large for it becomes hot_key (algorithms/bulk/scatter.hpp, fitting_strategy)."""
    s, sampled = predict(tree, inputs[k]["features"])
    r = inputs[k]
    if math.isinf(r["times"][s]):
        s = "hot_key"
    return r["times"][s] + (r["stats_time"] if sampled else 0.0), s


# algorithms/choice/line_merge_rule.hpp: the default rule's reach (8-byte values above this many bytes of table merge always)
WIDE_MAX_TABLE_BYTES = 16 << 20


def line_rule_rows(tree, inputs, keys, thresholds):
    """Markdown rows: for each number of repeats M, automatic's line rule on the training inputs where the
    tree ends at peer_reduce and the sampling counted line repeats: naive where a warp repeats a key on a
    table line M times or fewer (line_merge_rule::merges), as calm runs the choice on the device."""
    ks = [k for k in keys if "line_repeats" in inputs[k] and predict(tree, inputs[k]["features"])[0] == "peer_reduce"]
    rows = [f"\nThe line rule (algorithms/choice/line_merge_rule.hpp) on the {len(ks)} training inputs where the tree ends at "
            "peer_reduce and the sampling counted line repeats (speed over the best, sampling included; 8-byte values into more "
            f"than {WIDE_MAX_TABLE_BYTES >> 20} MiB of table always merge):\n",
            "| min_line_repeats | naive on | geo mean | min | below 0.9 | worst input |", "| --- | --- | --- | --- | --- | --- |"]
    for m in thresholds:
        xs = []
        naive = 0
        for k in ks:
            r = inputs[k]
            f = r["features"]
            wide_off = f["value_bytes"] > 4 and (2 ** f["log2_bins"]) * f["value_bytes"] > WIDE_MAX_TABLE_BYTES
            lr = r["line_repeats"]
            s = "naive" if m > 0 and not wide_off and 0 <= lr <= m else "peer_reduce"
            naive += s == "naive"
            xs.append((r["best"] / (r["times"][s] + r["stats_time"]), k))
        if not xs:
            break
        worst = min(xs)
        rows.append(f"| {m:g} | {naive} | {geo([x for x, _ in xs]):.3f} | {worst[0]:.3f} | {sum(x < 0.9 for x, _ in xs)} | "
                    f"{'/'.join(map(str, worst[1][1:]))} |")
    return rows


def flatten(tree):
    """Preorder nodes as (feature, threshold, left, right, strategy) with indices."""
    nodes = []

    def walk(t):
        i = len(nodes)
        nodes.append(None)
        if "leaf" in t:
            nodes[i] = ("log2_bins", 0.0, -1, -1, STRATEGIES[t["leaf"]], t.get("n", 0))
        else:
            left = walk(t["left"])
            right = walk(t["right"])
            nodes[i] = (t["feature"], t["threshold"], left, right, "automatic", t.get("n", 0))
        return i

    walk(tree)
    return nodes


# the most nodes calm carries of a walk to the device (algorithms/choice/choose.hpp, tree_walk::most_nodes): a call
# whose walk below the known tests holds more waits for the host to finish it (15-35 us on an H100)
MOST_WALK_NODES = 47


def most_walk_nodes(tree):
    """The most nodes a walk below the known tests can hold (a bound, as choose.hpp's most_walk_nodes)."""
    if "leaf" in tree:
        return 1
    l, r = most_walk_nodes(tree["left"]), most_walk_nodes(tree["right"])
    return 1 + l + r if tree["feature"] in SAMPLED else max(l, r)


def write_model(tree, path, source, family):
    print(f"fit_tree: {path} fitted from {source}", file=sys.stderr)
    walk = most_walk_nodes(tree)
    if walk > MOST_WALK_NODES:
        sys.exit(f"fit_tree: a walk of this tree may hold {walk} nodes, more than calm carries to the device ({MOST_WALK_NODES}): "
                 "fit a shallower tree (--max-depth, --grow-depth)")
    nodes = flatten(tree)
    with open(path, "w") as f:
        # where it came from is the fit's report's and perf/results/README.md's to say, not the model's
        f.write(f"// The {family} tree of the automatic choice (algorithms/choice/choose.hpp), written by perf/fit_tree.py from the\n")
        f.write("// bulk sweep's training inputs. One node per line: {test, threshold, left (<= threshold), right, leaf strategy};\n")
        f.write("// a leaf has left = right = -1. The comment says how many training inputs reached the node.\n")
        for i, (feat, thr, l, r, s, n) in enumerate(nodes):
            f.write(f"/* {i:2d} */ {{feature::{feat}, {thr:.6g}, {l}, {r}, strategy::{s}}},  // {n} inputs\n")


def read_model(path):
    """The tree of a model file (write_model's format) as fit() returns it."""
    rows = []
    pat = re.compile(r"\{feature::(\w+), ([-+0-9.eE]+), (-?\d+), (-?\d+), strategy::(\w+)\}")
    with open(path) as f:
        for line in f:
            m = pat.search(line)
            if m:
                rows.append((m.group(1), float(m.group(2)), int(m.group(3)), int(m.group(4)), m.group(5)))

    def node(i):  # "row": the node's line in the file (regrow names nodes by it)
        feat, thr, left, right, leaf = rows[i]
        if left < 0:
            return {"leaf": STRATEGIES.index(leaf), "n": 0, "row": i}
        return {"feature": feat, "threshold": thr, "left": node(left), "right": node(right), "n": 0, "row": i}

    if not rows:
        sys.exit("fit_tree: no tree nodes in " + path)
    return node(0)


def describe(tree, indent=""):
    if "leaf" in tree:
        return f"{indent}-> {STRATEGIES[tree['leaf']]} ({tree.get('n', 0)} inputs)\n"
    s = f"{indent}{tree['feature']} <= {tree['threshold']:.4g} ({tree['n']} inputs)\n"
    return s + describe(tree["left"], indent + "    ") + f"{indent}{tree['feature']} > {tree['threshold']:.4g}\n" + describe(tree["right"], indent + "    ")


def emit(lines, path):
    """Print a report, and write it to `path` if given."""
    text = "\n".join(lines) + "\n"
    if path:
        with open(path, "w") as f:
            f.write(text)
    print(text)


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


_loo_data = None  # (inputs, keys, max_depth) of the leave-one-out, for worker processes


def leave_one_out(i):
    """(speed over the best, strategy) of input i chosen by a tree fitted to the other inputs (with a
    --grow: the read tree with its grown nodes grown from the others)."""
    inputs, keys, max_depth = _loo_data[:3]
    k = keys[i]
    has = [f for f in FEATURES if f in inputs[k]["features"]]  # an input from before a statistic: a tree without it
    others = keys[:i] + keys[i + 1:]
    if len(_loo_data) > 3:
        read, at, grow_depth, features = _loo_data[3:]
        t = regrow(read, inputs, others, at, grow_depth, features=[f for f in features if f in has])
    else:
        t = fit(inputs, others, max_depth=max_depth, features=has)
    t, s = chosen_time(inputs, k, t)
    return inputs[k]["best"] / t, s


def reaches(tree, features, rows):
    """Whether the walk of an input with `features` through a read tree passes a node whose line is in `rows`."""
    while True:
        if tree["row"] in rows:
            return True
        if "leaf" in tree:
            return False
        tree = tree["left"] if features[tree["feature"]] <= tree["threshold"] else tree["right"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train", nargs="+", help="training files; what a later file measured of an input (every case, or some strategies alone) replaces "
                                               "what the files before it measured of the same input")
    ap.add_argument("--family", required=True)
    ap.add_argument("--out")
    ap.add_argument("--report")
    ap.add_argument("--no-loo", action="store_true", help="skip leave-one-out")
    ap.add_argument("--by-distribution", action="store_true",
                    help="also leave one training distribution out at a time: a tree fitted to the others scores each input of it "
                         "(new distributions, as the held-out set has; one fit per distribution)")
    ap.add_argument("--jobs", type=int, default=1, help="processes for the leave-one-out (each fits one tree per left-out input)")
    ap.add_argument("--sampling-us", type=float, help="the sampling time of inputs without a 'sampling' case (files from before it)")
    ap.add_argument("--sampled-path-us", type=float,
                    help="what a sampled choice adds to every input, overriding the files' sampling cases: automatic's time less "
                         "the forced time of the strategy it ran, measured (sampling kernel, the launches behind the choice)")
    ap.add_argument("--heldout", nargs="+", help="held-out files (a later one's cases replacing an earlier one's, as for training): predict "
                                                  "the fitted tree's score on them from their forced times (before measuring)")
    ap.add_argument("--heldout-path-us", type=float,
                    help="the sampled path's cost in the held-out prediction (default: as for training), so that trees fitted "
                         "at different costs are predicted at the one a call pays")
    ap.add_argument("--max-depth", type=int, default=6, help="the deepest a leaf may lie (the root at 0)")
    ap.add_argument("--tree", help="a model file (algorithms/choice/models/*.inc) to report and predict instead of fitting one")
    ap.add_argument("--relabel", action="store_true",
                    help="with --tree: keep its splits and pick each leaf's strategy again from the training files (after a "
                         "strategy's times were measured again; a split whose two sides then pick one strategy becomes a leaf); --out writes the result")
    ap.add_argument("--grow", nargs="+", type=int, metavar="NODE",
                    help="with --tree: keep it and replace each of these nodes (lines of the model file, from 0: a leaf, or an inner "
                         "node with its whole subtree) by a subtree fitted to the training inputs that reach it (splits of its own "
                         "where they pay, else one leaf of the strategy picked again); --out writes the result. With --loo-grown, "
                         "leave-one-out over the inputs that reach them")
    ap.add_argument("--grow-depth", type=int, default=1, help="the depth of each --grow subtree (1: one split)")
    ap.add_argument("--grow-min-leaf", type=int, default=3, help="the fewest training inputs a leaf of a --grow subtree holds")
    ap.add_argument("--loo-grown", action="store_true",
                    help="with --grow: leave-one-out over the training inputs that reach the grown nodes (each chosen by the tree "
                         "with those nodes grown from the other inputs)")
    ap.add_argument("--grow-without", nargs="+", default=[], choices=FEATURES, metavar="FEATURE",
                    help="features the --grow subtrees may not test (block_level: a choice on a table larger than a block "
                         "then samples without counting keys per block, as calm does where the tree reads no block level)")
    ap.add_argument("--features", nargs="+", default=[],
                    help="files of later stats cases (--benchmark_filter=/stats/) whose statistics replace those of the training "
                         "and held-out inputs with the same keys (set, distribution, bins, log2 n; any workload, any backend: a statistic "
                         "added since those were measured)")
    ap.add_argument("--line-rule", nargs="+", type=float, metavar="M",
                    help="report automatic's line rule with each of these min_line_repeats on the training inputs where the tree "
                         "ends at peer_reduce (files whose sampling case counted line_repeats)")
    ap.add_argument("--list-larger", metavar="FILE",
                    help="write the training inputs whose table is larger than a block, as --list-fitting does (a sweep of every strategy "
                         "on the inputs whose choice samples), and stop")
    ap.add_argument("--list-fitting", metavar="FILE",
                    help="write the training inputs whose table fits a block, one per line, for CALM_BULK_SET=list (a sweep of the "
                         "block-local strategies alone, whose file then follows these in the training files), and stop")
    ap.add_argument("--guard", metavar="LEAF:FEATURE:THRESHOLD:FALLBACK",
                    help="with --tree: every LEAF on a table larger than a block becomes a test of FEATURE, FALLBACK at or below "
                         "THRESHOLD (e.g. hot_key:block_excess:-0.044:peer_reduce); --out writes the result with its training counts")
    ap.add_argument("--raise", dest="raise_", metavar="LEAVES:FEATURE:THRESHOLD:TARGET",
                    help="with --tree: every leaf of a strategy in LEAVES (comma-separated) on a table larger than a block becomes a test "
                         "of FEATURE, TARGET above THRESHOLD (e.g. peer_reduce,scan_reduce,naive:hot_share:0.003:hot_key); --out writes "
                         "the result with its training counts")
    ap.add_argument("--raise-integers", action="store_true", help="with --raise: only on integer tables")
    a = ap.parse_args()
    global GROW_MIN_LEAF
    GROW_MIN_LEAF = a.grow_min_leaf
    if a.list_fitting or a.list_larger:
        raw = read_cases(a.train)
        with open(a.list_fitting or a.list_larger, "w") as f:
            for k in sorted(raw, key=lambda k: (k[0], k[2], k[3], k[4], k[1])):  # one input's keys serve its three workloads in a row
                if raw[k]["features"].get("fits_block") == (1.0 if a.list_fitting else 0.0):
                    f.write(" ".join(str(x) for x in k) + "\n")
        return
    us = lambda v: v * 1e-6 if v is not None else None  # noqa: E731
    inputs = complete_inputs(read_cases(a.train), us(a.sampling_us), us(a.sampled_path_us), features_from=a.features)
    keys = sorted(inputs)
    if not keys:
        sys.exit("fit_tree: no complete bulk inputs in " + " ".join(a.train))
    source = " + ".join(a.train)
    if a.grow and (a.relabel or not a.tree):
        sys.exit("fit_tree: --grow takes a --tree and no --relabel")
    tree = read_model(a.tree) if a.tree else fit(inputs, keys, max_depth=a.max_depth)
    read = tree
    grow_features = [f for f in FEATURES if f not in a.grow_without]
    if a.tree and a.relabel:
        tree = collapse(relabel(tree, inputs, keys))
        source = "the splits of " + a.tree + " with its leaves picked again from " + source
    elif a.tree and a.grow:
        tree = regrow(tree, inputs, keys, set(a.grow), a.grow_depth, features=grow_features)
        without = f" without {' '.join(a.grow_without)}" if a.grow_without else ""
        leaves = f" (leaves of {a.grow_min_leaf} inputs or more)" if a.grow_min_leaf != 3 else ""
        source = a.tree + f" with nodes {' '.join(map(str, a.grow))} grown to depth {a.grow_depth}{without}{leaves} from " + source
    elif a.tree and a.guard:
        leaf, feat, thr, fallback = a.guard.split(":")
        if leaf not in STRATEGIES or fallback not in STRATEGIES or feat not in FEATURES:
            sys.exit("fit_tree: --guard LEAF:FEATURE:THRESHOLD:FALLBACK names strategies and a feature")
        tree = counted(guarded(tree, leaf, feat, float(thr), fallback), inputs, keys)
        source = a.tree + f" with its {leaf} leaves beyond a block guarded ({feat} <= {thr}: {fallback}), over " + source
    elif a.tree and a.raise_:
        leaves, feat, thr, target = a.raise_.split(":")
        leaves = leaves.split(",")
        if any(x not in STRATEGIES for x in leaves + [target]) or feat not in FEATURES:
            sys.exit("fit_tree: --raise LEAVES:FEATURE:THRESHOLD:TARGET names strategies and a feature")
        tree = counted(raised(tree, leaves, feat, float(thr), target, a.raise_integers), inputs, keys)
        where = " on integer tables" if a.raise_integers else ""
        source = a.tree + f" with its {','.join(leaves)} leaves beyond a block raised{where} ({feat} > {thr}: {target}), over " + source
    elif a.tree:
        source = a.tree + " (read, not fitted), over " + source
    if a.tree and not (a.grow and a.loo_grown):
        a.no_loo = True  # leave-one-out fits a tree to the others
    if a.out:
        write_model(tree, a.out, source, a.family)
    lines = [f"# The {a.family} strategy tree: fit and leave-one-out\n", f"Training files: `{source}`, {len(keys)} inputs.\n",
             "```", describe(tree).rstrip(), "```\n"]
    fixed = {s: [inputs[k]["best"] / inputs[k]["times"][s] for k in keys] for s in STRATEGIES}
    lines.append("Fixed strategies over the training inputs (speed as a fraction of the per-input best, geometric mean; min):\n")
    lines.append("| strategy | geo mean | min |\n| --- | --- | --- |")
    for s in STRATEGIES:
        xs = [x for x in fixed[s] if x > 0]
        lines.append(f"| {s} | {geo(xs):.3f} | {min(fixed[s]):.3f} |")
    xs = [inputs[k]["best"] / chosen_time(inputs, k, tree)[0] for k in keys]
    lines.append(f"\nThe tree on its training inputs (speed over the best, sampling included): geo mean {geo(xs):.3f}, "
                 f"min {min(xs):.3f}, {sum(x < 0.9 for x in xs)} below 0.9.")
    if a.line_rule:
        lines += line_rule_rows(tree, inputs, keys, a.line_rule)
    if a.heldout:
        path_us = a.heldout_path_us if a.heldout_path_us is not None else a.sampled_path_us
        held = complete_inputs(read_cases(a.heldout), us(a.sampling_us), us(path_us), features_from=a.features)
        xs = [(held[k]["best"] / chosen_time(held, k, tree)[0], k) for k in sorted(held)]
        sampled = [x for x, k in xs if predict(tree, held[k]["features"])[1]]
        lines.append(f"\nPredicted on `{' + '.join(a.heldout)}` ({len(xs)} inputs, from their forced times plus the sampled path's cost): "
                     f"geo mean {geo([x for x, _ in xs]):.3f}, min {min(x for x, _ in xs):.3f}, {sum(x < 0.9 for x, _ in xs)} below 0.9; "
                     f"{len(sampled)} sampled, geo mean {geo(sampled) if sampled else 1.0:.3f}.")
        below = sorted((x, k) for x, k in xs if x < 0.9)
        if below:
            lines.append("\nPredicted below 0.9: " + "; ".join(f"{'/'.join(map(str, k))} {x:.3f} ({chosen_time(held, k, tree)[1]})" for x, k in below) + ".")
    if not a.no_loo:
        by_wl = defaultdict(list)
        global _loo_data
        loo_keys = keys
        if a.tree:  # --grow --loo-grown: the inputs that reach the grown nodes, each left out of their growing
            loo_keys = [k for k in keys if reaches(read, inputs[k]["features"], set(a.grow))]
            _loo_data = (inputs, loo_keys, a.max_depth, read, set(a.grow), a.grow_depth, grow_features)
        else:
            _loo_data = (inputs, keys, a.max_depth)
        if a.jobs > 1:
            import multiprocessing
            with multiprocessing.get_context("fork").Pool(a.jobs) as pool:
                results = pool.map(leave_one_out, range(len(loo_keys)), chunksize=8)
        else:
            results = [leave_one_out(i) for i in range(len(loo_keys))]
        for k, (x, s) in zip(loo_keys, results):
            by_wl[k[1]].append((x, k, s))
        whom = (f"the {len(loo_keys)} inputs that reach nodes {' '.join(map(str, a.grow))} of {a.tree}, each chosen by that tree with "
                "those nodes grown from the others") if a.tree else "each input chosen by a tree fitted to the others"
        lines.append(f"\nLeave-one-out ({whom}; speed over the best, sampling included):\n")
        lines.append("| workload | inputs | geo mean | min | % off optimal | worst input (chose) |\n| --- | --- | --- | --- | --- | --- |")
        allx = []
        for wl in sorted(by_wl):
            xs = [x for x, _, _ in by_wl[wl]]
            allx += xs
            worst = min(by_wl[wl])
            lines.append(f"| {wl} | {len(xs)} | {geo(xs):.3f} | {min(xs):.3f} | {100 * (1 / geo(xs) - 1):.1f}% | "
                         f"{worst[1][2]}/{worst[1][3]} ({worst[2]}) |")
        lines.append(f"| all | {len(allx)} | {geo(allx):.3f} | {min(allx):.3f} | {100 * (1 / geo(allx) - 1):.1f}% | |")
    if a.by_distribution and not a.tree:
        lines.append("\nLeave one distribution out (each input chosen by a tree fitted to the other distributions' inputs; "
                     "speed over the best, sampling included):\n")
        lines.append("| distribution | inputs | geo mean | min | below 0.9 |\n| --- | --- | --- | --- | --- |")
        allx = []
        for d in sorted({k[2] for k in keys}):
            dk = [k for k in keys if k[2] == d]
            has = [f for f in FEATURES if all(f in inputs[k]["features"] for k in dk)]  # as leave_one_out does
            t = fit(inputs, [k for k in keys if k[2] != d], max_depth=a.max_depth, features=has)
            xs = [inputs[k]["best"] / chosen_time(inputs, k, t)[0] for k in dk]
            allx += xs
            lines.append(f"| {d} | {len(xs)} | {geo(xs):.3f} | {min(xs):.3f} | {sum(x < 0.9 for x in xs)} |")
        lines.append(f"| all | {len(allx)} | {geo(allx):.3f} | {min(allx):.3f} | {sum(x < 0.9 for x in allx)} |")
    emit(lines, a.report)


if __name__ == "__main__":
    main()
