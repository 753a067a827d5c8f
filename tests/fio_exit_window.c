/* LD_PRELOAD for fio_engine_test.py: widens the window between a fio job
 * thread marking itself exited and its last read of its thread_data, and
 * holds fio's exit after fio has unmapped the thread_data of its jobs. With
 * it, a job thread that fio's exit does not wait for reads unmapped memory
 * every time (SIGSEGV); one that is waited for reads it before the unmap.
 *
 * fio's job threads end with sk_out_drop(), which reads a thread-specific
 * value: the delay is in pthread_getspecific, for that caller's first call
 * (the last job thread to end calls it before fio stops its helper thread,
 * which calls it too; fio's exit waits for the helper). An exit
 * handler registered before fio's own (a constructor of this preload) runs
 * after them. The preload says on stderr that it delayed a thread. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void* (*next_getspecific)(pthread_key_t);
static int held;

static void hold_exit(void) { usleep(400 * 1000); }

__attribute__((constructor)) static void start(void) { atexit(hold_exit); }

void* pthread_getspecific(pthread_key_t key) {
  Dl_info info;
  if (next_getspecific == NULL) {
    next_getspecific = (void* (*)(pthread_key_t))dlsym(RTLD_NEXT, "pthread_getspecific");
  }
  if (dladdr(__builtin_return_address(0), &info) != 0 && info.dli_sname != NULL &&
      strcmp(info.dli_sname, "sk_out_drop") == 0 && __sync_fetch_and_add(&held, 1) == 0) {
    static const char said[] = "fio_exit_window: a job thread held on its way out\n";
    ssize_t ignored = write(2, said, sizeof(said) - 1);
    (void)ignored;
    usleep(150 * 1000);
  }
  return next_getspecific(key);
}
