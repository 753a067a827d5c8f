/* Threads of one process each hold a pattern of their own in vector
 * registers that SSE and AVX do not reach (zmm15's upper half, zmm16, the
 * opmask k1) and in ymm15's upper half, while they yield to each other
 * thousands of times; each then checks that its registers came back as it
 * left them. Run inside `zonelab vm`, it checks that User-Mode Linux's
 * switches between them keep every register of the host's XSAVE area
 * (serve/uml_fp_shim.c).
 *
 * usage: vector_state_check [THREADS [YIELDS]]; exit 0 when every thread's
 * registers held, 1 when one did not, 77 when the CPU has no AVX-512. */
#include <cpuid.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kThreadsMax = 64 };

struct work {
  uint64_t seed;
  long yields;
  int ok;
};

static int has_avx512f(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || (c & (1u << 27)) == 0) return 0; /* OSXSAVE */
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || (b & (1u << 16)) == 0) return 0;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  /* XCR0: SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM enabled by the kernel. */
  return (lo & 0xe6u) == 0xe6u;
}

__attribute__((target("avx512f"))) static void* run(void* arg) {
  struct work* w = arg;
  uint64_t pattern[8];
  for (int i = 0; i < 8; ++i) pattern[i] = (w->seed + 1) * 0x9e3779b97f4a7c15ull + (uint64_t)i;
  uint32_t mask = (uint32_t)(w->seed * 2654435761u) & 0xffffu;
  uint64_t out15[8], out16[8];
  uint32_t mask_out = 0;
  long n = w->yields;
  __asm__ volatile(
      "vmovdqu64 (%[p]), %%zmm15\n\t"
      "vmovdqu64 (%[p]), %%zmm16\n\t"
      "kmovw %[m], %%k1\n\t"
      "1:\n\t"
      "mov $24, %%eax\n\t" /* sched_yield */
      "syscall\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      "vmovdqu64 %%zmm15, (%[o15])\n\t"
      "vmovdqu64 %%zmm16, (%[o16])\n\t"
      "kmovw %%k1, %[mo]\n\t"
      : [n] "+r"(n), [mo] "=r"(mask_out)
      : [p] "r"(pattern), [o15] "r"(out15), [o16] "r"(out16), [m] "r"(mask)
      : "rax", "rcx", "r11", "memory", "xmm15", "xmm16", "k1");
  w->ok = memcmp(out15, pattern, sizeof pattern) == 0 &&
          memcmp(out16, pattern, sizeof pattern) == 0 && mask_out == mask;
  if (!w->ok) {
    fprintf(stderr, "thread %llu: its vector registers changed while it yielded\n",
            (unsigned long long)w->seed);
  }
  return NULL;
}

int main(int argc, char** argv) {
  long threads = argc > 1 ? strtol(argv[1], NULL, 10) : 4;
  long yields = argc > 2 ? strtol(argv[2], NULL, 10) : 5000;
  if (threads < 1 || threads > kThreadsMax || yields < 1) {
    fprintf(stderr, "usage: vector_state_check [THREADS (1-%d) [YIELDS (>= 1)]]\n", kThreadsMax);
    return 2;
  }
  if (!has_avx512f()) {
    printf("skip: no AVX-512 here\n");
    return 77;
  }
  struct work work[kThreadsMax];
  pthread_t ids[kThreadsMax];
  for (long i = 0; i < threads; ++i) {
    work[i] = (struct work){.seed = (uint64_t)i, .yields = yields, .ok = 0};
    if (pthread_create(&ids[i], NULL, run, &work[i]) != 0) {
      fprintf(stderr, "vector_state_check: cannot start thread %ld\n", i);
      return 2;
    }
  }
  int ok = 1;
  for (long i = 0; i < threads; ++i) {
    pthread_join(ids[i], NULL);
    ok = ok && work[i].ok;
  }
  printf("%s: %ld threads, %ld yields each\n", ok ? "held" : "changed", threads, yields);
  return ok ? 0 : 1;
}
