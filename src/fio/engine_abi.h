/* The C calls between fio's side of the ioengine (engine.c, compiled as C
 * against fio's own headers) and zonelab's (fio_image.h, C++). Nothing of
 * fio's structures crosses: offsets, lengths, buffers and opaque cookies
 * only. Errors come back as a positive errno, or as a message written into
 * the caller's buffer. */
#ifndef ZONELAB_FIO_ENGINE_ABI_H
#define ZONELAB_FIO_ENGINE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zl_fio_image zl_fio_image; /* a job's hold on a shared image */
typedef struct zl_fio_queue zl_fio_queue; /* a job's I/O */

struct zl_fio_options {
  int timing_off;         /* 0: modeled in real time; 1: virtual time, no pacing */
  double time_scale;      /* wall time per unit of device time (modeled) */
  const char* scheduler;  /* NULL or "": the image's */
  const char* stats_path; /* NULL or "": none */
  int batched_journal;    /* journal records in batches (zonelab_journal=batched) */
};

struct zl_fio_geometry {
  uint64_t size_bytes;
  uint32_t lba_bytes;
  int zoned;                /* a zoned namespace: host-managed for fio */
  int uniform_zones;        /* every zone of one size */
  uint64_t zone_size_bytes; /* the first zone's */
  uint32_t zone_count;
  uint32_t max_open_zones; /* 0: no limit */
  int stores_data;         /* the image keeps what is written (store.backing) */
};

/* Zone conditions, as the kernel and fio number them. */
enum zl_fio_zone_cond {
  ZL_FIO_ZONE_EMPTY = 0x1,
  ZL_FIO_ZONE_IMP_OPEN = 0x2,
  ZL_FIO_ZONE_EXP_OPEN = 0x3,
  ZL_FIO_ZONE_CLOSED = 0x4,
  ZL_FIO_ZONE_READONLY = 0xD,
  ZL_FIO_ZONE_FULL = 0xE,
  ZL_FIO_ZONE_OFFLINE = 0xF,
};

struct zl_fio_zone {
  uint64_t start; /* bytes */
  uint64_t wp;
  uint64_t len;
  uint64_t capacity;
  int cond; /* enum zl_fio_zone_cond */
};

enum zl_fio_io { ZL_FIO_READ, ZL_FIO_WRITE, ZL_FIO_TRIM, ZL_FIO_FLUSH };

/* Opens (or joins) the image; NULL with a message on failure. */
zl_fio_image* zl_fio_open(const char* path, const struct zl_fio_options* options, char* error,
                          size_t error_size);
void zl_fio_close(zl_fio_image* image);
void zl_fio_get_geometry(zl_fio_image* image, struct zl_fio_geometry* out);
/* Zones from the one holding `offset`, at most `count`; how many, or -errno. */
int zl_fio_report_zones(zl_fio_image* image, uint64_t offset, struct zl_fio_zone* zones,
                        unsigned count);
/* Resets every zone [offset, offset + length) touches: 0, or a positive
 * errno with a message. */
int zl_fio_reset_zones(zl_fio_image* image, uint64_t offset, uint64_t length, char* error,
                       size_t error_size);

zl_fio_queue* zl_fio_queue_new(zl_fio_image* image);
void zl_fio_queue_free(zl_fio_queue* queue);
/* 0 (queued) or a positive errno (refused: not whole LBAs, past the end). */
int zl_fio_submit(zl_fio_queue* queue, int io, uint64_t offset, uint64_t length, void* data,
                  void* cookie);
void zl_fio_commit(zl_fio_queue* queue);
/* Waits for `min` completions (timeout_ns < 0: no limit), takes up to `max`. */
unsigned zl_fio_reap(zl_fio_queue* queue, unsigned min, unsigned max, int64_t timeout_ns);
/* The i-th completion of the last reap: its cookie, its errno (0 or
 * positive) and the device's status name ("success", "zone-is-full"...). */
void* zl_fio_event(zl_fio_queue* queue, unsigned i, int* error, const char** status);

#ifdef __cplusplus
}
#endif

#endif
