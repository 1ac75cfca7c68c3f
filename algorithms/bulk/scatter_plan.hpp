// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/scatter_plan.hpp: a bulk scatter planned once for its shape and run again and again
// (calm::scatter_plan, calm::histogram_plan), the owner of its choice's recorded launches (000 §3.3's choice).
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "../../core/error.hpp"
#include "../choice/measure.hpp"
#include "measured_scatter.hpp"
#include "scatter.hpp"

namespace calm {

/// A bulk scatter of n keys of K into `bins` entries of T by Op, planned once and run over new arrays of
/// that shape, as FFTW's and cuFFT's plans are. It holds the exec (the stream), the options and what it
/// owns for its runs: on CUDA the graph that its runs decided on the device are recorded into at the
/// second run with the same arrays (exec.launch_graphs = false: none), and a device slot for the
/// strategy chosen there. Nothing is kept for the process: the free functions (calm::scatter) are
/// one-shot calls and record no graph. Values: T const* (a value per key) or same_value<T>
/// (calm::constant(v)); S: the strategy, automatic by default (the plan compiles what S can run).
///
/// run_async is calm::scatter<S> on the plan's exec (asynchronous on a GPU; returns strategy::automatic
/// where the device chose); run also waits and returns the strategy that ran. A run with another n or
/// bins, or any argument calm::scatter rejects, throws calm::error before anything is launched. A plan
/// destroyed while its work is in flight releases what it owns in the order of its stream.
///
/// An automatic plan made with plan_mode::measure chooses by timing, as FFTW_MEASURE does: its first run
/// (and the first after remeasure()) times the strategies it compiled that can take the table on that
/// run's keys, into a scratch table of `bins` entries that it releases at once, then runs the fastest
/// into the table; that run waits for its timings, and measurement() reports them and their cost. Every
/// run launches the measured strategy from then on. The table's result is the same as one call's.
///
///   calm::scatter_plan<calm::plus, std::uint32_t, float> plan(calm::plus{}, n, bins);
///   for (int step = 0; step < steps; ++step) plan.run_async(keys, weights, n, table, bins);
///   calm::scatter_plan<calm::plus, std::uint32_t, float> timed(calm::plus{}, n, bins, calm::plan_mode::measure);
template <class Op, class K, class T, class Values = T const*, strategy S = strategy::automatic, class Exec = default_exec>
class scatter_plan {
  static_assert(std::is_integral<K>::value, "scatter_plan: keys must be integers");
  static_assert(std::is_same<Values, T const*>::value || std::is_same<Values, same_value<T>>::value,
                "scatter_plan: values are T const* (a value per key) or calm::same_value<T> (calm::constant)");

 public:
  /// A plan for scatters of n keys into `bins` entries with op, on ex (its stream on a GPU); throws
  /// calm::error on a negative size.
  scatter_plan(Op op, index_t n, index_t bins, scatter_options const& opt = {}, Exec const& ex = Exec{}) : op_(op), n_(n), bins_(bins), opt_(opt), ex_(ex) {
    check_atomic_op<Op, T>();
    require(n >= 0 && bins >= 0, errc::invalid_argument,
            [&] { return "scatter_plan: negative size (n " + std::to_string(n) + ", bins " + std::to_string(bins) + ")"; });
    if (S == strategy::automatic && opt_.chosen == nullptr) {  // where run reads what the device chose
      chosen_ = static_cast<strategy*>(ex_.allocate(sizeof(strategy)));
      opt_.chosen = chosen_;
    }
  }
  /// A plan of strategy::automatic that chooses as `mode` says (plan_mode::measure: by timing).
  scatter_plan(Op op, index_t n, index_t bins, plan_mode mode, scatter_options const& opt = {}, Exec const& ex = Exec{})
      : scatter_plan(op, n, bins, opt, ex) {
    static_assert(S == strategy::automatic, "scatter_plan: a plan_mode is for strategy::automatic (a forced strategy has nothing to choose)");
    mode_ = mode;
  }
  scatter_plan(scatter_plan const&) = delete;
  scatter_plan& operator=(scatter_plan const&) = delete;
  /// The plan moved, its recorded work and workspace with it.
  scatter_plan(scatter_plan&& o) noexcept
      : op_(o.op_), n_(o.n_), bins_(o.bins_), opt_(o.opt_), ex_(o.ex_), rec_(std::move(o.rec_)), chosen_(std::exchange(o.chosen_, nullptr)),
        mode_(o.mode_), measured_(o.measured_) {}
  scatter_plan& operator=(scatter_plan&&) = delete;
  ~scatter_plan() { ex_.release(chosen_, sizeof(strategy)); }  // stream-ordered on a GPU

  /// table[keys[i]] = op(table[keys[i]], values[i]) for i < n, as calm::scatter<S> (asynchronous on a
  /// GPU); n and bins must be the plan's. Returns the strategy launched, or strategy::automatic where
  /// the device chose (options().chosen then receives it).
  strategy run_async(K const* keys, Values values, index_t n, T* table, index_t bins) {
    require(n == n_ && bins == bins_, errc::invalid_argument, [&] {
      return "scatter_plan: planned for n " + std::to_string(n_) + " and bins " + std::to_string(bins_) + ", run with n " + std::to_string(n) + " and bins " +
             std::to_string(bins) + "; nothing was launched";
    });
    using model = family_model<Exec::family>;
    if constexpr (S == strategy::automatic) {
      if (mode_ == plan_mode::measure && measured_.chosen == strategy::automatic)
        measured_ = detail::measure_scatter<model>("scatter_plan", op_, keys, values, n, table, bins, detail::identity_key{}, opt_, ex_);
    }
    return detail::bulk_scatter<model, S>("scatter_plan", op_, keys, values, n, table, bins, detail::identity_key{}, opt_, ex_, &rec_, measured_.chosen);
  }
  /// run_async, then a wait for the plan's stream: the table is final, and the strategy that ran is
  /// returned (read from the device where it chose).
  strategy run(K const* keys, Values values, index_t n, T* table, index_t bins) {
    strategy s = run_async(keys, values, n, table, bins);
    ex_.synchronize();
    if (s == strategy::automatic) ex_.to_host(&s, opt_.chosen, sizeof s);
    return s;
  }

  /// The plan's n, bins, options and exec.
  ///@{
  index_t items() const { return n_; }
  index_t bins() const { return bins_; }
  scatter_options const& options() const { return opt_; }
  Exec const& exec() const { return ex_; }
  plan_mode mode() const { return mode_; }
  ///@}
  /// What the last measuring run found (measurement::chosen automatic: none yet, or plan_mode::estimate).
  measurement const& measured() const { return measured_; }
  /// The next run measures again (plan_mode::measure), for keys unlike those measured.
  void remeasure() { measured_ = measurement{}; }

 private:
  Op op_;
  index_t n_, bins_;
  scatter_options opt_;
  Exec ex_;
  detail::recorder_of<Exec> rec_;
  strategy* chosen_ = nullptr;  ///< owned where the caller gave no opt.chosen
  plan_mode mode_ = plan_mode::estimate;
  measurement measured_;  ///< chosen automatic until measured
};

/// hist[keys[i]] += 1 for i < n, planned once: a scatter_plan of calm::plus and calm::constant(T(1)).
///
///   calm::histogram_plan<std::uint32_t, std::uint32_t> plan(n, 256);
///   plan.run_async(keys, n, hist, 256);
template <class K, class T, strategy S = strategy::automatic, class Exec = default_exec>
class histogram_plan {
 public:
  /// A plan for histograms of n keys into `bins` entries (as scatter_plan's).
  histogram_plan(index_t n, index_t bins, scatter_options const& opt = {}, Exec const& ex = Exec{}) : plan_(plus{}, n, bins, opt, ex) {}
  /// A plan of strategy::automatic that chooses as `mode` says (as scatter_plan's).
  histogram_plan(index_t n, index_t bins, plan_mode mode, scatter_options const& opt = {}, Exec const& ex = Exec{}) : plan_(plus{}, n, bins, mode, opt, ex) {}
  /// hist[keys[i]] += 1 for i < n, as scatter_plan::run_async.
  strategy run_async(K const* keys, index_t n, T* hist, index_t bins) { return plan_.run_async(keys, constant(T(1)), n, hist, bins); }
  /// As run_async, then a wait: as scatter_plan::run.
  strategy run(K const* keys, index_t n, T* hist, index_t bins) { return plan_.run(keys, constant(T(1)), n, hist, bins); }
  /// The plan's n, bins and options.
  ///@{
  index_t items() const { return plan_.items(); }
  index_t bins() const { return plan_.bins(); }
  scatter_options const& options() const { return plan_.options(); }
  plan_mode mode() const { return plan_.mode(); }
  ///@}
  /// As scatter_plan's.
  ///@{
  measurement const& measured() const { return plan_.measured(); }
  void remeasure() { plan_.remeasure(); }
  ///@}

 private:
  scatter_plan<plus, K, T, same_value<T>, S, Exec> plan_;
};

}  // namespace calm
