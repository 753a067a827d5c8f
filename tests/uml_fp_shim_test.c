/* serve/uml_fp_shim.c against the host's ptrace, without UML: a stopped
 * child's XSAVE state read and set through the shim with a buffer shorter
 * than the host's, as UML does. The short set succeeds (the host alone
 * refuses it where its XSAVE area is larger), lays exactly the buffer's
 * bytes over the state, and leaves every byte past the buffer as it was --
 * for a buffer read before (its kept state) and for one never read (the
 * child's current state). Exit 0 when all hold, 1 when one does not. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

enum { kMax = 1 << 16, kShort = 832 /* x87, SSE, AVX: the smallest UML buffer */ };

static int failures;

static void check(int ok, const char* what) {
  if (!ok) {
    ++failures;
    fprintf(stderr, "FAIL: %s\n", what);
  }
}

/* The child's whole state, without the shim; its size, or 0. */
static size_t read_raw(pid_t pid, unsigned char* into) {
  struct iovec iov = {into, kMax};
  if (syscall(SYS_ptrace, PTRACE_GETREGSET, pid, (void*)(uintptr_t)NT_X86_XSTATE, &iov) != 0) {
    return 0;
  }
  return iov.iov_len;
}

static long through_shim(enum __ptrace_request request, pid_t pid, unsigned char* buffer,
                         size_t length) {
  struct iovec iov = {buffer, length};
  return ptrace(request, pid, (void*)(uintptr_t)NT_X86_XSTATE, &iov);
}

/* Changes xmm0 (bytes 160-175 of the legacy area) in `buffer`, sets its
 * first kShort bytes through the shim, and checks that the child's state
 * then holds those bytes and, past them, what `before` held. */
static void short_set(pid_t child, unsigned char* buffer, int pattern, const unsigned char* before,
                      size_t host, const char* what) {
  static unsigned char after[kMax];
  char message[160];
  for (int i = 160; i < 176; ++i) buffer[i] = (unsigned char)(pattern + i);
  snprintf(message, sizeof message, "a short set of %s succeeds", what);
  check(through_shim(PTRACE_SETREGSET, child, buffer, kShort) == 0, message);
  snprintf(message, sizeof message, "%s: the state reads whole afterwards", what);
  check(read_raw(child, after) == host, message);
  snprintf(message, sizeof message, "%s: the set laid the buffer's bytes", what);
  check(memcmp(after, buffer, kShort) == 0, message);
  snprintf(message, sizeof message, "%s: the bytes past the buffer are as they were", what);
  check(memcmp(after + kShort, before + kShort, host - kShort) == 0, message);
}

int main(void) {
  pid_t child = fork();
  if (child == 0) {
    ptrace(PTRACE_TRACEME, 0, NULL, NULL);
    raise(SIGSTOP);
    _exit(0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFSTOPPED(status)) {
    fprintf(stderr, "uml_fp_shim_test: cannot trace a child\n");
    return 1;
  }
  static unsigned char before[kMax], after[kMax], read_before[kMax], never_read[kMax];
  size_t host = read_raw(child, before);
  if (host < kShort) {
    printf("skip: the host's XSAVE area is %zu bytes\n", host);
    kill(child, SIGKILL);
    return 77;
  }
  printf("host XSAVE area: %zu bytes; UML-sized buffer: %d bytes\n", host, kShort);
  if (host > kShort) {
    struct iovec iov = {before, kShort};
    long raw = syscall(SYS_ptrace, PTRACE_SETREGSET, child, (void*)(uintptr_t)NT_X86_XSTATE, &iov);
    printf("the host alone takes the short set: %s\n", raw == 0 ? "yes" : strerror(errno));
  }

  /* A buffer read through the shim, changed in xmm0 (bytes 160-175 of the
   * legacy area), and set back. */
  check(through_shim(PTRACE_GETREGSET, child, read_before, kShort) == 0, "a short read succeeds");
  check(memcmp(read_before, before, kShort) == 0, "a short read gives the state's first bytes");
  short_set(child, read_before, 0xa0, before, host, "a buffer read before");

  /* A buffer the shim never read: laid over the child's current state. */
  read_raw(child, never_read);
  short_set(child, never_read, 0x50, before, host, "a buffer never read");

  /* A whole buffer passes through unchanged. */
  check(through_shim(PTRACE_SETREGSET, child, before, host) == 0, "a whole set succeeds");
  check(read_raw(child, after) == host && memcmp(after, before, host) == 0,
        "a whole set restores the state");

  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  printf("%s\n", failures == 0 ? "uml_fp_shim: all checks passed" : "uml_fp_shim: failures");
  return failures == 0 ? 0 : 1;
}
