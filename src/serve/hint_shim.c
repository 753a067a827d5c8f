/* The guest's hint shim, libzonelab_hints.so: preloaded into a program in
 * `zonelab vm --write-hints`, it passes the program's write-lifetime hints
 * (fcntl F_SET_RW_HINT) to the served disk's streams. After each fallocate
 * of a file that carries a hint, it asks the file system where the space
 * went (FIEMAP) and appends "OFFSET LENGTH HINT\n" per extent to the file
 * named by ZONELAB_STREAM_HINTS, synchronously (O_DSYNC), before fallocate
 * returns. serve/stream_hints.h says what the host does with the records.
 *
 * It also mends RocksDB's fcntl(F_SET_RW_HINT): the kernel reads a 64-bit
 * hint, RocksDB (7.8, as every release since hints came in) passes the
 * address of a 4-byte enum, so the call fails with EINVAL whenever the 4
 * bytes after it are not zero and the hint never reaches the inode. When the
 * kernel refuses a call whose first 4 bytes hold a valid hint (0-5), the
 * shim asks again with that hint as 64 bits.
 *
 * Without the variable, or on any failure of its own, the shim changes
 * nothing else: fallocate and fcntl return what the real ones did. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#ifndef F_GET_RW_HINT
#define F_GET_RW_HINT 1035 /* F_LINUX_SPECIFIC_BASE + 11 */
#endif
#ifndef F_SET_RW_HINT
#define F_SET_RW_HINT 1036
#endif
#define WRITE_HINT_MAX 5 /* RWH_WRITE_LIFE_EXTREME */

#define EXTENTS_AT_ONCE 32

static pthread_mutex_t hints_lock = PTHREAD_MUTEX_INITIALIZER;
static int hints_fd = -1;

static int hints_file(void) {
  if (hints_fd >= 0) return hints_fd;
  const char* path = getenv("ZONELAB_STREAM_HINTS");
  if (path == NULL || *path == 0) return -1;
  hints_fd = open(path, O_WRONLY | O_APPEND | O_DSYNC | O_CLOEXEC);
  return hints_fd;
}

/* The extents of [offset, offset + length) of `fd`, each appended as a
 * record with `hint`. */
static void report(int fd, uint64_t offset, uint64_t length, uint64_t hint) {
  union {
    struct fiemap map;
    char bytes[sizeof(struct fiemap) + EXTENTS_AT_ONCE * sizeof(struct fiemap_extent)];
  } u;
  uint64_t at = offset;
  const uint64_t end = offset + length;
  int saved = errno;
  pthread_mutex_lock(&hints_lock);
  int out = hints_file();
  while (out >= 0 && at < end) {
    memset(&u, 0, sizeof u);
    u.map.fm_start = at;
    u.map.fm_length = end - at;
    u.map.fm_extent_count = EXTENTS_AT_ONCE;
    if (ioctl(fd, FS_IOC_FIEMAP, &u.map) != 0 || u.map.fm_mapped_extents == 0) break;
    uint64_t next = at;
    for (uint32_t i = 0; i < u.map.fm_mapped_extents; ++i) {
      const struct fiemap_extent* e = &u.map.fm_extents[i];
      next = e->fe_logical + e->fe_length;
      /* An extent without an address yet (delayed allocation, f2fs's
       * reserved blocks) or one not on this disk alone says nothing. */
      if (e->fe_physical == 0 || e->fe_length == 0 ||
          (e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED |
                          FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_NOT_ALIGNED)) != 0) {
        continue;
      }
      /* Only the part inside the range asked for. */
      uint64_t lo = e->fe_logical > at ? e->fe_logical : at;
      uint64_t hi = next < end ? next : end;
      if (hi <= lo) continue;
      char line[96];
      int n = snprintf(line, sizeof line, "%llu %llu %llu\n",
                       (unsigned long long)(e->fe_physical + (lo - e->fe_logical)),
                       (unsigned long long)(hi - lo), (unsigned long long)hint);
      if (n > 0 && (size_t)n < sizeof line) {
        ssize_t put = write(out, line, (size_t)n);
        (void)put;
      }
    }
    const struct fiemap_extent* last = &u.map.fm_extents[u.map.fm_mapped_extents - 1];
    if ((last->fe_flags & FIEMAP_EXTENT_LAST) != 0 || next <= at) break;
    at = next;
  }
  pthread_mutex_unlock(&hints_lock);
  errno = saved;
}

static void after(int fd, int mode, uint64_t offset, uint64_t length) {
  /* Punching or zeroing gives no new space. */
  if ((mode & ~FALLOC_FL_KEEP_SIZE) != 0 || length == 0) return;
  uint64_t hint = 0;
  int saved = errno;
  if (fcntl(fd, F_GET_RW_HINT, &hint) != 0 || hint == 0) {
    errno = saved;
    return;
  }
  errno = saved;
  report(fd, offset, length, hint);
}

typedef int (*fcntl_fn)(int, int, ...);

static fcntl_fn real_fcntl(const char* name) {
  fcntl_fn f = (fcntl_fn)dlsym(RTLD_NEXT, name);
  return f != NULL ? f : (fcntl_fn)dlsym(RTLD_NEXT, "fcntl");
}

/* Every fcntl argument is an int or a pointer: passed on as a long. */
static int shim_fcntl(fcntl_fn real, int fd, int cmd, long arg) {
  if (real == NULL) {
    errno = ENOSYS;
    return -1;
  }
  int r = real(fd, cmd, arg);
  if (r == -1 && errno == EINVAL && cmd == F_SET_RW_HINT && arg != 0) {
    uint32_t low;
    memcpy(&low, (const void*)arg, sizeof low);
    if (low <= WRITE_HINT_MAX) {
      uint64_t hint = low;
      r = real(fd, cmd, &hint);
    }
  }
  return r;
}

/* fcntl and fcntl64 alike: the real one of that name, found once. */
#define SHIM_FCNTL(NAME)                        \
  int NAME(int fd, int cmd, ...) {              \
    static fcntl_fn real;                       \
    if (real == NULL) real = real_fcntl(#NAME); \
    va_list ap;                                 \
    va_start(ap, cmd);                          \
    long arg = va_arg(ap, long);                \
    va_end(ap);                                 \
    return shim_fcntl(real, fd, cmd, arg);      \
  }

SHIM_FCNTL(fcntl)
SHIM_FCNTL(fcntl64)

typedef int (*fallocate_fn)(int, int, off_t, off_t);
typedef int (*posix_fallocate_fn)(int, off_t, off_t);

int fallocate(int fd, int mode, off_t offset, off_t length) {
  static fallocate_fn real;
  if (real == NULL) real = (fallocate_fn)dlsym(RTLD_NEXT, "fallocate");
  if (real == NULL) {
    errno = ENOSYS;
    return -1;
  }
  int r = real(fd, mode, offset, length);
  if (r == 0 && offset >= 0 && length > 0) after(fd, mode, (uint64_t)offset, (uint64_t)length);
  return r;
}

int fallocate64(int fd, int mode, off_t offset, off_t length) {
  return fallocate(fd, mode, offset, length);
}

int posix_fallocate(int fd, off_t offset, off_t length) {
  static posix_fallocate_fn real;
  if (real == NULL) real = (posix_fallocate_fn)dlsym(RTLD_NEXT, "posix_fallocate");
  if (real == NULL) return ENOSYS;
  int r = real(fd, offset, length);
  if (r == 0 && offset >= 0 && length > 0) after(fd, 0, (uint64_t)offset, (uint64_t)length);
  return r;
}

int posix_fallocate64(int fd, off_t offset, off_t length) {
  return posix_fallocate(fd, offset, length);
}
