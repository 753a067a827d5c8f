/* User-Mode Linux's FP shim, libzonelab_umlfp.so: `zonelab vm` preloads it
 * into the UML kernel's process on the host.
 *
 * UML runs each guest process as a host process that it traces, and saves
 * and restores a guest thread's floating-point and vector registers with
 * ptrace(PTRACE_GETREGSET / PTRACE_SETREGSET, NT_X86_XSTATE) into a buffer
 * of a fixed size: 2,696 bytes in Debian's 6.1.176 (x87, SSE, AVX, AVX-512
 * and PKRU). The host kernel sets the state only whole -- a buffer of its
 * own XSAVE size, 11,008 bytes on a CPU with AMX -- and refuses a shorter
 * one with EFAULT. UML then kills the guest thread with SIGSEGV on its
 * first return to user space: on such a host the guest's init dies and its
 * kernel panics.
 *
 * The shim gives the host what it asks for. A GETREGSET of a short buffer
 * reads the whole state, returns its first part as before and keeps the
 * whole, keyed by the buffer's address (UML's per-thread register area, so
 * one guest thread); a SETREGSET of a short buffer lays the buffer's bytes
 * over the whole state kept for that address -- or, for a buffer never
 * read, over the target's current state -- and sets the whole. A guest
 * thread so gets back every register it had, with whatever UML changed in
 * its part. Every other call, and any buffer of
 * the host's size or more, goes to the real ptrace unchanged; on a host
 * whose XSAVE size is UML's the shim does nothing but pass calls on.
 *
 * The kept states are bounded (kSlots of them); when all are taken, the
 * one used longest ago gives way, and its thread, should it run again,
 * starts from the target's state as a buffer never read does. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

enum {
  kSlots = 2048,
  /* Larger than any XSAVE area a host reports (AMX's is 11,008 bytes). */
  kStateMax = 1 << 16,
};

struct slot {
  const void* key; /* NULL: free */
  uint64_t used;   /* the clock at its last use */
  unsigned char* state;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[kSlots];
static uint64_t clock_now;
static size_t host_size; /* 0 until the first whole read */
static unsigned char scratch[kStateMax];

typedef long (*ptrace_fn)(enum __ptrace_request, ...);

static long forward(enum __ptrace_request request, pid_t pid, void* addr, void* data) {
  static ptrace_fn real;
  if (real == NULL) real = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
  if (real == NULL) return syscall(SYS_ptrace, request, pid, addr, data);
  return real(request, pid, addr, data);
}

/* The target's whole state into `scratch`; its size, or -1 (errno set). */
static long read_whole(pid_t pid) {
  struct iovec whole = {scratch, sizeof scratch};
  if (syscall(SYS_ptrace, PTRACE_GETREGSET, pid, (void*)(uintptr_t)NT_X86_XSTATE, &whole) < 0) {
    return -1;
  }
  host_size = whole.iov_len;
  return (long)whole.iov_len;
}

static size_t home_of(const void* key) {
  uintptr_t k = (uintptr_t)key;
  k ^= k >> 17;
  k *= 0x9e3779b97f4a7c15ull;
  return (size_t)(k >> 32) % kSlots;
}

/* The slot kept for `key`, or NULL. */
static struct slot* find(const void* key) {
  size_t i = home_of(key);
  for (size_t n = 0; n < kSlots; ++n, i = (i + 1) % kSlots) {
    if (slots[i].key == key) return &slots[i];
    if (slots[i].key == NULL) return NULL;
  }
  return NULL;
}

/* Keeps `scratch` (host_size bytes) as `key`'s state; without memory for it,
 * the key's thread starts from the target's state next time. */
static void keep(const void* key) {
  struct slot* s = find(key);
  if (s == NULL) {
    /* The first free slot from the key's home, where find() looks; with
     * none free, find() looks everywhere, and the one used longest ago
     * gives way. */
    size_t i = home_of(key);
    for (size_t n = 0; n < kSlots && s == NULL; ++n, i = (i + 1) % kSlots) {
      if (slots[i].key == NULL) s = &slots[i];
    }
    if (s == NULL) {
      s = &slots[0];
      for (size_t j = 1; j < kSlots; ++j) {
        if (slots[j].used < s->used) s = &slots[j];
      }
    }
    s->key = key;
  }
  s->used = ++clock_now;
  if (s->state == NULL) s->state = malloc(host_size);
  if (s->state != NULL) memcpy(s->state, scratch, host_size);
}

static long get_short(pid_t pid, struct iovec* iov) {
  if (read_whole(pid) < 0) return -1;
  size_t n = iov->iov_len < host_size ? iov->iov_len : host_size;
  memcpy(iov->iov_base, scratch, n);
  iov->iov_len = n;
  keep(iov->iov_base);
  return 0;
}

static long set_short(pid_t pid, const struct iovec* iov) {
  struct slot* s = find(iov->iov_base);
  if (s != NULL && s->state != NULL) {
    memcpy(scratch, s->state, host_size);
  } else if (read_whole(pid) < 0) {
    return -1;
  }
  memcpy(scratch, iov->iov_base, iov->iov_len);
  struct iovec whole = {scratch, host_size};
  if (syscall(SYS_ptrace, PTRACE_SETREGSET, pid, (void*)(uintptr_t)NT_X86_XSTATE, &whole) < 0) {
    return -1;
  }
  keep(iov->iov_base);
  return 0;
}

long ptrace(enum __ptrace_request request, ...) {
  va_list args;
  va_start(args, request);
  pid_t pid = va_arg(args, pid_t);
  void* addr = va_arg(args, void*);
  void* data = va_arg(args, void*);
  va_end(args);
  if ((request != PTRACE_GETREGSET && request != PTRACE_SETREGSET) ||
      (uintptr_t)addr != NT_X86_XSTATE || data == NULL) {
    return forward(request, pid, addr, data);
  }
  struct iovec* iov = data;
  pthread_mutex_lock(&lock);
  long result;
  if (host_size == 0 && read_whole(pid) < 0) {
    result = -1;
  } else if (iov->iov_len >= host_size || iov->iov_base == NULL) {
    result = syscall(SYS_ptrace, request, pid, addr, data);
  } else if (request == PTRACE_GETREGSET) {
    result = get_short(pid, iov);
  } else {
    result = set_short(pid, iov);
  }
  int saved = errno;
  pthread_mutex_unlock(&lock);
  errno = saved;
  return result;
}
