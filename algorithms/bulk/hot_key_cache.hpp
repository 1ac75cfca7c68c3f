// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/hot_key_cache.hpp: for tables too large to privatize, each block finds its hottest
// table lines (runs of line_entries entries) by a match over each warp's keys in its first tile (002's
// peer grouping in place of 000 §3.1 Alg. 2's vote), keeps them in block-local memory and sends the rest
// to the device table, merged by peer_reduce (002) where neighbouring lanes share a key. calm's own
// technique (design.md: "hot-key cache").
#pragma once

#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "direct_scatter.hpp"
#include "../warp/peer_reduce.hpp"
#include "privatize.hpp"

namespace calm {

/// What hot_key_scatter may be told.
struct hot_key_options {
  /// Block-local hash slots, one line each (a power of two, 2 to 4,096); at most slots / 2 lines are cached. 0: the
  /// most that fit a block's block-local memory and 80 KiB, up to 512 (hot_key_slots_for: 512 for 4-byte values on
  /// sm_90, 256 for 8-byte). Keys that crowd a few hundred lines without meeting in a warp (a bell over 300,000
  /// entries) are bound by the device atomics on those lines: on an H100 at 2^24-2^26 keys this default ran 1.20-1.42x
  /// naive there (4-byte values; doubles 1.01-1.16x) where 128 slots ran 0.96-1.13x, skewed keys within 2% of 128
  /// slots, keys spread over the whole table 1-2% slower (perf/results/cuda-h200-2026-11-28-hot-key-slots.md).
  int slots = 0;
  int votes = 2;    ///< lanes of a warp whose keys must fall in one line for the block to cache it
  int threads = 512;  ///< threads per block
  /// Table entries a cached line holds (a power of two, 1 to 64): 32 caches 128-byte lines of 4-byte
  /// entries, 1 single keys. Device atomics on different entries of one line serialize much as on one
  /// entry (zipf-like keys into 300,000 bins: a warm line gets ~2.5 atomics per warp of keys), so whole
  /// lines are cached, and the match that finds them sees a line's keys together.
  int line_entries = 32;
};

namespace detail {

/// Linear probes per lookup: a line is cached only within this distance of its hash slot.
constexpr int hot_key_probes = 4;
/// Bits of the block-local filter that keeps a line from being proposed twice (a false hit drops a
/// proposal: about c / 1024 of them with c lines proposed).
constexpr int hot_key_filter_bits = 1024;

/// The block-local layout of the cache: slot lines (-1: empty), slot values (line_entries per slot),
/// candidate count, proposal filter, candidate list and the bits of the slots claimed.
template <class T>
struct hot_key_layout {
  int slots;
  int line_entries = 1;
  CALM_HD static constexpr std::size_t align(std::size_t b) { return (b + 15) / 16 * 16; }
  CALM_HD std::size_t keys_offset() const { return 0; }
  CALM_HD std::size_t values_offset() const { return align(static_cast<std::size_t>(slots) * sizeof(index_t)); }
  CALM_HD std::size_t count_offset() const {
    return values_offset() + align(static_cast<std::size_t>(slots) * static_cast<std::size_t>(line_entries) * sizeof(T));
  }
  CALM_HD std::size_t filter_offset() const { return count_offset() + 16; }
  CALM_HD std::size_t candidates_offset() const { return filter_offset() + hot_key_filter_bits / 8; }
  CALM_HD std::size_t claims_offset() const { return candidates_offset() + static_cast<std::size_t>(slots) * sizeof(index_t); }
  CALM_HD int claim_words() const { return (slots + 31) / 32; }
  CALM_HD std::size_t bytes() const { return claims_offset() + align(static_cast<std::size_t>(claim_words()) * sizeof(std::uint32_t)); }
};

/// The 32-bit hash of a line (or key) that both the slot and the proposal filter take their bits from.
CALM_HD inline std::uint32_t hot_key_mix(index_t k) { return full_cycle_sequence(static_cast<std::uint32_t>(k) ^ static_cast<std::uint32_t>(k >> 32)); }

CALM_HD inline int hot_key_hash(index_t k, int slots) { return static_cast<int>(hot_key_mix(k) & static_cast<std::uint32_t>(slots - 1)); }

/// Where entry e of the line in slot `slot` (lines of 2^shift entries) lies among the cached values: the slot's
/// run of 2^shift values, its entries permuted by the slot's low bits (e xor slot), so that keys at one offset of
/// many lines (keys a power of two apart) fall in different banks of block-local memory, and a line's entries
/// still fill a run of consecutive banks.
CALM_HD inline index_t hot_key_entry(int slot, int e, int shift) { return (index_t(slot) << shift) + ((e ^ slot) & ((1 << shift) - 1)); }
/// The line entry whose value lies at `at` among the cached values (hot_key_entry's inverse within a slot).
CALM_HD inline int hot_key_offset(int at, int shift) { return (at ^ (at >> shift)) & ((1 << shift) - 1); }

/// A line's bit in the proposal filter: the hash's top bits (its low bits pick the line's slot).
CALM_HD inline int hot_key_filter_bit(index_t line) { return static_cast<int>(hot_key_mix(line) >> 22); }
static_assert(hot_key_filter_bits == 1 << 10, "hot_key_filter_bit takes 10 bits");

/// log2 of a power of two.
CALM_HD inline int log2_of(int x) {
  int s = 0;
  while ((1 << s) < x) ++s;
  return s;
}

/// The most block-local bytes a cache of hot_key_options::slots = 0 takes: two blocks of 512 threads an SM on sm_90
/// (4-byte values: 512 slots; 8-byte: 256; with 512 slots of doubles one block ran an SM, and runs of equal keys, which
/// cache nothing that pays, ran up to 1.5x slower on an H100: cuda-h100-2026-11-28-bulk-train-larger-hot-key-512-slots-sequential.json
/// and cuda-h100-2026-11-28-hot-key-slots-parallel-build.txt in perf/results).
constexpr std::size_t hot_key_auto_bytes = std::size_t(80) << 10;

/// The slots a cache of `opt` gets for table type T where a block has `block_bytes` of block-local memory: opt.slots
/// where it is set, else the most (a power of two up to 512) whose layout fits those bytes and hot_key_auto_bytes (2
/// at least).
template <class T>
CALM_HD inline int hot_key_slots_for(hot_key_options const& opt, std::size_t block_bytes) {
  if (opt.slots != 0) return opt.slots;
  std::size_t const most = block_bytes < hot_key_auto_bytes ? block_bytes : hot_key_auto_bytes;
  int s = 512;
  while (s > 2 && hot_key_layout<T>{s, opt.line_entries}.bytes() > most) s /= 2;
  return s;
}

/// `opt` with its slots resolved (hot_key_slots_for) for executor `ex`.
template <class T, class Exec>
hot_key_options resolved_hot_key_options(hot_key_options opt, Exec const& ex) {
  opt.slots = hot_key_slots_for<T>(opt, ex.block_local_bytes());
  return opt;
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
  int line_shift;  // log2 of the entries of a cached line
  /// Registers capped at 64, two blocks of 512 threads an SM: with its tile in registers (CALM_UNROLL)
  /// the program took 68 for float values on sm_90, one block of 512 an SM.
  static constexpr int resident_1024_blocks = 1;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    int const shift = line_shift, per = 1 << shift;
    hot_key_layout<T> const lay{slots, per};
    unsigned char* const base = blk.template scratch<unsigned char>();
    index_t* const skeys = reinterpret_cast<index_t*>(base + lay.keys_offset());
    T* const svals = reinterpret_cast<T*>(base + lay.values_offset());
    int* const count = reinterpret_cast<int*>(base + lay.count_offset());
    std::uint32_t* const filter = reinterpret_cast<std::uint32_t*>(base + lay.filter_offset());
    index_t* const cand = reinterpret_cast<index_t*>(base + lay.candidates_offset());
    std::uint32_t* const claims = reinterpret_cast<std::uint32_t*>(base + lay.claims_offset());
    int const nslots = slots, need = votes, entries = slots << shift, claim_words = lay.claim_words();
    index_t const nbins = bins;
    for (int s0 = 0; s0 < entries; s0 += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const s = map([s0](int tt) { return s0 + tt; }, t);
        when(w, s < nslots, [&](auto const& l) { store(l, skeys, s, index_t(-1)); });
        when(w, s < entries, [&](auto const& l) { store(l, svals, s, Op::template identity<T>()); });
        when(w, s < hot_key_filter_bits / 32, [&](auto const& l) { store(l, filter, s, 0u); });
        when(w, s < claim_words, [&](auto const& l) { store(l, claims, s, 0u); });
        when(w, s == 0, [&](auto const& l) { store(l, count, 0, 0); });
      });
    blk.sync();
    // 1. the block's first tile: in each warp, the lines that `votes` lanes' keys fall in (match_any
    //    over the lines) are proposed, once per block (a block-local filter drops lines already proposed)
    stream_items<Vec>(blk, keys, values, n, [&](auto const& w, auto const&, auto const& k, auto const&) {
      auto const key = map([](auto kk) { return static_cast<index_t>(kk); }, k);
      auto const in = map([nbins](index_t kk) { return key_in_table(kk, nbins); }, key);
      when(w, in, [&](auto const& v) {
        auto const line = map([shift](index_t kk) { return kk >> shift; }, key);
        // over the lines' low 32 bits: a 64-bit match costs twice as much (30 against 15 us a call on an H100, all
        // blocks matching at once: perf/results/cuda-h100-2026-11-28-hot-key-match.md); lines that differ above
        // them (tables of more than 2^32 lines) only make a proposal wrong, never an update
        auto const peers = match_any(v, map([](index_t ln) { return static_cast<std::uint32_t>(ln); }, line));
        auto const lead = (peers & lanes_lt(v)) == 0;
        auto const shared = popc(v, peers) >= need;
        when(v, lead & shared, [&](auto const& u) {
          auto const bit = map([](index_t ln) { return hot_key_filter_bit(ln); }, line);
          auto const mask = map([](int b) { return 1u << (b & 31); }, bit);
          auto const old = atomic_fetch_update(u, bit_or{}, scope::block_local{}, filter + map([](int b) { return b >> 5; }, bit), mask);
          when(u, (old & mask) == 0u, [&](auto const& x) {
            auto const at = atomic_fetch_update(x, plus{}, scope::block_local{}, count, 1);
            when(x, at < nslots, [&](auto const& y) { store(y, cand, at, line); });
          });
        });
      });
    }, true);
    blk.sync();
    // 2. the first slots / 2 candidates claim slots at once: each the first free one within hot_key_probes of its hash
    //    (a block-local bit_or on the claim bits; one that finds none is dropped). With one thread inserting them in
    //    turn, 512 slots cost about 25 us a call more than 128 on an H100 where every warp proposes a line (runs of 32
    //    equal keys); in parallel, 10-14 us (perf/results/cuda-h100-2026-11-28-hot-key-slots-parallel-build.txt)
    int const proposed = *count, tried = proposed < nslots / 2 ? proposed : nslots / 2;
    for (int c0 = 0; c0 < tried; c0 += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const c = map([c0](int tt) { return c0 + tt; }, t);
        when(w, c < tried, [&](auto const& v) {
          each_lane(
              v,
              [&](auto const& l, index_t line) {
                int const h = hot_key_hash(line, nslots);
                for (int p = 0; p < hot_key_probes; ++p) {
                  int const s = (h + p) & (nslots - 1);
                  std::uint32_t const bit = 1u << (s & 31);
                  if ((atomic_fetch_update(l, bit_or{}, scope::block_local{}, claims + (s >> 5), bit) & bit) == 0u) {
                    store(l, skeys, s, line);
                    break;
                  }
                }
              },
              load(v, cand, c));
        });
      });
    blk.sync();
    // 3. every item: a key of a cached line updates its block-local entry merged by peer_reduce, which
    //    matches the entries' indices (4 bytes, update_keyed: on an H200 the hotset inputs ran 35-80 us a
    //    call faster than matching addresses, perf/results/cuda-h200-2026-11-28-peer-keyed-ab.md); the
    //    others update the device table (update_entry), merged by peer_reduce only where two neighbouring
    //    lanes hold one key (runs: the hot keys of skewed inputs are cached, and the rest rarely collide in
    //    a warp, so matching them costs more than it merges); keys outside the table are skipped
    stream_items<Vec>(blk, keys, values, n, [&](auto const& w, auto const&, auto const& k, auto const& v) {
      auto const key = map([](auto kk) { return static_cast<index_t>(kk); }, k);
      auto const in = map([nbins](index_t kk) { return key_in_table(kk, nbins); }, key);
      auto const line = map([shift](index_t kk) { return kk >> shift; }, key);
      auto const h = map([nslots](index_t ln) { return hot_key_hash(ln, nslots); }, line);
      auto slot = map([](int) { return -1; }, h);
      for (int p = 0; p < hot_key_probes; ++p) {
        auto const s = map([p, nslots](int hh) { return (hh + p) & (nslots - 1); }, h);
        slot = select((slot < 0) & (load(w, skeys, s) == line), s, slot);
      }
      when(w, in & (slot >= 0), [&](auto const& u) {
        auto const entry = map([shift, per](int sl, index_t kk) { return hot_key_entry(sl, static_cast<int>(kk & (per - 1)), shift); }, select(slot >= 0, slot, 0), key);
        update_keyed<peer_reduce>(u, op, scope::block_local{}, svals + entry, map([](index_t e) { return static_cast<std::uint32_t>(e); }, entry), v);
      });
      auto const rest = in & (slot < 0);
      auto const before = shuffle_up(w, select(rest, key, index_t(-1)), 1);
      bool const runs = any(w, rest & (lane_id(w) > 0) & (before == key));
      when(w, rest, [&](auto const& u) { update_entry(u, op, out, nbins, select(in, key, index_t(0)), v, peer_reduce_if{runs}); });
    });
    blk.sync();
    // 4. the cached entries' totals go to the device table
    for (int s0 = 0; s0 < entries; s0 += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const s = map([s0](int tt) { return s0 + tt; }, t);
        when(w, s < entries, [&](auto const& l) {
          auto const line = load(l, skeys, map([shift](int ss) { return ss >> shift; }, s));
          auto const key = map([shift](index_t ln, int ss) { return ln < 0 ? index_t(-1) : (ln << shift) + hot_key_offset(ss, shift); }, line, s);  // -1: an empty slot
          auto const val = load(l, svals, s);
          when(l, (line >= 0) & (key < nbins) & (val != Op::template identity<T>()), [&](auto const& u) {
            atomic_update(u, op, scope::device{}, out + select(line >= 0, key, index_t(0)), val);
          });
        });
      });
  }
};

/// hot_key_scatter's block program reading its items in chunks of Vec (chunk_items).
template <int Vec, class Op, class K, class VS, class T>
hot_key_program<Vec, Op, K, VS, T> hot_key_program_for(Op op, K const* keys, VS const& vals, index_t n, T* table, index_t bins,
                                                           hot_key_options const& opt) {
  return {op, keys, vals, n, table, bins, opt.slots, opt.votes, log2_of(opt.line_entries)};
}

}  // namespace detail

/// table[keys[i]] = op(table[keys[i]], values[i]) for i < n with a per-block cache of hot table lines
/// (line_entries entries each): each block matches the lines of each warp's keys in its first tile,
/// keeps up to slots / 2 lines that `votes` lanes of a warp fell in in block-local memory, updates
/// their entries there and every other key in the device table (lanes merged by peer_reduce where two
/// neighbouring lanes share a key), and adds the cached totals to the table at the end. For tables
/// too large to privatize with skewed keys; values: T const* or calm::constant(v); keys outside
/// [0, bins) are skipped. Throws calm::error before launching on bad arguments (among them a cache
/// larger than a block's block-local memory).
template <class Op, class K, class Values, class T, class Exec = default_exec>
void hot_key_scatter(Op op, K const* keys, Values values, index_t n, T* table, index_t bins, hot_key_options const& opt = {},
                     Exec const& ex = Exec{}) {
  check_atomic_op<Op, T>();
  static_assert(std::is_integral<K>::value, "hot_key_scatter: keys must be integers");
  detail::check_scatter_arguments("hot_key_scatter", n, keys, values, table, bins);
  require(opt.slots == 0 || (opt.slots >= 2 && opt.slots <= 4096 && (opt.slots & (opt.slots - 1)) == 0), errc::invalid_argument,
          "hot_key_scatter: slots must be 0 (the most that fit, up to 512) or a power of two in [2, 4096]");
  require(opt.votes >= 1, errc::invalid_argument, "hot_key_scatter: votes must be at least 1");
  require(opt.threads >= 1 && opt.threads <= 1024, errc::invalid_argument, "hot_key_scatter: threads must be in [1, 1024]");
  require(opt.line_entries >= 1 && opt.line_entries <= 64 && (opt.line_entries & (opt.line_entries - 1)) == 0, errc::invalid_argument,
          "hot_key_scatter: line_entries must be a power of two in [1, 64]");
  hot_key_options const use = detail::resolved_hot_key_options<T>(opt, ex);
  std::size_t const bytes = detail::hot_key_layout<T>{use.slots, use.line_entries}.bytes();
  require(bytes <= ex.block_local_bytes(), errc::invalid_argument, [&] {
    return "hot_key_scatter: a cache of " + std::to_string(use.slots) + " slots of " + std::to_string(opt.line_entries) + " entries needs " +
        std::to_string(bytes) + " bytes of block-local memory, more than a block has (" + std::to_string(ex.block_local_bytes()) + ")";
  });
  if (n == 0 || bins == 0) return;
  auto const vals = detail::as_value_source<T>(values);
  constexpr int vec = detail::chunk_items<Exec, K, std::decay_t<decltype(vals)>>();
  ex.for_each_resident_block(detail::blocks_with_work(n, use.threads, vec), use.threads, bytes,
                             detail::hot_key_program_for<vec>(op, keys, vals, n, table, bins, use));
}

}  // namespace calm
