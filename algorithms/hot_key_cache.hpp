// calm/algorithms/hot_key_cache.hpp: for tables too large to privatize, each block samples its hottest
// keys by voting (000 §3.1, Alg. 2), keeps them in block-local memory and sends the rest to the device table
// merged by peer_reduce (002). calm's own technique (design.md: "hot-key cache").
#pragma once

#include <string>
#include <type_traits>

#include "../core/error.hpp"
#include "../core/exec.hpp"
#include "privatize.hpp"

namespace calm {

struct hot_key_options {
  int slots = 256;     ///< block-local hash slots (a power of two, 2 to 4,096); at most slots / 2 keys are cached
  int votes = 4;       ///< lanes of a warp that must share a sampled key for it to be cached
  int threads = 512;   ///< threads per block
};

namespace detail {

/// Linear probes per lookup: a key is cached only within this distance of its hash slot.
constexpr int hot_key_probes = 4;

/// The block-local layout of the cache: slot keys (-1: empty), slot values, candidate count and list.
template <class T>
struct hot_key_layout {
  int slots;
  CALM_HD static constexpr std::size_t align(std::size_t b) { return (b + 15) / 16 * 16; }
  CALM_HD std::size_t keys_offset() const { return 0; }
  CALM_HD std::size_t values_offset() const { return align(static_cast<std::size_t>(slots) * sizeof(index_t)); }
  CALM_HD std::size_t count_offset() const { return values_offset() + align(static_cast<std::size_t>(slots) * sizeof(T)); }
  CALM_HD std::size_t candidates_offset() const { return count_offset() + 16; }
  CALM_HD std::size_t bytes() const { return candidates_offset() + static_cast<std::size_t>(slots) * sizeof(index_t); }
};

CALM_HD inline int hot_key_hash(index_t k, int slots) {
  return static_cast<int>(full_cycle_sequence(static_cast<std::uint32_t>(k) ^ static_cast<std::uint32_t>(k >> 32)) & static_cast<std::uint32_t>(slots - 1));
}

template <int Vec, class Op, class K, class Values, class T>
struct hot_key_program {
  Op op;
  K const* keys;
  Values values;
  index_t n;
  T* out;
  index_t bins;
  int slots;
  int votes;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    hot_key_layout<T> const lay{slots};
    unsigned char* const base = blk.template scratch<unsigned char>();
    index_t* const skeys = reinterpret_cast<index_t*>(base + lay.keys_offset());
    T* const svals = reinterpret_cast<T*>(base + lay.values_offset());
    int* const count = reinterpret_cast<int*>(base + lay.count_offset());
    index_t* const cand = reinterpret_cast<index_t*>(base + lay.candidates_offset());
    int const nslots = slots, need = votes;
    index_t const nbins = bins;
    for (int s0 = 0; s0 < nslots; s0 += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const s = map([s0](int tt) { return s0 + tt; }, t);
        when(w, s < nslots, [&](auto const& l) {
          store(l, skeys, s, index_t(-1));
          store(l, svals, s, Op::template identity<T>());
        });
        when(w, s == 0, [&](auto const& l) { store(l, count, 0, 0); });
      });
    blk.sync();
    // 1. sample the block's first tile: a lane chosen by the full-cycle sequence proposes its key when
    //    `votes` lanes of its warp share it (Alg. 2's vote, with the sample kept rather than reduced)
    stream_items<Vec>(blk, keys, values, n, [&](auto const& w, auto const&, auto const& k, auto const&) {
      using Warp = std::decay_t<decltype(w)>;
      // the seed position from the clock, uniform over the warp (Alg. 2's kbase)
      int const r = static_cast<int>(full_cycle_sequence(calm::clock(w) + static_cast<std::uint32_t>(group_index(w)) * 64u) % Warp::size);
      auto const act = active_mask(w);
      auto const after = static_cast<decltype(act)>(act & ~first_lanes<decltype(act)>(r));
      int const src = ffs(w, after ? after : act) - 1;
      auto const sampled = shuffle(w, k, src);
      int const x = popc(w, ballot(w, k == sampled));
      auto const in = map([nbins](auto kk) { return key_in_table(kk, nbins); }, sampled);
      if (x >= need) {
        when(w, (lane_id(w) == src) & in, [&](auto const& l) {
          auto const at = atomic_fetch_update(l, plus{}, scope::block_local{}, count, 1);
          when(l, at < nslots, [&](auto const& m) { store(m, cand, at, map([](auto kk) { return static_cast<index_t>(kk); }, sampled)); });
        });
      }
    }, true);
    blk.sync();
    // 2. one thread builds the hash set of candidates (distinct keys, at most slots / 2)
    blk.for_each_warp([&](auto const& w, auto t) {
      when(w, t == 0, [&](auto const&) {
        int const c = *count < nslots ? *count : nslots;
        int cached = 0;
        for (int i = 0; i < c && cached < nslots / 2; ++i) {
          index_t const key = cand[i];
          int const h = hot_key_hash(key, nslots);
          for (int p = 0; p < hot_key_probes; ++p) {
            int const s = (h + p) & (nslots - 1);
            if (skeys[s] == key) break;
            if (skeys[s] == -1) {
              skeys[s] = key;
              ++cached;
              break;
            }
          }
        }
      });
    });
    blk.sync();
    // 3. every item: a cached key updates its block-local slot, the others the device table, each
    //    merged by peer_reduce; keys outside the table are skipped
    stream_items<Vec>(blk, keys, values, n, [&](auto const& w, auto const&, auto const& k, auto const& v) {
      auto const key = map([](auto kk) { return static_cast<index_t>(kk); }, k);
      auto const in = map([nbins](index_t kk) { return key_in_table(kk, nbins); }, key);
      auto const h = map([nslots](index_t kk) { return hot_key_hash(kk, nslots); }, key);
      auto slot = map([](int) { return -1; }, h);
      for (int p = 0; p < hot_key_probes; ++p) {
        auto const s = map([p, nslots](int hh) { return (hh + p) & (nslots - 1); }, h);
        slot = select((slot < 0) & (load(w, skeys, s) == key), s, slot);
      }
      when(w, in & (slot >= 0), [&](auto const& u) {
        update<peer_reduce>(u, op, scope::block_local{}, svals + select(slot >= 0, slot, 0), v);
      });
      when(w, in & (slot < 0), [&](auto const& u) { update<peer_reduce>(u, op, scope::device{}, out + select(in, key, index_t(0)), v); });
    });
    blk.sync();
    // 4. the cached keys' totals go to the device table
    for (int s0 = 0; s0 < nslots; s0 += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const s = map([s0](int tt) { return s0 + tt; }, t);
        when(w, s < nslots, [&](auto const& l) {
          auto const key = load(l, skeys, s);
          auto const val = load(l, svals, s);
          when(l, (key >= 0) & (val != Op::template identity<T>()), [&](auto const& u) {
            atomic_update(u, op, scope::device{}, out + select(key >= 0, key, index_t(0)), val);
          });
        });
      });
  }
};

/// hot_key_scatter's block program reading its items in form F.
template <load_form F, class Op, class K, class VS, class T>
hot_key_program<vec_of<F>, Op, K, VS, T> hot_key_program_for(Op op, K const* keys, VS const& vals, index_t n, T* table, index_t bins,
                                                           hot_key_options const& opt) {
  return {op, keys, vals, n, table, bins, opt.slots, opt.votes};
}

}  // namespace detail

/// table[keys[i]] = op(table[keys[i]], values[i]) for i < n with a per-block cache of hot keys: each
/// block votes on a sample of its first keys, keeps up to slots / 2 keys that `votes` lanes of a warp
/// shared in block-local memory, updates those there and every other key in the device table (lanes
/// merged by peer_reduce), and adds the cached totals to the table at the end. For tables too large to
/// privatize with skewed keys; values: T const* or calm::constant(v); keys outside [0, bins) are
/// skipped. Throws calm::error before launching on bad arguments.
template <class Op, class K, class Values, class T, class Exec = default_exec>
void hot_key_scatter(Op op, K const* keys, Values values, index_t n, T* table, index_t bins, hot_key_options const& opt = {},
                     Exec const& ex = Exec{}) {
  check_atomic_op<Op, T>();
  static_assert(std::is_integral<K>::value, "hot_key_scatter: keys must be integers");
  detail::check_scatter_arguments("hot_key_scatter", n, keys, values, table, bins);
  require(opt.slots >= 2 && opt.slots <= 4096 && (opt.slots & (opt.slots - 1)) == 0, errc::invalid_argument,
          "hot_key_scatter: slots must be a power of two in [2, 4096]");
  require(opt.votes >= 1, errc::invalid_argument, "hot_key_scatter: votes must be at least 1");
  require(opt.threads >= 1 && opt.threads <= 1024, errc::invalid_argument, "hot_key_scatter: threads must be in [1, 1024]");
  if (n == 0 || bins == 0) return;
  auto const vals = detail::as_value_source<T>(values);
  detail::load_form const form = detail::load_form_of<Exec>(keys, vals);
  detail::with_load_form(form, [&](auto f) {
    ex.for_each_resident_block(detail::blocks_with_work(n, opt.threads, form), opt.threads, detail::hot_key_layout<T>{opt.slots}.bytes(),
                               detail::hot_key_program_for<decltype(f)::value>(op, keys, vals, n, table, bins, opt));
  });
}

}  // namespace calm
