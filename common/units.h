// Unit constants. Internally everything is seconds, bytes and FLOPs (double).
// GB = 1e9 bytes and GiB = 2^30 bytes; NIC line rates are bits per second.
#pragma once

namespace racksim::units {

inline constexpr double kKB = 1e3;
inline constexpr double kMB = 1e6;
inline constexpr double kGB = 1e9;
inline constexpr double kTB = 1e12;
inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kTFLOPs = 1e12;
inline constexpr double kUs = 1e-6;
inline constexpr double kMs = 1e-3;
inline constexpr double kBitsPerByte = 8.0;

}  // namespace racksim::units
