// A key-value workload (kv/workload.h) run on RocksDB over the zoned file
// system of a zonelab:// URI: the DB opened (made when missing) in a
// directory of the file system, threads issuing the workload's operations,
// each RocksDB call timed on the wall clock, and at the end RocksDB's
// statistics and the session's (device, file system, real-time driver).
//
// YCSB workloads run in two phases: a load phase inserts the records the DB
// does not hold yet (a marker key remembers how many it holds), then the run
// phase. The `verify` workload reads back every key an --ack-log lists.
//
// With an ack log, every write RocksDB acknowledged appends "KEY\n" to a
// host file with one write(2), so a crash test can check afterwards (with
// `verify`) that no acknowledged write was lost: with sync on, none may be.
#pragma once

#include "kv/result.h"

namespace zonelab::rocksdb_plugin {

// Runs the workload; never throws for bad input or a failing device.
KvResult run_kv(const KvOptions& options);
// Tenants: each KvOptions run at once on its own threads (their URIs name
// one image, each a tenant), the session held open from before the first
// starts to after the last closes its DB.
KvTenantsResult run_kv_tenants(const std::vector<KvOptions>& tenants);

}  // namespace zonelab::rocksdb_plugin
