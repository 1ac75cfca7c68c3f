// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/choice/line_merge_rule.hpp: where automatic ends at peer_reduce, whether its direct scatter merges a warp's
// equal keys or updates naively, from the repeats of a key on a table line in the sample's warps (calm's own, beside 002).
#pragma once

#include <cstdint>

#include "../../core/exec.hpp"

namespace calm {
namespace detail {

/// What a sampling counted for line_merge_rule (collision_sample_program's merge_lines): over the
/// sampled warps, laid out as a direct scatter's warps meet the keys (lanes `vec` keys apart), for each
/// warp and each table line its in-table keys fall on, the most lanes that hold one key there, less
/// one, summed (`repeats`); and the warps with an in-table key (`warps`). A warp's device atomics on
/// one line are served together, but lanes on one key wait for each other; peer_reduce turns each
/// line's cost into one step and costs a match of its own. Lanes on keys 0..31: 0 (one key per lane);
/// lanes 4 keys apart over runs of 8 equal keys, each run on a line of its own: 16 lines of two lanes
/// each, 16; one key throughout: 31.
struct line_repeats {
  std::uint64_t repeats = 0;
  std::uint64_t warps = 0;
  /// Repeats per warp; negative where no warp was counted.
  CALM_HD double per_warp() const { return warps > 0u ? static_cast<double>(repeats) / static_cast<double>(warps) : -1.0; }
};

}  // namespace detail

/// Where automatic ends at peer_reduce on the device, whether the direct scatter merges (calm's own):
/// where the sampled warps (detail::line_repeats, counted by the sampling that made the choice) repeat
/// a key on a table line more than `min_line_repeats` times per warp; elsewhere the choice becomes
/// naive. 0 keeps peer_reduce always, as strategy::peer_reduce does; infinity makes it naive. One
/// decision per call, by the choice's finish: until 2026-11-26 each block probed its first tile and
/// decided for itself, which cost hist_u32 sorted and runs32 into 300,000 bins 0.9 and 2.1 us a call on
/// an H100 (perf/results/cuda-h100-2026-11-26-sample-block-level.md) and split 8-byte scatters into
/// two launches that both probed. The bulk calls take it from scatter_options::min_line_repeats
/// (negative, the default: resolved()).
struct line_merge_rule {
  float min_line_repeats = 0.0f;  ///< peer_reduce stays above this many repeats a warp (0: always)

  /// The default on a GPU, from the 719 training inputs larger than a block measured on an H200 with
  /// peer_reduce's 4-byte key match (perf/results/cuda-h200-2026-11-28-bulk-train-larger-keyed-peer.json,
  /// whose sampling case counts the repeats). Naive's time over peer_reduce's, geo mean per workload:
  /// 0.95-0.97 where a warp repeats no key on a line (under 0.01 repeats: 143 inputs), 0.96-1.02 at
  /// 0.01-0.25, 1.07-1.12 at 0.25-0.5, 1.3-1.6 at 1-2 and 2-6 at 2-8 repeats. Until then (8-byte address
  /// match, an H100: cuda-h100-2026-11-25-line-rule.md) it was 10: runs of 1 to 8 keys (8.65 repeats)
  /// ran 6-8% faster naive there; training inputs at 6-8 repeats now run 4-6x slower naive.
  static constexpr float gpu_min_line_repeats = 0.25f;
  /// Whether a sample that counted `r` merges: more than min_line_repeats repeats per warp, or no warp
  /// counted, or a rule of 0. A product and a comparison in double, no division (counts below 2^53
  /// are exact): the same answer on the host and the device under any float flags.
  CALM_HD bool merges(detail::line_repeats r) const {
    if (!(min_line_repeats > 0.0f) || r.warps == 0u) return true;
    return static_cast<double>(r.repeats) > static_cast<double>(min_line_repeats) * static_cast<double>(r.warps);
  }
  /// Above this many bytes of table the default for 8-byte values is 0 (see resolved).
  static constexpr std::uint64_t gpu_wide_max_table_bytes = std::uint64_t(16) << 20;
  /// The rule of scatter_options::min_line_repeats `option` on an exec of `family` for keys of
  /// `key_bytes`, values of `value_bytes` and a table of `table_bytes`. A negative option is the
  /// default: 0 on the host (not measured there); on a GPU gpu_min_line_repeats for 4-byte keys and
  /// values; for 8-byte values the same up to gpu_wide_max_table_bytes, where the sampling counts a
  /// warp's repeated keys (lines of one entry: detail::direct_lines_of), and 0 above, where merging pays
  /// whatever the count; 0 for
  /// 8-byte keys (not measured). Measured on an H100 (cuda-h100-2026-11-25-line-rule-f64-keys.md):
  /// runs of 1 to 8 doubles into 300,000 entries (2.4 MB) went from 0.880 to 0.947 of the best; into
  /// 5,000,000 (40 MB) the rule took them from 0.971 to 0.871; the 76 training inputs with doubles
  /// where automatic merges kept merging and paid the probe, 1-3% a call (each block probing then).
  static line_merge_rule resolved(float option, device_family family, std::size_t key_bytes = 4, std::size_t value_bytes = 4,
                                  std::uint64_t table_bytes = 0) {
    if (option >= 0.0f) return {option + 0.0f};  // -0 as 0
    bool const on = family != device_family::host && key_bytes <= 4 && (value_bytes <= 4 || table_bytes <= gpu_wide_max_table_bytes);
    return {on ? gpu_min_line_repeats : 0.0f};
  }
};

}  // namespace calm
