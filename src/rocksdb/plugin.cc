// The entry of libzonelab_rocksdb.so: loading the library registers the
// zonelab:// URI with RocksDB (registry.cc, linked in whole); nothing else
// is exported.
#include "rocksdb/registry.h"
