// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_hot_key_fixed_cost.cu: a stand-alone probe (not part of the library or its build) of the part
// of hot_key's time that does not grow with the keys. The held-out sweep's medians at 2^24 and 2^26 keys (300,000
// and 5,000,000 entries) fit hot_key with 45-65 us that do not scale, naive with 13-20. Here hot_key_scatter runs
// on the bench's own keys (perf/bulk_keys.hpp: splitmix64, seed 7; a shorter input is a prefix of the longer)
// at 2^20 to 2^26 keys:
// - as it is; with no line cached (votes above the warp: the first tile, the build and the flush of an empty cache
//   remain; also in blocks of 256 and 1,024 threads); with one slot pair (one line at most);
// - hot_key_phases, a copy of its program with phases switched on and off (never caching: votes above the warp):
//   the first tile with its match over lines and proposals (their atomics or plain loads and stores), the build,
//   the probes of phase 3; its first tile's match over 64- or 32-bit lines, over the whole tile or its first
//   chunk; and the copy caching as the library does (votes = 2) with those match forms;
// - the copy caching, its phase-3 merges (block-local and device) grouped by peer_reduce_low_word: a 32-bit match
//   of the addresses' low words where the warp's addresses share their high word; the direct scatter with
//   peer_reduce and with peer_reduce_low_word (on an H200: cuda-h200-2026-11-28-low-word-peers.txt; hot_key the same with
//   it, the direct scatter 1-11% faster on gauss but slower than naive there; not taken into the library);
// - naive, also on hot_key's grid of capped registers and with hot_key's block-local bytes unused; automatic.
// Results: perf/results/cuda-h100-2026-11-27-boundary-inputs.md (section 3), cuda-h100-2026-11-28-hot-key-match.md.
// Each call is timed from the host's launch to its wait and on the device alone (events after a spin), medians
// of 30.
//
//   nvcc -std=c++17 -O3 -DNDEBUG --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -DCALM_BACKEND_CUDA=1 \
//        -I <a folder holding calm/, a link to this repository> perf/probe_hot_key_fixed_cost.cu -o probe && ./probe [dist [log2 keys]]
#include <calm/calm.hpp>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "../bulk_keys.hpp"
#include "probe_graph_timing.hpp"
using calm::index_t;
using calm::strategy;

/// A block program run on the grid of another shape: Resident blocks of 1,024 threads an SM (its registers
/// capped as hot_key's are), with `bytes` of block-local memory it does not use.
template <class P, int Resident>
struct on_capped_grid {
  P p;
  static constexpr int resident_1024_blocks = Resident;
  template <class Block>
  __device__ void operator()(Block const& blk) const { p(blk); }
};

/// naive's direct scatter launched on hot_key's grid (Resident = 1: 264 blocks of 512 threads on an H100) or on its own
/// program's grid (Resident = 0), with `bytes` of block-local memory.
template <int Resident, class T, class Values>
void naive_on_grid(std::uint32_t const* keys, Values values, index_t n, T* table, index_t bins, std::size_t bytes, calm::default_exec const& ex) {
  namespace d = calm::detail;
  auto const vals = d::as_value_source<T>(values);
  d::load_form const form = d::load_form_of<calm::default_exec>(keys, vals);
  d::with_load_form(form, [&](auto f) {
    auto const program = d::direct_program<decltype(f)::value>(calm::plus{}, keys, vals, n, table, bins, d::identity_key{}, calm::naive{});
    ex.for_each_resident_block(d::blocks_with_work(n, d::direct_threads, form), d::direct_threads, bytes, on_capped_grid<decltype(program), Resident>{program});
  });
}

/// The direct scatter with merge M (peer_reduce or peer_reduce_low_word) on its own grid.
template <class M, class T, class Values>
void direct_with(std::uint32_t const* keys, Values values, index_t n, T* table, index_t bins, calm::default_exec const& ex) {
  namespace d = calm::detail;
  auto const vals = d::as_value_source<T>(values);
  d::load_form const form = d::load_form_of<calm::default_exec>(keys, vals);
  d::with_load_form(form, [&](auto f) {
    auto const program = d::direct_program<decltype(f)::value>(calm::plus{}, keys, vals, n, table, bins, d::identity_key{}, M{});
    ex.for_each_resident_block(d::blocks_with_work(n, d::direct_threads, form), d::direct_threads, 0, program);
  });
}

/// hot_key_program's phases, switchable (a copy for this probe, not the library's): FirstTile runs phase 1's pass over
/// the first tile; Propose feeds its match over lines to the proposals as the library does (without it the match's
/// result is unused: a predicate that is false at compile time); Atomics picks which of the proposals' two updates are
/// atomics (bit 1 the filter, bit 2 the count; else a load and a store); Build runs phase 2; Probe runs phase 3's
/// lookups of the cache (four probes of the slot lines, the neighbour test), else phase 3 is a plain device update.
/// With votes above the warp size no line is proposed and none cached. Match: bit 1 phase 1 matches the lines' low 32
/// bits, bit 2 it matches only the tile's first chunk, bit 4 phase 3 merges by peer_reduce_low_word.
namespace calm {
/// peer_reduce grouping lanes by a 32-bit match of their addresses' low words where every active lane's
/// address has the leader's high word (one shuffle and one vote), by the 64-bit match otherwise: exact
/// either way. A probe of the cost of peer_reduce's 64-bit match_any over addresses (not the library's).
struct peer_reduce_low_word {
  template <class Warp, class A>
  __device__ peer_groups<Warp> group(Warp const& w, A const& addr) const {
    auto const bits = map([](auto p) { return reinterpret_cast<std::uint64_t>(p); }, addr);
    auto const high = map([](std::uint64_t b) { return static_cast<std::uint32_t>(b >> 32); }, bits);
    if (all(w, high == shuffle(w, high, leader_lane(w))))
      return {match_any(w, map([](std::uint64_t b) { return static_cast<std::uint32_t>(b); }, bits)), true};
    return {match_any(w, bits), true};
  }
};
namespace detail {
template <int Vec, class Op, class K, class Values, class T, bool FirstTile, bool Probe, bool Propose = false, bool Build = false, int Atomics = 3, int Match = 0>
struct hot_key_phases {
  Op op;
  K const* keys;
  Values values;
  index_t n;
  T* out;
  index_t bins;
  int slots;
  int line_shift;
  int votes;
  static constexpr int resident_1024_blocks = 1;
  template <class Block>
  __device__ void operator()(Block const& blk) const {
    int const shift = line_shift, per = 1 << shift, need = votes;
    hot_key_layout<T> const lay{slots, per};
    unsigned char* const base = blk.template scratch<unsigned char>();
    index_t* const skeys = reinterpret_cast<index_t*>(base + lay.keys_offset());
    T* const svals = reinterpret_cast<T*>(base + lay.values_offset());
    int* const count = reinterpret_cast<int*>(base + lay.count_offset());
    std::uint32_t* const filter = reinterpret_cast<std::uint32_t*>(base + lay.filter_offset());
    index_t* const cand = reinterpret_cast<index_t*>(base + lay.candidates_offset());
    int const nslots = slots, entries = slots << shift;
    index_t const nbins = bins;
    for (int s0 = 0; s0 < entries; s0 += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const s = map([s0](int tt) { return s0 + tt; }, t);
        when(w, s < nslots, [&](auto const& l) { store(l, skeys, s, index_t(-1)); });
        when(w, s < entries, [&](auto const& l) { store(l, svals, s, Op::template identity<T>()); });
        when(w, s < hot_key_filter_bits / 32, [&](auto const& l) { store(l, filter, s, 0u); });
        when(w, s == 0, [&](auto const& l) { store(l, count, 0, 0); });
      });
    blk.sync();
    if constexpr (FirstTile) {
      auto const no_state = [](auto const&, auto const&) { return 0; };
      stream_items_with_state<Vec, false>(blk, keys, values, n, no_state, [&](auto const& w, auto const&, int, int chunk, auto const& k, auto const&) {
        auto const key = map([](auto kk) { return static_cast<index_t>(kk); }, k);
        auto const in = map([nbins](index_t kk) { return key_in_table(kk, nbins); }, key);
        if ((Match & 2) != 0 && chunk != 0) return;
        when(w, in, [&](auto const& v) {
          auto const line = map([shift](index_t kk) { return kk >> shift; }, key);
          auto const peers = [&] {
            if constexpr ((Match & 1) != 0) return match_any(v, map([](index_t ln) { return static_cast<std::uint32_t>(ln); }, line));
            else return match_any(v, line);
          }();
          auto const lead = (peers & lanes_lt(v)) == 0;
          if constexpr (Propose) {  // as the library's phase 1
            auto const shared = popc(v, peers) >= need;
            when(v, lead & shared, [&](auto const& u) {
              auto const bit = map([](index_t ln) { return hot_key_filter_bit(ln); }, line);
              auto const mask = map([](int b) { return 1u << (b & 31); }, bit);
              // Atomics: bit 1 the filter's atomic or (else a load and a store), bit 2 the count's atomic add (else a load and a store)
              auto const word = map([](int b) { return b >> 5; }, bit);
              auto const old = [&] {
                if constexpr ((Atomics & 1) != 0) return atomic_fetch_update(u, bit_or{}, scope::block_local{}, filter + word, mask);
                else {
                  auto const o = load(u, filter, word);
                  store(u, filter, word, o | mask);
                  return o;
                }
              }();
              when(u, (old & mask) == 0u, [&](auto const& x) {
                auto const at = [&] {
                  if constexpr ((Atomics & 2) != 0) return atomic_fetch_update(x, plus{}, scope::block_local{}, count, 1);
                  else {
                    auto const o = load(x, count, 0);
                    store(x, count, 0, o + 1);
                    return o;
                  }
                }();
                when(x, at < nslots, [&](auto const& y) { store(y, cand, at, line); });
              });
            });
          } else {
            when(v, lead & (popc(v, peers) >= 1000), [&](auto const& u) { store(u, count, 0, 1); });  // never: votes above the warp
          }
        });
      }, true);
      blk.sync();
    }
    if constexpr (Build) {  // as the library's phase 2
      blk.for_each_warp([&](auto const& w, auto t) {
        when(w, t == 0, [&](auto const&) {
          int const c = *count < nslots ? *count : nslots;
          int cached = 0;
          for (int i = 0; i < c && cached < nslots / 2; ++i) {
            index_t const line = cand[i];
            int const h = hot_key_hash(line, nslots);
            for (int p = 0; p < hot_key_probes; ++p) {
              int const s = (h + p) & (nslots - 1);
              if (skeys[s] == line) break;
              if (skeys[s] == -1) {
                skeys[s] = line;
                ++cached;
                break;
              }
            }
          }
        });
      });
    }
    blk.sync();
    stream_items<Vec>(blk, keys, values, n, [&](auto const& w, auto const&, auto const& k, auto const& v) {
      auto const key = map([](auto kk) { return static_cast<index_t>(kk); }, k);
      auto const in = map([nbins](index_t kk) { return key_in_table(kk, nbins); }, key);
      if constexpr (Probe) {
        auto const line = map([shift](index_t kk) { return kk >> shift; }, key);
        auto const h = map([nslots](index_t ln) { return hot_key_hash(ln, nslots); }, line);
        auto slot = map([](int) { return -1; }, h);
        for (int p = 0; p < hot_key_probes; ++p) {
          auto const s = map([p, nslots](int hh) { return (hh + p) & (nslots - 1); }, h);
          slot = select((slot < 0) & (load(w, skeys, s) == line), s, slot);
        }
        when(w, in & (slot >= 0), [&](auto const& u) {
          auto const entry = map([shift, per](int sl, index_t kk) { return (index_t(sl) << shift) + (kk & (per - 1)); }, select(slot >= 0, slot, 0), key);
          if constexpr ((Match & 4) != 0) update<peer_reduce_low_word>(u, op, scope::block_local{}, svals + entry, v);
          else update<peer_reduce>(u, op, scope::block_local{}, svals + entry, v);
        });
        auto const rest = in & (slot < 0);
        auto const before = shuffle_up(w, select(rest, key, index_t(-1)), 1);
        bool const runs = any(w, rest & (lane_id(w) > 0) & (before == key));
        when(w, rest, [&](auto const& u) {
          if constexpr ((Match & 4) != 0) {
            if (runs) update<peer_reduce_low_word>(u, op, scope::device{}, out + select(in, key, index_t(0)), v);
            else update(u, op, scope::device{}, out + select(in, key, index_t(0)), v, naive{});
          } else {
            update(u, op, scope::device{}, out + select(in, key, index_t(0)), v, peer_reduce_if{runs});
          }
        });
      } else {
        when(w, in, [&](auto const& u) { update(u, op, scope::device{}, out + select(in, key, index_t(0)), v, naive{}); });
      }
    });
    blk.sync();
    for (int s0 = 0; s0 < entries; s0 += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const s = map([s0](int tt) { return s0 + tt; }, t);
        when(w, s < entries, [&](auto const& l) {
          auto const line = load(l, skeys, map([shift](int ss) { return ss >> shift; }, s));
          auto const key = map([shift, per](index_t ln, int ss) { return ln < 0 ? index_t(-1) : (ln << shift) + (ss & (per - 1)); }, line, s);
          auto const val = load(l, svals, s);
          when(l, (line >= 0) & (key < nbins) & (val != Op::template identity<T>()), [&](auto const& u) {
            atomic_update(u, op, scope::device{}, out + select(line >= 0, key, index_t(0)), val);
          });
        });
      });
  }
};
}  // namespace detail
}  // namespace calm

/// hot_key_phases with the shape of hot_key_options{} as it was when these rows ran (128 slots of 32-entry lines, 512
/// threads; the default became 0, the most that fit up to 512, after them); with the default votes
/// (above the warp) nothing is cached, with votes = 2 it caches as the library does.
template <bool FirstTile, bool Probe, bool Propose = false, bool Build = false, int Atomics = 3, int Match = 0, class T, class Values>
void hot_phases(std::uint32_t const* keys, Values values, index_t n, T* table, index_t bins, calm::default_exec const& ex, int votes = 1 << 20) {
  namespace d = calm::detail;
  auto const vals = d::as_value_source<T>(values);
  d::load_form const form = d::load_form_of<calm::default_exec>(keys, vals);
  calm::hot_key_options h;
  h.slots = 128;
  std::size_t const bytes = d::hot_key_layout<T>{h.slots, h.line_entries}.bytes();
  d::with_load_form(form, [&](auto f) {
    using program_t =
        d::hot_key_phases<d::vec_of<decltype(f)::value>, calm::plus, std::uint32_t, std::decay_t<decltype(vals)>, T, FirstTile, Probe, Propose, Build, Atomics, Match>;
    ex.for_each_resident_block(d::blocks_with_work(n, h.threads, form), h.threads, bytes,
                               program_t{calm::plus{}, keys, vals, n, table, bins, h.slots, d::log2_of(h.line_entries), votes});
  });
}

template <class T>
void probe(char const* workload, std::string const& dist, std::uint32_t const* keys, T const* vals, cudaStream_t s, std::vector<int> const& sizes) {
  std::uint32_t const bins = 300000;
  bool const counting = vals == nullptr;
  calm::backend::device_buffer<T> table(bins);
  table.fill_bytes(0);
  calm::default_exec const ex = calm::on_stream(s);
  std::printf("%s %s, 300000 entries: host launch to wait | device part, medians of 30 (us)\n", workload, dist.c_str());
  for (int lg : sizes) {
    index_t const n = index_t(1) << lg;
    auto const call = [&](strategy st) {
      calm::scatter_options opt;
      opt.strategy = st;
      if (counting) return calm::histogram(keys, n, table.data(), index_t(bins), opt, ex);
      return calm::scatter(calm::plus{}, keys, vals, n, table.data(), index_t(bins), opt, ex);
    };
    auto const hot = [&](calm::hot_key_options const& o) {
      if (counting) calm::hot_key_scatter(calm::plus{}, keys, calm::constant(T(1)), n, table.data(), index_t(bins), o, ex);
      else calm::hot_key_scatter(calm::plus{}, keys, vals, n, table.data(), index_t(bins), o, ex);
    };
    calm::hot_key_options none, one, none256, none1024;
    none.votes = none256.votes = none1024.votes = 1 << 20;
    none256.threads = 256;
    none1024.threads = 1024;
    one.slots = 2;
    struct variant { char const* name; std::function<void()> run; };
    std::vector<variant> const variants = {
        {"naive", [&] { call(strategy::naive); }},
        {"hot_key", [&] { hot({}); }},
        {"hot_key, no line cached", [&] { hot(none); }},
        {"hot_key, one line at most", [&] { hot(one); }},
        {"hot_key, no line, 256 threads", [&] { hot(none256); }},
        {"hot_key, no line, 1024 threads", [&] { hot(none1024); }},
        {"phases: first tile + probes", [&] { counting ? hot_phases<true, true>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                                       : hot_phases<true, true>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"phases: + proposals + build", [&] { counting ? hot_phases<true, true, true, true>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                                       : hot_phases<true, true, true, true>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"phases: + proposals", [&] { counting ? hot_phases<true, true, true, false>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                               : hot_phases<true, true, true, false>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"phases: + proposals, no atomics", [&] { counting ? hot_phases<true, true, true, false, 0>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                                           : hot_phases<true, true, true, false, 0>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"phases: + proposals, filter atomic", [&] { counting ? hot_phases<true, true, true, false, 1>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                                              : hot_phases<true, true, true, false, 1>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"phases: + proposals, count atomic", [&] { counting ? hot_phases<true, true, true, false, 2>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                                             : hot_phases<true, true, true, false, 2>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"phases: + proposals, 32-bit match", [&] { counting ? hot_phases<true, true, true, false, 3, 1>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                                              : hot_phases<true, true, true, false, 3, 1>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"phases: + proposals, chunk 0", [&] { counting ? hot_phases<true, true, true, false, 3, 2>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                                         : hot_phases<true, true, true, false, 3, 2>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"phases: + proposals, chunk 0, 32-bit", [&] { counting ? hot_phases<true, true, true, false, 3, 3>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                                                 : hot_phases<true, true, true, false, 3, 3>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"copy, caching", [&] { counting ? hot_phases<true, true, true, true, 3, 0>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex, 2)
                                         : hot_phases<true, true, true, true, 3, 0>(keys, vals, n, table.data(), index_t(bins), ex, 2); }},
        {"copy, caching, 32-bit", [&] { counting ? hot_phases<true, true, true, true, 3, 1>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex, 2)
                                                 : hot_phases<true, true, true, true, 3, 1>(keys, vals, n, table.data(), index_t(bins), ex, 2); }},
        {"copy, caching, chunk 0", [&] { counting ? hot_phases<true, true, true, true, 3, 2>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex, 2)
                                                  : hot_phases<true, true, true, true, 3, 2>(keys, vals, n, table.data(), index_t(bins), ex, 2); }},
        {"copy, caching, chunk 0, 32-bit", [&] { counting ? hot_phases<true, true, true, true, 3, 3>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex, 2)
                                                          : hot_phases<true, true, true, true, 3, 3>(keys, vals, n, table.data(), index_t(bins), ex, 2); }},
        {"copy, caching, 32-bit, low-word peers", [&] { counting ? hot_phases<true, true, true, true, 3, 5>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex, 2)
                                                                  : hot_phases<true, true, true, true, 3, 5>(keys, vals, n, table.data(), index_t(bins), ex, 2); }},
        {"direct peer_reduce", [&] { counting ? direct_with<calm::peer_reduce>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                              : direct_with<calm::peer_reduce>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"direct peer_reduce, low word", [&] { counting ? direct_with<calm::peer_reduce_low_word>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                                        : direct_with<calm::peer_reduce_low_word>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"phases: + build", [&] { counting ? hot_phases<true, true, false, true>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                           : hot_phases<true, true, false, true>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"phases: probes only", [&] { counting ? hot_phases<false, true>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                               : hot_phases<false, true>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"phases: first tile only", [&] { counting ? hot_phases<true, false>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                                   : hot_phases<true, false>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"phases: neither", [&] { counting ? hot_phases<false, false>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), ex)
                                           : hot_phases<false, false>(keys, vals, n, table.data(), index_t(bins), ex); }},
        {"naive, own grid, 18.6 KB unused", [&] { counting ? naive_on_grid<0>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), 18576, ex)
                                                         : naive_on_grid<0>(keys, vals, n, table.data(), index_t(bins), 18576, ex); }},
        {"naive, hot_key's grid", [&] { counting ? naive_on_grid<1>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), 0, ex)
                                                : naive_on_grid<1>(keys, vals, n, table.data(), index_t(bins), 0, ex); }},
        {"naive, hot_key's grid, 18.6 KB", [&] { counting ? naive_on_grid<1>(keys, calm::constant(T(1)), n, table.data(), index_t(bins), 18576, ex)
                                                         : naive_on_grid<1>(keys, vals, n, table.data(), index_t(bins), 18576, ex); }},
        {"automatic", [&] { call(strategy::automatic); }},
    };
    std::printf("  2^%d keys\n", lg);
    for (auto const& v : variants) {
      timing const x = time_call(v.run, s, 30);
      std::printf("    %-28s %9.2f | %9.2f\n", v.name, x.host, x.device);
    }
  }
  std::fflush(stdout);
  CK(cudaGetLastError());
}

int main(int argc, char** argv) {
  cudaStream_t const s = probe_stream();
  std::size_t const n = std::size_t(1) << 26;
  probe_weights const w(n);
  calm::backend::device_buffer<double> dv(w.d);
  std::string const only = argc > 1 ? argv[1] : "";
  std::vector<int> sizes = {20, 22, 24, 26};
  if (argc > 2) sizes = {std::atoi(argv[2])};  // one size (under a profiler, say)
  for (char const* dist : {"gauss", "zipf"}) {
    if (!only.empty() && only != dist) continue;
    calm::backend::device_buffer<std::uint32_t> keys(calm_bench::bulk_keys(n, 300000, dist, 7));
    probe<std::uint32_t>("hist_u32", dist, keys.data(), nullptr, s, sizes);
    probe<double>("scatter_f64", dist, keys.data(), dv.data(), s, sizes);
  }
  return 0;
}
