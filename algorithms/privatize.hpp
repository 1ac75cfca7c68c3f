// calm/algorithms/privatize.hpp: scatter whole arrays through a table privatized in each block's block-local memory
// (001 §3 replication and padding, §4.2 histogram), lanes merged first by a strategy, or where a block finds a hot key.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "../core/error.hpp"
#include "../core/exec.hpp"
#include "key_map.hpp"
#include "private_table.hpp"

namespace calm {

/// What privatize_scatter may be told; 0 / -1 leave the choice to plan_privatize.
struct privatize_options {
  int copies = 0;   ///< R, the copies of the table per block (0: by the rule below)
  int pad = -1;     ///< entries between copies (-1: one when R > 1)
  copy_mapping mapping = copy_mapping::cyclic;
  int threads = 0;  ///< threads per block (0: 512)
};

/// The chosen shape of a privatized scatter: the table layout, threads per block, block-local bytes.
struct privatize_plan {
  private_layout layout;
  int threads = 512;
  std::size_t bytes = 0;
};

/// The replication rule: the largest R = 2^k <= max_copies whose R copies (one pad entry each) fit in
/// copy_budget bytes, at least 1. On Fermi the budget was the lock-aliasing size, 1,024 words (001 §3).
/// On Hopper no such size shows: more copies keep paying until they cost occupancy, so the budget is
/// the exec's replication_budget_bytes() (H100: 58% of a block's shared memory, 132 KiB), with R up
/// to 32 for weighted updates and 8 for counting (calm::constant) ones, where the hardware already
/// merges a warp's +1s. Measurements: perf/results/cuda-h100-2026-11-22-privatize.md.
constexpr int replication_for(index_t bins, std::size_t elem, std::size_t copy_budget, int max_copies) {
  int r = 1;
  while (r * 2 <= max_copies && static_cast<std::size_t>(r * 2) * static_cast<std::size_t>(bins + 1) * elem <= copy_budget) r *= 2;
  return r;
}

/// The plan for `bins` entries of T on exec: R by replication_for unless forced (counting: the update
/// is a calm::constant), one pad entry between copies when R > 1, cyclic mapping; throws errc::out_of_range (before anything runs) if the copies do not fit in one block's
/// block-local memory.
template <class T, class Exec>
privatize_plan plan_privatize(index_t bins, privatize_options const& opt, Exec const& ex, bool counting = false) {
  require(bins >= 0, errc::invalid_argument, [&] { return "privatize: negative table size " + std::to_string(bins); });
  require(opt.copies >= 0 && opt.copies <= 1024, errc::invalid_argument, "privatize: copies must be in [0, 1024]");
  require(opt.threads >= 0 && opt.threads <= 1024, errc::invalid_argument, "privatize: threads must be in [0, 1024]");
  privatize_plan p;
  p.threads = opt.threads > 0 ? opt.threads : 512;
  p.layout.bins = bins;
  p.layout.mapping = opt.mapping;
  p.layout.copies = opt.copies > 0 ? opt.copies : replication_for(bins, sizeof(T), ex.replication_budget_bytes(), counting ? 8 : 32);
  p.layout.pad = opt.pad >= 0 ? opt.pad : (p.layout.copies > 1 ? 1 : 0);
  p.bytes = p.layout.template bytes<T>();
  std::size_t const limit = ex.block_local_bytes();
  // a table over a quarter of the limit leaves room for one or two blocks per multiprocessor: give
  // them 1,024 threads, so that enough loads are in flight
  if (opt.threads == 0 && p.bytes > limit / 4) p.threads = 1024;
  require(p.bytes <= limit, errc::out_of_range,
          [&] { return "privatize: " + std::to_string(p.layout.copies) + " copies of " + std::to_string(bins) + " entries need " +
              std::to_string(p.bytes) + " bytes of block-local memory; one block has " + std::to_string(limit); });
  return p;
}

/// What adaptive_merge's probe finds in a block's first tile: of `items` keys (one per thread), the
/// most that one offered key takes (`most`: a hot key, wherever it falls), and, of the `run_items` keys
/// of the warps that offer, how many lie in the largest group of equal keys of their warp (`run`: equal
/// keys side by side, as in sorted keys, or one hot key) and how many share their warp's first key
/// (`first_run`: mostly equal keys side by side), each summed over those warps.
struct hot_key_probe {
  index_t most = 0, items = 0, run = 0, run_items = 0, first_run = 0;
};

/// privatize_scatter's lane merging chosen by each block (calm's own): the block probes its first tile
/// (detail::probe_hot_key) and merges a warp's equal keys (peer_reduce) before each block-local atomic
/// only where its probe finds keys that collide enough per copy of the table; elsewhere each lane
/// updates on its own (naive). On an H100 merging cost 3-11x more than not where keys rarely repeat
/// (match_any on every item), and saved up to 8x where one key took a quarter or more of a one-copy
/// table's float updates or runs of equal keys filled the warps
/// (perf/results/cuda-h100-2026-11-24-privatize-merge.md, cuda-h100-2026-11-24-bulk-adaptive.md).
struct adaptive_merge {
  /// Values read from an array: a block merges where one key takes at least this share of its probed
  /// updates per copy of the table, wherever those updates fall (on a GPU a float's or double's
  /// block-local atomic is a compare-and-swap loop: a hot key costs much even spread over the warps).
  /// Negative: the exec's default (gpu_weighted_share on a GPU; never on the host).
  float weighted_share = -1.0f;
  /// calm::constant values (a histogram's +1s, whose block-local atomics contend much less): a block
  /// merges where the lanes that share their warp's first key make this share of its probed keys per
  /// copy (runs of equal keys side by side, as in sorted keys; a hot key spread over the warps costs
  /// less than match_any on every item: on an H100, half the keys on one of 24,576 bins took 3.1x
  /// longer merged). Negative: the exec's default (gpu_counting_share; never on the host).
  float counting_share = -1.0f;
  /// Device memory (or nullptr): each block that merges adds 1 here.
  std::uint32_t* merged_blocks = nullptr;
  /// Values read from an array: a block also merges where the largest groups of equal keys of its
  /// warps make this share of its probed keys per copy (runs of equal keys: every lane of a warp on one
  /// entry, a compare-and-swap each). Negative: the exec's default (gpu_weighted_run_share; never on the host).
  float weighted_run_share = -1.0f;

  /// The defaults on a GPU, from the training inputs of the bulk sweep (H100; the results files above).
  static constexpr float gpu_weighted_share = 0.075f, gpu_counting_share = 0.5f, gpu_weighted_run_share = 0.25f;
  /// On the host a block runs on one core: a hot key contends with nothing there, and peer_reduce's
  /// lane-by-lane match cost up to 37x (floats, half the keys on one of 100,000 bins), so by default
  /// the host never merges.
  static constexpr float never = 2.0f;

  /// These options with the defaults of an exec of `family` filled in.
  adaptive_merge resolved(device_family family) const {
    adaptive_merge r = *this;
    bool const host = family == device_family::host;
    if (r.weighted_share < 0) r.weighted_share = host ? never : gpu_weighted_share;
    if (r.counting_share < 0) r.counting_share = host ? never : gpu_counting_share;
    if (r.weighted_run_share < 0) r.weighted_run_share = host ? never : gpu_weighted_run_share;
    return r;
  }
  /// Whether a block whose probe found `p` merges into a table of `copies` copies (shares resolved).
  CALM_HD bool merges(hot_key_probe const& p, int copies, bool counting) const {
    auto const reaches = [copies](index_t part, index_t of, float share) {
      return static_cast<double>(part) >= static_cast<double>(share) * copies * static_cast<double>(of);
    };
    if (counting) return reaches(p.first_run, p.run_items, counting_share);
    return reaches(p.most, p.items, weighted_share) || reaches(p.run, p.run_items, weighted_run_share);
  }
  /// Whether any block could merge into a table of `copies` copies (a probe of one key everywhere).
  bool could_merge(int copies, bool counting) const { return merges(hot_key_probe{1, 1, 1, 1, 1}, copies, counting); }
};

/// The most entries of T that one block's block-local memory holds on exec (one copy, no padding;
/// the layout's discard entry taken off).
template <class T, class Exec>
index_t privatize_capacity(Exec const& ex) {
  return static_cast<index_t>(ex.block_local_bytes() / sizeof(T)) - 1;
}

namespace detail {

/// Vec consecutive items, loaded at once (16 bytes for Vec = 4 and 4-byte keys).
template <class K, int Vec>
struct alignas(sizeof(K) * Vec) chunk {
  K v[Vec];
};

template <int Vec, class Warp, class T, class I>
CALM_HD auto load_chunk(Warp const& w, T const* p, I const& c) {
  return load(w, reinterpret_cast<chunk<T, Vec> const*>(p), c);
}
template <int Vec, class Warp, class T, class I>
CALM_HD auto load_chunk(Warp const&, same_value<T> const& v, I const&) {
  return v;
}
template <class T>
CALM_HD same_value<T> component(same_value<T> const& v, int) {
  return v;
}
template <class C>
CALM_HD auto component(C const& c, int j) {
  return map([j](auto const& x) { return x.v[j]; }, c);
}

/// Chunks each thread loads before it updates (CUB's items per thread): enough loads in flight to
/// keep the memory system busy.
constexpr int loads_in_flight = 4;

/// Items a block program's tile covers: threads x loads_in_flight chunks of Vec items.
template <int Vec>
CALM_HD index_t tile_items(index_t threads) {
  return threads * loads_in_flight * Vec;
}

/// The streaming loop of the block programs: f(w, t, state, u, key, value) for each of this block's
/// items of keys[0, n) and values (a T const* or a same_value), where state = init(w, t) is what a
/// thread computes once per tile (its copy of the table, say) and u < loads_in_flight is the chunk of
/// the tile the item is in.
/// Tiles of threads x loads_in_flight chunks of Vec items (the backend's block says which tiles are
/// this block's), all loads of a full tile issued before its updates; block 0 also takes the last
/// n % Vec items. `only_first_tile` stops after the block's first tile (a sample). Every thread of the
/// block calls it. PerLane: init and f need no other lane, so each lane runs on its own (each_lane:
/// the same code on a GPU; on the host a scalar loop with the state in registers, each chunk updated
/// as it is loaded, since a lane that runs alone has no other loads to overlap).
template <int Vec, bool PerLane, class Block, class K, class Values, class Init, class F>
CALM_HD void stream_items_with_state(Block const& blk, K const* keys, Values const& values, index_t n, Init const& init, F&& f,
                                     bool only_first_tile = false) {
  constexpr int U = loads_in_flight;
  index_t const chunks = n / Vec;
  index_t const threads = blk.threads(), tile_chunks = threads * U;
  bool first = true;
  blk.for_each_tile((chunks + tile_chunks - 1) / tile_chunks, [&](index_t tile) {
    if (only_first_tile && !first) return;
    first = false;
    index_t const base = tile * tile_chunks;
    bool const full = base + tile_chunks <= chunks;
    blk.for_each_warp([&](auto const& w, auto t) {
      auto const lanes = [&](auto const& w1, auto const& t1) {
        auto const c0 = map([base](int tt) { return base + tt; }, t1);
        auto const state = init(w1, t1);
        auto const apply = [&](auto const& v, int u, auto const& kc, auto const& vc) {
          for (int j = 0; j < Vec; ++j) f(v, t1, state, u, component(kc, j), component(vc, j));
        };
        if (full && std::decay_t<decltype(w1)>::size == 1) {  // a lane alone: update each chunk as it comes
          for (int u = 0; u < U; ++u) apply(w1, u, load_chunk<Vec>(w1, keys, c0 + u * threads), load_chunk<Vec>(w1, values, c0 + u * threads));
        } else if (full) {  // every load first, then every update
          decltype(load_chunk<Vec>(w1, keys, c0)) kc[U];
          decltype(load_chunk<Vec>(w1, values, c0)) vc[U];
          for (int u = 0; u < U; ++u) kc[u] = load_chunk<Vec>(w1, keys, c0 + u * threads);
          for (int u = 0; u < U; ++u) vc[u] = load_chunk<Vec>(w1, values, c0 + u * threads);
          for (int u = 0; u < U; ++u) apply(w1, u, kc[u], vc[u]);
        } else {
          for (int u = 0; u < U; ++u) {
            auto const c = c0 + u * threads;
            when(w1, c < chunks, [&](auto const& v) { apply(v, u, load_chunk<Vec>(v, keys, c), load_chunk<Vec>(v, values, c)); });
          }
        }
      };
      if constexpr (PerLane) each_lane(w, lanes, t);
      else lanes(w, t);
    });
  });
  if (Vec > 1 && blk.index() == 0 && !only_first_tile)  // the last n % Vec items
    blk.for_each_warp([&](auto const& w, auto t) {
      auto const i = map([c = chunks * Vec](int tt) { return c + tt; }, t);
      when(w, i < n, [&](auto const& v) { f(v, t, init(v, t), 0, load(v, keys, i), component(load_chunk<1>(v, values, i), 0)); });
    });
}

/// stream_items_with_state with no state: f(w, t, key, value).
template <int Vec, class Block, class K, class Values, class F>
CALM_HD void stream_items(Block const& blk, K const* keys, Values const& values, index_t n, F&& f, bool only_first_tile = false) {
  stream_items_with_state<Vec, false>(
      blk, keys, values, n, [](auto const&, auto const&) { return 0; },
      [&](auto const& w, auto const& t, int, int, auto const& k, auto const& v) { f(w, t, k, v); }, only_first_tile);
}

/// Block-local bytes of adaptive_merge's probe: up to probe_warps offered keys, their counts and their
/// warps' largest groups and first keys' groups (16 bits each).
constexpr int probe_warps = 64;
constexpr std::size_t probe_bytes = probe_warps * (sizeof(index_t) + 2 * sizeof(std::uint32_t));

/// adaptive_merge's probe of this block's first tile (the tile stream_items_with_state starts with):
/// the first item of each thread's first chunk, one key per thread spread over the tile. Each of the
/// first probe_warps warps finds its largest group of equal keys (match_any) and offers that group's
/// key (and counts the lanes that share its first lane's key), and each offered key is counted exactly
/// among all the probed keys. Every thread gets the same answer. Uses `scratch` (probe_bytes of
/// block-local memory), free again when it returns.
template <int Vec, class Block, class K, class KeyMap>
CALM_HD hot_key_probe probe_hot_key(Block const& blk, K const* keys, index_t n, KeyMap const& key_map, unsigned char* scratch) {
  index_t const chunks = n / Vec, threads = blk.threads(), tile_chunks = threads * loads_in_flight;
  index_t first = -1;
  blk.for_each_tile((chunks + tile_chunks - 1) / tile_chunks, [&](index_t tile) {
    if (first < 0) first = tile;
  });
  hot_key_probe r;
  if (first < 0) return r;  // no full chunk: nothing to probe (block 0's last n % Vec items go naive)
  index_t const base = first * tile_chunks;
  r.items = std::min(threads, chunks - base);
  constexpr index_t none = std::numeric_limits<index_t>::min();  // no key: a lane without an item, a probe past the last
  index_t* const offered = reinterpret_cast<index_t*>(scratch);
  std::uint32_t* const counts = reinterpret_cast<std::uint32_t*>(scratch + probe_warps * sizeof(index_t));
  std::uint32_t* const groups = counts + probe_warps;
  int const most_probes = probe_warps;  // a value: the device cannot bind a reference to the namespace constant
  int probes = 0, width = 1;
  // thread t's probed key (none where its chunk lies past the last), and whether it has one
  auto const probed = [&](auto const& w, auto const& t) {
    auto const c = map([base](int tt) { return base + tt; }, t);
    auto const valid = map([chunks](index_t cc) { return cc < chunks; }, c);
    return std::make_pair(valid, select(valid, map_keys(w, key_map, load(w, keys, select(valid, c * Vec, index_t(0)))), none));
  };
  blk.for_each_warp([&](auto const& w, auto t) {
    constexpr int W = std::decay_t<decltype(w)>::size;
    probes = std::min(most_probes, (blk.threads() + W - 1) / W);
    width = W;
    auto const warp = map([](int tt) { return tt / W; }, t);
    if (any(w, warp < probes)) {  // the warp's lanes share their warp index
      auto const [valid, key] = probed(w, t);
      // the warp's largest group of equal keys (lanes without a key in none), its size found bit by bit
      auto const group = select(valid, map([](auto c) { return static_cast<int>(c); }, popc(w, match_any(w, key))), 0);
      int largest = 0;
      for (int b = 6; b >= 0; --b)
        if (any(w, group >= (largest | (1 << b)))) largest |= 1 << b;
      int const at = ffs(w, ballot(w, group == largest)) - 1;
      auto const top = shuffle(w, key, at < 0 ? 0 : at);  // none where no lane has a key
      auto const first = static_cast<std::uint32_t>(popc(w, ballot(w, valid & (key == shuffle(w, key, 0)))));
      when(w, lane_id(w) == 0, [&](auto const& l) {
        store(l, offered, warp, top);
        store(l, groups, warp, static_cast<std::uint32_t>(largest) | first << 16);
      });
    }
    when(w, t < most_probes, [&](auto const& l) { store(l, counts, t, 0u); });
  });
  blk.sync();
  blk.for_each_warp([&](auto const& w, auto t) {
    auto const [valid, key] = probed(w, t);
    // each offered key among this warp's keys, four at a time (independent loads and votes)
    auto const offer = [&](int p) { return p < probes ? offered[p] : none; };
    for (int p = 0; p < probes; p += 4) {
      index_t const k0 = offer(p), k1 = offer(p + 1), k2 = offer(p + 2), k3 = offer(p + 3);
      std::uint32_t const hits[4] = {static_cast<std::uint32_t>(popc(w, ballot(w, valid & (key == k0)))),
                                     static_cast<std::uint32_t>(popc(w, ballot(w, valid & (key == k1)))),
                                     static_cast<std::uint32_t>(popc(w, ballot(w, valid & (key == k2)))),
                                     static_cast<std::uint32_t>(popc(w, ballot(w, valid & (key == k3))))};
      for (int j = 0; j < 4; ++j)
        if (hits[j] > 0u)
          when(w, elect_leader(w), [&](auto const& l) { atomic_update(l, plus{}, scope::block_local{}, counts + p + j, hits[j]); });
    }
  });
  blk.sync();
  for (int p = 0; p < probes; ++p) {
    r.most = std::max<index_t>(r.most, counts[p]);
    r.run += groups[p] & 0xffffu;
    r.first_run += groups[p] >> 16;
  }
  r.run_items = std::min<index_t>(r.items, static_cast<index_t>(probes) * width);
  blk.sync();  // every thread has read the counts before the scratch is reused
  return r;
}

/// The block program of privatize_scatter: clear the private table, stream the block's items into
/// it, merge the copies into the device table.
template <int Vec, class Strategy, class Op, class K, class Values, class T, class KeyMap = identity_key>
struct privatized_scatter_program {
  Op op;
  K const* keys;
  Values values;  // T const* or same_value<T>
  index_t n;
  T* out;
  private_layout layout;
  Strategy strategy;
  KeyMap key_map = {};

  /// adaptive_merge's kernel holds both paths; its registers capped at 64 per thread, so that a block
  /// of 1,024 threads always launches and, on an H100, the blocks that do not merge run as many threads
  /// at once as privatize with naive (whose values take up to 62 registers); a cap of 32 for the +1s
  /// of a histogram spilled and ran up to 1.3x longer.
  static constexpr int resident_1024_blocks = std::is_same<Strategy, adaptive_merge>::value ? 1 : 0;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    private_table<T> const tab{blk.template scratch<T>(), layout, blk.threads()};
    if constexpr (std::is_same<Strategy, adaptive_merge>::value) {
      hot_key_probe const probe = probe_hot_key<Vec>(blk, keys, n, key_map, blk.template scratch<unsigned char>());
      bool const merge = probe.items > 0 && strategy.merges(probe, layout.copies, is_same_value<Values>::value);
      std::uint32_t* const merged = strategy.merged_blocks;
      if (merge && merged != nullptr)
        blk.for_each_warp([&](auto const& w, auto t) { when(w, t == 0, [&](auto const& l) { atomic_update(l, plus{}, scope::device{}, merged, 1u); }); });
      tab.clear(blk, op);
      if (merge) stream_into(blk, tab, peer_reduce{});
      else stream_into(blk, tab, naive{});
    } else {
      tab.clear(blk, op);
      stream_into(blk, tab, strategy);
    }
    tab.merge_into(blk, op, scope::device{}, out);
  }

  /// The block's items into its private table, lanes merged by `merge` before each atomic.
  template <class Block, class Merge>
  CALM_HD void stream_into(Block const& blk, private_table<T> const& tab, Merge const& merge) const {
    // naive needs no other lane: each lane streams on its own (a scalar loop on the host), with its
    // copy's first entry, the discard entry and the table size as local values (tab.lane_view)
    stream_items_with_state<Vec, std::is_same<Merge, naive>::value>(
        blk, keys, values, n,
        [&](auto const& w, auto const& t) {
          // a lane that runs alone (the host) takes each chunk of its tile to the next copy: the updates
          // of a hot key then go to the R copies in turn instead of waiting on each other in one entry
          return tab.template lane_views<loads_in_flight>(t, std::decay_t<decltype(w)>::size == 1);
        },
        [&](auto const& w, auto const&, auto const& lanes, int u, auto const& k, auto const& v) {
          if constexpr (std::is_same<KeyMap, identity_key>::value) update(w, op, scope::block_local{}, lanes.slot(u, k), v, merge);
          else update(w, op, scope::block_local{}, lanes.slot(u, map_keys(w, key_map, k)), v, merge);
        });
  }
};

/// values as the program reads them: a pointer to T, or a same_value of T.
template <class T, class V>
auto as_value_source(V const& v) {
  if constexpr (is_same_value<V>::value) {
    return same_value<T>{static_cast<T>(v.value)};
  } else {
    static_assert(std::is_pointer<V>::value && std::is_same<std::remove_cv_t<std::remove_pointer_t<V>>, T>::value,
                  "privatize_scatter: values must be a pointer to the table's type, or calm::constant(v)");
    return static_cast<T const*>(v);
  }
}

/// The argument checks every bulk scatter makes before launching (the table size is checked by the plan).
template <class K, class Values, class T>
void check_scatter_arguments(char const* who, index_t n, K const* keys, Values const& values, T const* table, index_t bins) {
  require(n >= 0, errc::invalid_argument, [&] { return std::string(who) + ": n = " + std::to_string(n) + " is negative"; });
  require(bins >= 0, errc::invalid_argument, [&] { return std::string(who) + ": negative table size " + std::to_string(bins); });
  require(n == 0 || keys != nullptr, errc::invalid_argument, [&] { return std::string(who) + ": keys is null"; });
  require(bins == 0 || table != nullptr, errc::invalid_argument, [&] { return std::string(who) + ": table is null"; });
  if constexpr (std::is_pointer<Values>::value) require(n == 0 || values != nullptr, errc::invalid_argument, [&] { return std::string(who) + ": values is null"; });
}

/// Whether a block program may load keys (and values) four at a time: the exec wants chunk loads and
/// both arrays are aligned to their chunk (16 bytes for 4-byte items).
template <class Exec, class K, class VS>
bool chunk_loads(K const* keys, VS const& vals) {
  bool ok = Exec::vector_loads && sizeof(K) * 4 <= 16 && reinterpret_cast<std::uintptr_t>(keys) % (sizeof(K) * 4) == 0;
  if constexpr (std::is_pointer<VS>::value) {
    using T = std::remove_cv_t<std::remove_pointer_t<VS>>;
    ok = ok && sizeof(T) * 4 <= 32 && reinterpret_cast<std::uintptr_t>(vals) % (sizeof(T) * 4) == 0;
  }
  return ok;
}

/// How a block program reads its items: chunks of four at once (keys and values aligned to their
/// chunk, where the exec wants chunk loads), or one at a time.
enum class load_form { chunks, items };
template <load_form F>
using load_form_t = std::integral_constant<load_form, F>;
template <load_form F>
constexpr int vec_of = F == load_form::chunks ? 4 : 1;

template <class Exec, class K, class VS>
load_form load_form_of(K const* keys, VS const& vals) {
  return chunk_loads<Exec>(keys, vals) ? load_form::chunks : load_form::items;
}
/// g(load_form_t<F>{}) for the form f: one instantiation of g per form, each a kernel of its own.
template <class G>
void with_load_form(load_form f, G&& g) {
  if (f == load_form::chunks) g(load_form_t<load_form::chunks>{});
  else g(load_form_t<load_form::items>{});
}
/// The blocks that have work when `threads` threads each take loads_in_flight loads per tile.
inline index_t blocks_with_work(index_t n, int threads, load_form f) {
  index_t const tiles = (n + tile_items<4>(threads) - 1) / tile_items<4>(threads);
  return f == load_form::chunks ? tiles : tiles * 4;
}

/// privatize_scatter's block program reading its items in form F.
template <load_form F, class Strategy, class Op, class K, class VS, class T, class KeyMap>
privatized_scatter_program<vec_of<F>, Strategy, Op, K, VS, T, KeyMap> privatized_program(Op op, K const* keys, VS const& vals, index_t n, T* table,
                                                                                          privatize_plan const& plan, KeyMap const& key_map,
                                                                                          Strategy strategy) {
  return {op, keys, vals, n, table, plan.layout, strategy, key_map};
}

/// Block-local bytes of privatize_scatter's block program: the plan's table, and room for
/// adaptive_merge's probe, which runs before the table is cleared.
template <class Strategy>
std::size_t program_bytes(privatize_plan const& plan, Strategy const&) {
  return std::is_same<Strategy, adaptive_merge>::value ? std::max(plan.bytes, probe_bytes) : plan.bytes;
}

/// launch(program, bytes) with privatize_scatter's block program reading its items in form F and its
/// block-local bytes. adaptive_merge has its shares resolved for Exec's family; a table of so many
/// copies that no share reaches its threshold (or the host's default) gets naive's program instead:
/// no block would merge, and the program without the probe and the merging keeps a plain kernel's
/// registers (on an H100 the adaptive kernel ran 1.4x longer than naive on tables of 32 copies that
/// never merged).
template <load_form F, class Strategy, class Op, class K, class VS, class T, class KeyMap, class Exec, class Launch>
void with_privatized_program(Op op, K const* keys, VS const& vals, index_t n, T* table, privatize_plan const& plan, KeyMap const& key_map,
                             Strategy strategy, Exec const&, Launch&& launch) {
  if constexpr (std::is_same<Strategy, adaptive_merge>::value) {
    strategy = strategy.resolved(Exec::family);
    if (!strategy.could_merge(plan.layout.copies, is_same_value<VS>::value)) {
      launch(privatized_program<F>(op, keys, vals, n, table, plan, key_map, naive{}), plan.bytes);
      return;
    }
  }
  launch(privatized_program<F>(op, keys, vals, n, table, plan, key_map, strategy), program_bytes(plan, strategy));
}

/// Launch privatize_scatter's block program (arguments checked, the plan made, n > 0, bins > 0).
template <class Strategy, class Op, class K, class VS, class T, class KeyMap, class Exec>
void launch_privatized_scatter(Op op, K const* keys, VS const& vals, index_t n, T* table, privatize_plan const& plan, KeyMap const& key_map,
                               Strategy strategy, Exec const& ex) {
  load_form const form = load_form_of<Exec>(keys, vals);
  with_load_form(form, [&](auto f) {
    with_privatized_program<decltype(f)::value>(op, keys, vals, n, table, plan, key_map, strategy, ex, [&](auto const& program, std::size_t bytes) {
      ex.for_each_resident_block(blocks_with_work(n, plan.threads, form), plan.threads, bytes, program);
    });
  });
}

}  // namespace detail

/// table[keys[i]] = op(table[keys[i]], values[i]) for i < n, through a copy of the table in each block's
/// block-local memory: R copies with padding (plan_privatize), lanes merged by Strategy before each
/// block-local atomic, then one device atomic per bin and block. values: a T const* of n values, or
/// calm::constant(v) for every item (a histogram's +1). Keys outside [0, bins) are skipped. Throws
/// calm::error before launching if an argument is wrong or the table does not fit. Asynchronous on
/// a GPU (ex's stream).
///
///   calm::privatize_scatter(calm::plus{}, keys, calm::constant(1u), n, hist, 256);  // a histogram
template <class Strategy = naive, class Op, class K, class Values, class T, class Exec = default_exec>
void privatize_scatter(Op op, K const* keys, Values values, index_t n, T* table, index_t bins,
                       privatize_options const& opt = {}, Strategy strategy = {}, Exec const& ex = Exec{}) {
  check_atomic_op<Op, T>();
  static_assert(std::is_integral<K>::value, "privatize_scatter: keys must be integers");
  detail::check_scatter_arguments("privatize_scatter", n, keys, values, table, bins);
  privatize_plan const plan = plan_privatize<T>(bins, opt, ex, is_same_value<Values>::value);
  if (n == 0 || bins == 0) return;
  detail::launch_privatized_scatter(op, keys, detail::as_value_source<T>(values), n, table, plan, detail::identity_key{}, strategy, ex);
}

}  // namespace calm
