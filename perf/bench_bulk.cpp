// SPDX-License-Identifier: Apache-2.0
// The bulk front door (calm::scatter, calm::histogram) with every strategy forced and with
// strategy::automatic (sampling included), beside cub::DeviceHistogram (CUDA; rocprim::histogram_even on HIP), on the training inputs the
// tree is fitted to and on held-out inputs (new distributions, table sizes and key counts). The
// "stats" case of each input records its collision statistics and their sampling time.
//
//   CALM_BULK_SET=train   bulk/train/...    12 distributions x 23 table sizes x 3 workloads, 2^25 keys
//   CALM_BULK_SET=train_items  bulk/train/... the same distributions from 6,144 entries up with 2^23 keys
//   CALM_BULK_SET=train_coo    bulk/train/... coo_rows (sorted row indices of a sparse matrix) with 2^25 keys,
//                                           and from 6,144 entries up with 2^23
//   CALM_BULK_SET=train_window bulk/train/... window16 and window64 (uniform over a sixteenth or a 64th of the
//                                           table) in tables larger than a block (from 65,536 entries), 2^25 and 2^23 keys
//   CALM_BULK_SET=train_sorted bulk/train/... sorted (uniform keys, sorted) as train_coo: every table size with 2^25
//                                           keys, from 6,144 entries up with 2^23 (in training since 2026-11-28)
//   CALM_BULK_SET=heldout bulk/heldout/...  6 distributions at new table sizes with 2^24 and 2^26 keys (5 new ones,
//                                           and sorted: in training since 2026-11-28, so held out by size alone), and
//                                           5 more training ones at new table sizes with 2^24 keys
//   CALM_BULK_SET=fresh   bulk/fresh/...    7 families of perf/fresh_keys.hpp x 4 table sizes (256 to 2^20) x histogram
//                                           and float scatter, 2^26 keys: final evaluations only, never fitted or tuned on
//   CALM_BULK_SET=unseen  bulk/unseen/...   the same for perf/fresh_keys.hpp's 3 other families (unseen_families)
//   CALM_BULK_SET=final   bulk/final/...    the same for its 4 families of the final evaluation (final_families)
//   CALM_BULK_SET=list    bulk/<set>/...    the inputs the file CALM_BULK_LIST names, one per line:
//                                           "set workload distribution bins log2_keys" (fit_tree.py --list-fitting
//                                           writes the training inputs whose table fits a block)
//   (unset)               bulk/demo/...     a few inputs, for the short host sweep
//   CALM_BULK_LINES=0,8   adds the cases automatic_lines0, automatic_lines8: automatic with
//                         scatter_options::min_line_repeats 0 (every block of peer_reduce merges), 8
//                         (eval_tree.py --automatic automatic_lines8)
// The cases of one input (every strategy, automatic, the vendor's histogram) are timed round-robin in
// one pass (round_robin): each reports the median of its timed calls as one iteration. --benchmark_filter picks the
// cases that take part. calm's cases of an input share one table (shared_table; until 2026-11-28 each had its own).
// perf/fit_tree.py fits the tree to a train file; perf/eval_tree.py scores automatic on a heldout file.
#include "bench_common.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <regex>
#include <sstream>
#include <tuple>

namespace calm_bench {
namespace {

/// The keys of the input being run (one input at a time: the cases of an input are registered together).
backend::device_buffer<std::uint32_t> const& input_keys(std::size_t n, std::uint32_t bins, std::string const& d) {
  static std::string last;
  static std::unique_ptr<backend::device_buffer<std::uint32_t>> keys;
  std::string const id = d + "/" + std::to_string(bins) + "/" + std::to_string(n);
  if (id != last) {
    keys.reset();
    keys = std::make_unique<backend::device_buffer<std::uint32_t>>(bulk_keys(n, bins, d, 7));
    last = id;
  }
  return *keys;
}

template <class T>
backend::device_buffer<T> const& bulk_weights(std::size_t n) {
  static std::unique_ptr<backend::device_buffer<T>> w;
  if (!w || w->size() < n) {
    std::vector<T> h(n);
    for (std::size_t i = 0; i < n; ++i) h[i] = T(1) + static_cast<T>(i % 7) * T(0.25);
    w = std::make_unique<backend::device_buffer<T>>(h);
  }
  return *w;
}

struct input {
  std::string set, workload, dist;  // workload: hist_u32, scatter_f32, scatter_f64
  std::uint32_t bins;
  int log2_n;
};

/// The calls of `in` with strategy s through one plan (T: the table's type; an integer table is hist_u32's
/// histogram, a float one scatter_f32's or scatter_f64's sums): run waits and returns the strategy that ran, run_async only launches. Both share the plan,
/// so its repeated calls are recorded as one graph on CUDA, as a user's repeated plan runs are.
struct planned_calls {
  std::function<calm::strategy()> run, run_async;
  std::function<calm::measurement()> measured;  // a measuring plan's measurement (plan_mode::measure)
};
template <class T>
planned_calls planned_call(input const& in, calm::strategy s, T* table, calm::scatter_options const& opt, calm::default_exec const& ex,
                           calm::plan_mode mode = calm::plan_mode::estimate) {
  index_t const n = index_t(1) << in.log2_n;
  index_t const bins = in.bins;
  std::uint32_t const* pk = input_keys(static_cast<std::size_t>(n), in.bins, in.dist).data();
  return calm::for_strategy(s, [&](auto c) {
    if constexpr (std::is_integral<T>::value) {  // hist_u32
      using plan = calm::histogram_plan<std::uint32_t, T, c()>;
      std::shared_ptr<plan> p;
      if constexpr (c() == calm::strategy::automatic) p = std::make_shared<plan>(n, bins, mode, opt, ex);
      else p = std::make_shared<plan>(n, bins, opt, ex);
      return planned_calls{[=] { return p->run(pk, n, table, bins); }, [=] { return p->run_async(pk, n, table, bins); }, [=] { return p->measured(); }};
    } else {  // scatter_f32, scatter_f64
      T const* w = bulk_weights<T>(static_cast<std::size_t>(n)).data();
      using plan = calm::scatter_plan<calm::plus, std::uint32_t, T, T const*, c()>;
      std::shared_ptr<plan> p;
      if constexpr (c() == calm::strategy::automatic) p = std::make_shared<plan>(calm::plus{}, n, bins, mode, opt, ex);
      else p = std::make_shared<plan>(calm::plus{}, n, bins, opt, ex);
      return planned_calls{[=] { return p->run(pk, w, n, table, bins); }, [=] { return p->run_async(pk, w, n, table, bins); },
                           [=] { return p->measured(); }};
    }
  });
}

/// The default exec, with the graphs of repeated decided calls off where `graphs` is false (CUDA).
template <class Exec>
Exec exec_with(bool graphs) {
  Exec ex{};
  if constexpr (calm::detail::records_launches<Exec>::value) ex.launch_graphs = graphs;
  else (void)graphs;
  return ex;
}

/// Times call() once per iteration, after at least 10 ms of the same calls (the clocks of a device
/// that sat idle while the host made the keys rise; a CUDA exec records its graph at the second call).
/// Records the median iteration as "median_us": Google Benchmark's time is the mean, which one
/// late iteration (the host descheduled, say) moves by more than the differences between strategies.
template <class Call>
void time_calls(benchmark::State& state, Call&& call) {
  auto const start = std::chrono::steady_clock::now();
  for (int i = 0; i < 2 || std::chrono::steady_clock::now() - start < std::chrono::milliseconds(10); ++i) {
    call();
    backend::synchronize();  // 10 ms of the device's time, not of calls queued faster than it runs them
  }
  std::vector<double> times;
  for (auto _ : state) {
    times.push_back(time_device(call));
    state.SetIterationTime(times.back());
  }
  if (times.empty()) return;
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  state.counters["median_us"] = times[times.size() / 2] * 1e6;
}

/// One case of an input in the round-robin timing: its call, what automatic ran, its times.
struct timed_case {
  std::string name;
  std::function<void()> call;  // one call; holds the input's table (the vendor's: its own, and its temporary storage)
  calm::strategy ran = calm::strategy::automatic;
  calm::measurement measured;  // a measuring plan's ("measured")
  std::string error;
  std::vector<double> times, firsts, submits;  // seconds: device work (second and first calls), and the host's part (until the call returns)
};

/// The table every calm case of an input scatters into: one allocation, so that the cases compare on
/// the same memory. Each case with its own table, the same kernel took two levels up to 9% apart by
/// the table's allocation where the table fits the L2 (hist_u32 hotset over 5,000,000 entries at 2^24
/// keys, forced scan_reduce: 220 against 242 us on an H200, perf/probe_table_placement.cu), and a case
/// could beat or trail another by that alone.
template <class T>
using shared_table = std::shared_ptr<backend::device_buffer<T>>;

/// The case of strategy s (forced, or automatic) into `table`, through one plan; `graphs` false: automatic without
/// the graph a CUDA plan records for its repeated runs (every call launches its kernels one by one).
/// `min_line_repeats`: scatter_options::min_line_repeats of every call (negative: the exec's default).
template <class T>
timed_case strategy_case(input const& in, shared_table<T> const& table, std::string name, calm::strategy s, bool graphs,
                         float min_line_repeats = -1.0f, calm::plan_mode mode = calm::plan_mode::estimate) {
  timed_case c{std::move(name)};
  calm::default_exec const ex = exec_with<calm::default_exec>(graphs);
  calm::scatter_options opt;
  opt.min_line_repeats = min_line_repeats;
  try {
    planned_calls const calls = planned_call(in, s, table->data(), opt, ex, mode);
    c.ran = calls.run();  // the strategy automatic picks (read back where the device chose); a measuring plan measures
    c.measured = calls.measured();
    c.call = [calls, table] { calls.run_async(); };
  } catch (calm::error const& e) {
    c.error = e.what();
  }
  return c;
}

/// The thresholds of the "automatic_lines<M>" cases: automatic with scatter_options::min_line_repeats
/// = M, from CALM_BULK_LINES (a comma-separated list, e.g. "8,10,12"; unset: no such case).
std::vector<std::string> const& line_rule_cases() {
  static std::vector<std::string> const names = [] {
    std::vector<std::string> v;
    char const* e = std::getenv("CALM_BULK_LINES");
    std::stringstream list(e ? e : "");
    for (std::string m; std::getline(list, m, ',');) {
      if (m.empty()) continue;
      char* end = nullptr;
      float const x = std::strtof(m.c_str(), &end);
      if (end != m.c_str() + m.size() || !(x >= 0.0f))
        throw calm::error(calm::errc::invalid_argument, "bulk sweep: CALM_BULK_LINES wants numbers of repeats, 0 or more, separated by commas; got \"" + m + "\"");
      v.push_back("automatic_lines" + m);
    }
    return v;
  }();
  return names;
}

#if defined(CALM_BENCH_VENDOR)
timed_case vendor_timed_case(input const& in) {
  timed_case c{CALM_BENCH_VENDOR};
  std::size_t const n = std::size_t(1) << in.log2_n;
  std::uint32_t const* pk = input_keys(n, in.bins, in.dist).data();
  auto hist = std::make_shared<backend::device_buffer<std::uint32_t>>(in.bins);
  std::size_t temp_bytes = 0;
  try {
    vendor_histogram_even(nullptr, temp_bytes, pk, hist->data(), in.bins, n);
    auto temp = std::make_shared<backend::device_buffer<unsigned char>>(temp_bytes);
    vendor_histogram_even(temp->data(), temp_bytes, pk, hist->data(), in.bins, n);
    c.call = [=]() mutable { vendor_histogram_even(temp->data(), temp_bytes, pk, hist->data(), in.bins, n); };
  } catch (calm::error const& e) {
    c.error = e.what();
  }
  return c;
}
#endif

/// Whether name is the vendor's histogram (CUB on CUDA, rocPRIM on HIP; none on the host).
bool is_vendor(std::string const& name) {
#if defined(CALM_BENCH_VENDOR)
  return name == CALM_BENCH_VENDOR;
#else
  (void)name;
  return false;
#endif
}

/// The timed cases of an input: every strategy and automatic, automatic without graphs where the exec
/// records them, and the vendor's histogram (hist_u32 up to 2^20 bins: beyond, CUB 2.x of CUDA 13.0
/// ends in an illegal address at 2^24 bins, and the error is sticky).
std::vector<std::string> case_names(input const& in) {
  std::vector<std::string> names;
  for (int s = 0; s < calm::strategy_count; ++s) names.push_back(calm::to_string(static_cast<calm::strategy>(s)));
  names.push_back("measured");
  if (calm::detail::records_launches<calm::default_exec>::value) names.push_back("automatic_launches");
  for (auto const& name : line_rule_cases()) names.push_back(name);
#if defined(CALM_BENCH_VENDOR)
  if (in.workload == "hist_u32" && in.bins <= (1u << 20)) names.push_back(CALM_BENCH_VENDOR);
#else
  (void)in;
#endif
  return names;
}

std::string input_path(input const& in) {
  return "bulk/" + in.set + "/" + in.workload + "/" + in.dist + "/" + std::to_string(in.bins) + "/" + std::to_string(in.log2_n) + "/";
}

/// What Google Benchmark appends to the name of a timed case (registered with Iterations(1) and manual time).
constexpr char const* timed_suffix = "/iterations:1/manual_time";

/// Whether --benchmark_filter selects the benchmark `name` (a regular expression searched for; a
/// leading '-' negates it), as Google Benchmark selects the benchmarks it runs.
bool selected(std::string const& name) {
  std::string f = benchmark::GetBenchmarkFilter();
  if (f.empty() || f == "all") return true;
  bool const negated = f[0] == '-';
  if (negated) f.erase(0, 1);
  return std::regex_search(name, std::regex(f, std::regex::extended)) != negated;
}

template <class T>
timed_case make_case(input const& in, shared_table<T> const& table, std::string const& name) {
#if defined(CALM_BENCH_VENDOR)
  if (is_vendor(name)) return vendor_timed_case(in);
#endif
  if (name == "automatic_launches") return strategy_case<T>(in, table, name, calm::strategy::automatic, false);
  if (name == "measured") return strategy_case<T>(in, table, name, calm::strategy::automatic, true, -1.0f, calm::plan_mode::measure);
  std::string const lines = "automatic_lines";
  if (name.compare(0, lines.size(), lines) == 0)
    return strategy_case<T>(in, table, name, calm::strategy::automatic, true, std::stof(name.substr(lines.size())));
  return strategy_case<T>(in, table, name, calm::strategy_from_string(name), true);
}

/// The cases of the input `in` timed round-robin, once per input: after 10 ms of calls of every case
/// (at least one round: clocks up, graphs recorded), each round calls every case twice in a row and
/// times both calls, starting one case later than the round before, until at least 3 rounds and 30 ms
/// of device time per case (at most 101 rounds; the sweeps of 2026-11-24 ran with at least 9, and a
/// host input of slow cases then took 3x longer than before). A case's time is the median of its second calls
/// ("first_us": of its first calls). Timed one case after another, identical kernels measured up to
/// 14% apart on an H100 (the clocks drift between cases); round-robin, every case sees the same drift.
/// A call right after another case's can take longer than the same call repeated (privatize after
/// 2.9 ms of peer_reduce's device atomics: 57 against 40 us on 2^24 keys), so the second call is the
/// one reported.
template <class T>
std::vector<timed_case> const& round_robin(input const& in) {
  static std::string last;
  static std::vector<timed_case> cases;
  std::string const id = input_path(in);
  if (id == last) return cases;
  cases.clear();
  auto const table = std::make_shared<backend::device_buffer<T>>(in.bins);
  table->fill_bytes(0);
  for (auto const& name : case_names(in))  // the cases this run reports (--benchmark_filter)
    if (selected(input_path(in) + name + timed_suffix)) cases.push_back(make_case<T>(in, table, name));
  last = id;
  std::vector<timed_case*> live;
  for (auto& c : cases)
    if (c.error.empty()) live.push_back(&c);
  if (live.empty()) return cases;
  auto const start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1 || std::chrono::steady_clock::now() - start < std::chrono::milliseconds(10); ++i)
    for (auto* c : live) {
      c->call();
      backend::synchronize();
    }
  double const budget = 0.03 * static_cast<double>(live.size());
  double spent = 0.0;
  for (std::size_t round = 0; round < 101 && (round < 3 || spent < budget); ++round)
    for (std::size_t j = 0; j < live.size(); ++j) {
      timed_case& c = *live[(round + j) % live.size()];
      double const first = time_device(c.call);
      double submit = 0.0;
      double const t = time_device([&] {
        auto const t0 = std::chrono::steady_clock::now();
        c.call();
        submit = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      });
      c.times.push_back(t);
      c.firsts.push_back(first);
      c.submits.push_back(submit);
      spent += first + t;
    }
  return cases;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

/// The case `name` of the input's round-robin timing, reported as one iteration of its median time.
template <class T>
void timed_case_report(benchmark::State& state, input in, std::string name) {
  auto const& cases = round_robin<T>(in);
  auto const c = std::find_if(cases.begin(), cases.end(), [&](timed_case const& x) { return x.name == name; });
  if (c == cases.end() || !c->error.empty()) {
    state.SkipWithError(c == cases.end() ? "no such case" : c->error.c_str());
    return;
  }
  double const t = median(c->times);
  for (auto _ : state) state.SetIterationTime(t);
  std::size_t const n = std::size_t(1) << in.log2_n;
  bool const hist = in.workload == "hist_u32" || is_vendor(name);
  report_bytes(state, static_cast<double>(n) * (sizeof(std::uint32_t) + (hist ? 0 : sizeof(T))), static_cast<double>(n));
  state.counters["median_us"] = t * 1e6;
  state.counters["first_us"] = median(c->firsts) * 1e6;
  state.counters["rounds"] = static_cast<double>(c->times.size());
  state.counters["submit_us"] = median(c->submits) * 1e6;
  if (!is_vendor(name)) state.counters["ran"] = static_cast<double>(static_cast<int>(c->ran));
  if (name == "measured") {  // what measuring cost, in seconds and in this case's calls
    state.counters["measure_s"] = c->measured.seconds;
    state.counters["measure_calls"] = t > 0 ? c->measured.seconds / t : 0.0;
    state.counters["candidates"] = c->measured.count;
  }
}

/// The input's collision statistics, the time to sample them, and the table facts the tree reads.
template <class T>
void stats_case(benchmark::State& state, input in) {
  std::size_t const n = std::size_t(1) << in.log2_n;
  std::uint32_t const* pk = input_keys(n, in.bins, in.dist).data();
  calm::collision_statistics s;
  for (auto _ : state) state.SetIterationTime(time_device([&] { s = calm::collision_stats(pk, static_cast<index_t>(n), in.bins); }));
  state.counters["warp_level"] = s.warp_level;
  state.counters["block_level"] = s.block_level;
  state.counters["all_thread_level"] = s.all_thread_level;
  state.counters["clustering"] = s.clustering;
  state.counters["line_share"] = s.line_share;
  state.counters["hot_share"] = s.hot_share;
  state.counters["line_repeats"] = s.line_repeats;  // collision_stats' layout: a 4-byte direct scatter's (8-byte ones count 1-entry lines)
  state.counters["value_bytes"] = sizeof(T);
  state.counters["is_float"] = std::is_floating_point<T>::value;
  state.counters["counting"] = in.workload == "hist_u32";
  calm::default_exec const ex{};
  bool const fits = in.bins <= calm::privatize_capacity<T>(ex);
  state.counters["fits_block"] = fits;
  state.counters["copies"] = fits ? calm::replication_for(in.bins, sizeof(T), ex.replication_budget_bytes(), in.workload == "hist_u32" ? 8 : 32) : 0;
}

/// What a choice finished on the device adds: the sampling kernel (launched, then waited for, less
/// the time of a wait alone). Medians of the iterations. "line_repeats": the repeats per warp of a key on a table
/// line that automatic's line rule reads (line_merge_rule; fit_tree.py --line-rule).
template <class T>
void sampling_case(benchmark::State& state, input in) {
  std::size_t const n = std::size_t(1) << in.log2_n;
  std::uint32_t const* pk = input_keys(n, in.bins, in.dist).data();
  calm::default_exec const ex{};
  auto const plan = calm::detail::plan_sample(pk, static_cast<index_t>(n), in.bins, calm::collision_sample_options{});
  backend::device_buffer<calm::detail::collision_totals> totals(static_cast<std::size_t>(plan.groups));
  auto const sample = [&] { calm::detail::launch_sample(pk, static_cast<index_t>(n), in.bins, plan, calm::detail::identity_key{}, totals.data(), nullptr, 0, ex); };
  sample();
  std::vector<double> waits;
  for (int i = 0; i < 50; ++i) waits.push_back(time_device([] {}));
  std::nth_element(waits.begin(), waits.begin() + 25, waits.end());
  for (auto _ : state) state.SetIterationTime(std::max(0.0, time_device(sample) - waits[25]));
  // what automatic's line rule reads (line_merge_rule), counted as a direct scatter of this workload meets the keys
  // (aligned buffers: chunks of 4 keys; lines of 32 entries for 4-byte values, a warp's repeated keys for 8-byte ones)
  calm::detail::merge_lines const lines{4, sizeof(T) <= 4 ? calm::table_line_entries : index_t(1)};
  calm::detail::launch_sample(pk, static_cast<index_t>(n), in.bins, plan, calm::detail::identity_key{}, totals.data(), nullptr, 0, ex, nullptr, {}, true,
                              lines);
  std::vector<calm::detail::collision_totals> t(static_cast<std::size_t>(plan.groups));
  ex.to_host(t.data(), totals.data(), t.size() * sizeof(t[0]));
  calm::detail::line_repeats r;
  for (auto const& g : t) r.repeats += g.line_repeats, r.warps += g.line_warps;
  state.counters["line_repeats"] = r.per_warp();
}

/// A chooser that chooses nothing: one block lets the launches behind it begin, then writes `s` (path_case's overlap_fixed).
struct write_choice {
  calm::strategy* made;
  calm::strategy s;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    blk.allow_next_launch();
    blk.for_each_warp([&](auto const& w, auto t) { calm::when(w, t == 0, [&](auto const&) { *made = s; }); });
  }
};

/// The parts of a choice finished on the device (hist_u32), each timed as its own recorded graph where
/// the exec records them (CUDA): "empty" (one block that does nothing: the graph's own cost),
/// "sample" (the sampling kernel, totals per group), "sample_meet" (the sampling with its groups'
/// totals summed on the device and the last block found), "sample_choice" (and the choice finished by
/// that block), "full" (and every strategy the choice may end at, each launched after the last ends),
/// "full_overlap" (the same, each launch overlapping the end of the last: automatic's graph), "overlap_direct"
/// (full_overlap with only the direct scatters behind the choice: the launches after them cost full_overlap less
/// this), "overlap_fixed" (full_overlap with the sampling replaced by one block that writes the choice: what the
/// sampling and choice cost beyond a launch in front is full_overlap less this), "chosen" (the
/// strategies behind a choice already made, no sampling) and "best" (the strategy chosen alone). The
/// differences are the cost of each part: full - chosen the sampling and choice in sequence, chosen -
/// best the branches not taken. Counter "branches": the strategies launched behind the choice.
void path_case(benchmark::State& state, input in, std::string part) {
  using T = std::uint32_t;
  namespace d = calm::detail;
  std::size_t const n = std::size_t(1) << in.log2_n;
  index_t const nn = static_cast<index_t>(n);
  std::uint32_t const* pk = input_keys(n, in.bins, in.dist).data();
  calm::default_exec const ex{};
  backend::device_buffer<T> table(in.bins);
  table.fill_bytes(0);
  auto const vals = d::as_value_source<T>(calm::constant(T(1)));
  calm::tree_view const tree = calm::family_tree(calm::default_exec::family);
  calm::scatter_shape const shape = d::shape_of<calm::plus, T>(nn, in.bins, true, ex);
  calm::scatter_options const opt{};
  auto const fit = [&](calm::strategy s) { return d::fitting_strategy<calm::plus, T, d::identity_key>(s, opt, shape, ex); };
  int const start = calm::walk_known(tree, shape);
  calm::tree_walk walk;
  if (tree[start].left < 0 || !calm::make_walk(tree, shape, start, fit, walk)) {
    state.SkipWithError("this input is decided without sampling");
    return;
  }
  unsigned reads = 0;
  unsigned const reach = walk.reachable(&reads);
  bool const block_level = calm::tree_walk::reads_feature(reads, calm::feature::block_level);  // as automatic: only where read
  d::sample_plan const plan = d::plan_sample(pk, nn, in.bins, opt.sample);
  backend::device_buffer<calm::strategy> decided(std::vector<calm::strategy>{calm::strategy::automatic});
  std::size_t const meet_bytes = sizeof(d::sample_meeting), totals_bytes = static_cast<std::size_t>(plan.groups) * sizeof(d::collision_totals);
  // the choice, made once by automatic itself, for "chosen" and "best"
  calm::scatter_options with_report;
  with_report.chosen = decided.data();
  if (calm::histogram(pk, nn, table.data(), in.bins, with_report, ex) != calm::strategy::automatic) {
    state.SkipWithError("automatic did not choose on the device");
    return;
  }
  calm::strategy const choice = decided.download()[0];
  int const tag = part == "empty"           ? 0
                  : part == "sample"        ? 1
                  : part == "sample_choice" ? 2
                  : part == "full"          ? 3
                  : part == "chosen"        ? 4
                  : part == "best"          ? 5
                  : part == "full_overlap"  ? 7
                  : part == "overlap_direct" ? 8
                  : part == "overlap_fixed" ? 9
                                            : 6;  // sample_meet
  // automatic's default line rule, counted by the sampling and applied by the choice as automatic does
  calm::line_merge_rule const rule = calm::line_merge_rule::resolved(-1.0f, calm::default_exec::family, sizeof(std::uint32_t), sizeof(T),
                                                                     static_cast<std::uint64_t>(in.bins) * sizeof(T));
  // and the line repeats also where the walk reads them (bulk_scatter)
  d::merge_lines const rule_lines = d::merge_lines_of<calm::default_exec, std::uint32_t, decltype(vals), T>(rule, reach, pk, vals, nullptr);
  d::merge_lines const lines = d::sampled_lines_of<calm::default_exec, std::uint32_t, decltype(vals), T>(rule_lines, reads, pk, vals);
  calm::line_merge_rule const device_rule = rule_lines.vec > 0 ? rule : calm::line_merge_rule{};
  auto const launches = [&](calm::default_exec const& e, unsigned char* ws) {
    auto* const meet = reinterpret_cast<d::sample_meeting*>(ws);
    auto* const made = reinterpret_cast<calm::strategy*>(ws + meet_bytes);
    auto* const totals = reinterpret_cast<d::collision_totals*>(ws + meet_bytes + 8);
    if (tag == 0) e.for_each_block(1, 32, 0, d::no_finish{});
    if (tag == 1) d::launch_sample(pk, nn, in.bins, plan, d::identity_key{}, totals, nullptr, 0, e, nullptr, d::no_finish{}, block_level, lines);
    if (tag == 6) d::launch_sample(pk, nn, in.bins, plan, d::identity_key{}, totals, nullptr, 0, e, meet, d::no_finish{}, block_level, lines);
    if (tag == 2 || tag == 3 || tag == 7 || tag == 8)
      d::launch_sample(pk, nn, in.bins, plan, d::identity_key{}, totals, nullptr, 0, e, meet,
                       d::choice_program{&meet->sum, walk, made, nullptr, device_rule}, block_level, lines);
    if (tag == 3) d::launch_chosen<d::device_choosable>(made, reach, calm::plus{}, pk, vals, nullptr, nn, table.data(), in.bins, d::identity_key{}, true, e);
    if (tag == 7)  // as automatic launches them: each overlapping the end of the one before (d::overlapping)
      d::launch_chosen<d::device_choosable>(made, reach, calm::plus{}, pk, vals, nullptr, nn, table.data(), in.bins, d::identity_key{}, true, d::overlapping(e));
    if (tag == 8)  // as full_overlap, with only the direct scatters behind the choice (no hot_key or block-local launch)
      d::launch_chosen<d::device_choosable>(made, reach & d::direct_strategies, calm::plus{}, pk, vals, nullptr, nn, table.data(), in.bins, d::identity_key{}, true, d::overlapping(e));
    if (tag == 9) {  // as full_overlap, the sampling replaced by one block that writes the choice
      e.for_each_block(1, 32, 0, write_choice{made, choice});
      d::launch_chosen<d::device_choosable>(made, reach, calm::plus{}, pk, vals, nullptr, nn, table.data(), in.bins, d::identity_key{}, true, d::overlapping(e));
    }
    if (tag == 4) d::launch_chosen<d::device_choosable>(decided.data(), reach, calm::plus{}, pk, vals, nullptr, nn, table.data(), in.bins, d::identity_key{}, true, e);
    if (tag == 5) d::launch_chosen<d::device_choosable>(decided.data(), calm::strategy_bit(choice), calm::plus{}, pk, vals, nullptr, nn, table.data(), in.bins, d::identity_key{}, true, e);
  };
  auto const make_key = [&] {
    calm::launch_key key = calm::launch_key::of<calm::plus, std::uint32_t, decltype(vals), T, d::identity_key, calm::default_exec>();
    // the choice and reach too: inputs of one size share the key buffer, and "best" launches the choice alone
    key.add(pk).add(nn).add(table.data()).add(in.bins).add(tag).add(decided.data()).add(choice).add(reach);
    return key;
  };
  d::recorder_of<calm::default_exec> recorder;  // as a plan's: its repeated calls as one graph on CUDA
  try {
    time_calls(state, [&] { d::launch_decided(ex, &recorder, make_key, meet_bytes + 8 + totals_bytes, meet_bytes, launches); });
  } catch (calm::error const& e) {
    state.SkipWithError(e.what());
    return;
  }
  int branches = 0;
  for (unsigned r = reach; r; r &= r - 1) ++branches;
  state.counters["branches"] = branches;
  state.counters["ran"] = static_cast<double>(static_cast<int>(choice));
  state.counters["sample_groups"] = static_cast<double>(plan.groups);
}

template <class T>
void register_input(input const& in) {
  std::string const base = input_path(in);
  auto reg = [](std::string const& name, auto f, auto... a) {
    return benchmark::RegisterBenchmark(name.c_str(), f, a...)->UseManualTime()->Unit(benchmark::kMillisecond);
  };
  reg(base + "stats", stats_case<T>, in)->MinTime(0.03);
  reg(base + "sampling", sampling_case<T>, in)->MinTime(0.03);
  for (auto const& name : case_names(in)) reg(base + name, timed_case_report<T>, in, name)->Iterations(1);
}

void register_set(std::string const& set, std::vector<std::string> const& dists, std::vector<std::uint32_t> const& bins, std::vector<int> const& log2_ns,
                  bool doubles = true) {
  for (int ln : log2_ns)
    for (auto const& d : dists)
      for (std::uint32_t b : bins) {
        register_input<std::uint32_t>({set, "hist_u32", d, b, ln});
        register_input<float>({set, "scatter_f32", d, b, ln});
        if (doubles) register_input<double>({set, "scatter_f64", d, b, ln});
      }
}

[[maybe_unused]] bool const registered = [] {
  char const* e = std::getenv("CALM_BULK_SET");
  std::string const set = e ? e : "demo";
  int const ln = log2_keys() - 1;  // 2^25 keys on a GPU, 2^23 on the host
  std::vector<std::string> const train = {"uniform", "runs4", "runs8", "runs32", "runs256", "runs1024", "halfhot", "hot10", "hot25", "zipf", "zipf8", "image"};
  std::vector<std::uint32_t> bins;  // 4^k and 3 * 2^(2k+1): 1 to 2^24
  for (int b = 0; b <= 24; b += 2) {
    bins.push_back(1u << b);
    if (b < 20) bins.push_back(3u << (b + 1));
  }
  if (set == "train") {
    register_set(set, train, bins, {ln});
  } else if (set == "train_items") {  // a quarter of the keys, over the tables where the tree samples (from 6,144 entries)
    std::vector<std::uint32_t> large;
    for (auto b : bins)
      if (b >= 6144) large.push_back(b);
    register_set("train", train, large, {ln - 2});
  } else if (set == "train_coo" || set == "train_sorted") {
    // coo_rows: the clustered training inputs whose distinct keys share table lines; sorted: warps that hold runs or
    // distinct keys by the keys per entry. Every table size, then a quarter of the keys where the tree samples
    std::string const dist = set == "train_coo" ? "coo_rows" : "sorted";
    register_set("train", {dist}, bins, {ln});
    std::vector<std::uint32_t> large;
    for (auto b : bins)
      if (b >= 6144) large.push_back(b);
    register_set("train", {dist}, large, {ln - 2});
  } else if (set == "train_window") {  // keys that crowd table lines without meeting in a warp
    std::vector<std::uint32_t> larger;
    for (auto b : bins)
      if (b >= 65536) larger.push_back(b);
    register_set("train", {"window16", "window64"}, larger, {ln, ln - 2});
  } else if (set == "heldout") {
    register_set(set, {"sorted", "runs_short", "twohot", "gauss", "zipf2", "hotset"}, {3, 1000, 6000, 20000, 300000, 5000000}, {ln - 1, ln + 1});
    register_set(set, {"uniform", "runs32", "halfhot", "zipf", "image"}, {100, 6000, 300000}, {ln - 1});
  } else if (set == "fresh") {  // families for final evaluations only (perf/fresh_keys.hpp): never fitted or tuned on
    register_set(set, fresh_families(), {256, 4096, 65536, 1u << 20}, {ln + 1}, false);
  } else if (set == "unseen") {  // the other families for final evaluations only (perf/fresh_keys.hpp)
    register_set(set, unseen_families(), {256, 4096, 65536, 1u << 20}, {ln + 1}, false);
  } else if (set == "final") {  // the families of the choice's final evaluation (perf/fresh_keys.hpp)
    register_set(set, final_families(), {256, 4096, 65536, 1u << 20}, {ln + 1}, false);
  } else if (set == "list") {
    char const* path = std::getenv("CALM_BULK_LIST");
    std::ifstream in(path ? path : "");
    if (!in) throw calm::error(calm::errc::invalid_argument, "bulk sweep: CALM_BULK_SET=list needs CALM_BULK_LIST, a readable file");
    input x;
    while (in >> x.set >> x.workload >> x.dist >> x.bins >> x.log2_n) {
      if (x.workload == "hist_u32") register_input<std::uint32_t>(x);
      else if (x.workload == "scatter_f32") register_input<float>(x);
      else if (x.workload == "scatter_f64") register_input<double>(x);
      else throw calm::error(calm::errc::invalid_argument, "bulk sweep: unknown workload " + x.workload);
    }
  } else if (set == "path") {  // the parts of the sampled path (path_case), on held-out inputs that sample
    for (auto const& [d, b, ln] : std::vector<std::tuple<std::string, std::uint32_t, int>>{
             {"gauss", 20000, ln - 1}, {"hotset", 20000, ln - 1}, {"runs_short", 20000, ln - 1}, {"sorted", 5000000, ln - 1},
             {"hotset", 300000, ln - 1}, {"gauss", 20000, ln + 1}, {"sorted", 300000, ln - 1}, {"runs32", 300000, ln - 1}})
      for (std::string part : {"empty", "sample", "sample_meet", "sample_choice", "full", "full_overlap", "overlap_direct", "overlap_fixed", "chosen", "best"})
        benchmark::RegisterBenchmark(("bulk/path/hist_u32/" + d + "/" + std::to_string(b) + "/" + std::to_string(ln) + "/" + part).c_str(), path_case,
                                     input{"path", "hist_u32", d, b, ln}, part)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.03);
  } else {
    register_set("demo", {"uniform", "halfhot"}, {256, 100000}, {ln}, false);
  }
  return true;
}();

}  // namespace
}  // namespace calm_bench
