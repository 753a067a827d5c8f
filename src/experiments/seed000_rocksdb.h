// Seed 000's RocksDB numbers (§5.2, Fig. 6-9), which the experiments that
// run RocksDB against a block SSD (rocksdb-zns-vs-block,
// rocksdb-fs-vs-zenfs) set beside their measurements: written once here.
#pragma once

namespace zonelab::seed000 {

// Fig. 6: overwrite, "ZenFS is 183% faster than XFS".
inline constexpr double kOverwriteZnsOverXfs = 2.83;
// §5.2: device write amplification, XFS 2.0, f2fs 2.4, ZenFS 1.0.
inline constexpr double kXfsDeviceWa = 2.0;
inline constexpr double kF2fsDeviceWa = 2.4;
inline constexpr double kZnsDeviceWa = 1.0;
// Fig. 8a: randomread P99, ZenFS 25 % lower than XFS.
inline constexpr double kRandomReadP99ZnsOverXfs = 0.75;
// Fig. 8b: rate-limited readwhilewriting, P99.9 2x lower than XFS.
inline constexpr double kRateLimitedP999ZnsOverXfs = 0.5;
// Fig. 7c: readwhilewriting without a limit, ZenFS 2x the writes of XFS.
inline constexpr double kUnlimitedWritesZnsOverXfs = 2.0;
// Fig. 8c: ... and P99.99 an order of magnitude lower.
inline constexpr double kUnlimitedP9999ZnsOverXfs = 0.1;
// Fig. 9: 28 % OP over 7 % OP: fillrandom +14-16 %, overwrite XFS +4 %,
// f2fs +25 %.
inline constexpr double kFillrandomOpGain = 1.15;
inline constexpr double kOverwriteOpGainXfs = 1.04;
inline constexpr double kOverwriteOpGainF2fs = 1.25;

}  // namespace zonelab::seed000
