/* libzonelab_fio.so: fio's side of the zonelab ioengine (docs/fio.md).
 *
 *   fio --ioengine=external:build/libzonelab_fio.so --filename=dev.img ...
 *
 * Compiled as C against the headers of the fio it is loaded into (the
 * source of Debian's fio package, scripts/fio-source.sh), so that the
 * structures fio hands over are read as fio lays them out. Everything
 * about the device is on the other side of engine_abi.h.
 *
 * Every job naming an image shares the image's one model in this process,
 * so jobs run as threads of one fio: setup() turns `thread` on before fio
 * starts them (a job with create_serialize=0 is set up in its own process
 * already, and is refused unless `thread` is given). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine_abi.h"
#include "fio.h"
#include "optgroup.h"

#ifndef ZONELAB_FIO_BUILT_FOR
#error "ZONELAB_FIO_BUILT_FOR must name the fio version the engine is built for"
#endif

struct zl_engine_options {
  void* pad; /* fio keeps its thread_data here */
  unsigned int timing_off;
  unsigned int batched_journal;
  char* time_scale;
  char* scheduler;
  char* stats;
};

static struct fio_option zl_options[] = {
    {
        .name = "zonelab_timing",
        .lname = "zonelab timing",
        .type = FIO_OPT_STR,
        .off1 = offsetof(struct zl_engine_options, timing_off),
        .help = "modeled: the model paced to the wall clock; off: as fast as the model runs",
        .def = "modeled",
        .posval =
            {
                {.ival = "modeled", .oval = 0, .help = "device time paced to the wall clock"},
                {.ival = "off", .oval = 1, .help = "no pacing: virtual time on fio's threads"},
            },
        .category = FIO_OPT_C_ENGINE,
        .group = FIO_OPT_G_INVALID,
    },
    {
        .name = "zonelab_journal",
        .lname = "zonelab journal",
        .type = FIO_OPT_STR,
        .off1 = offsetof(struct zl_engine_options, batched_journal),
        .help = "completion: each completion is in the image's journal first; batched: records "
                "written in batches, as zonelab bench does",
        .def = "completion",
        .posval =
            {
                {.ival = "completion", .oval = 0, .help = "a completion is in the journal"},
                {.ival = "batched", .oval = 1, .help = "records in batches (a benchmark's way)"},
            },
        .category = FIO_OPT_C_ENGINE,
        .group = FIO_OPT_G_INVALID,
    },
    {
        .name = "zonelab_time_scale",
        .lname = "zonelab time scale",
        .type = FIO_OPT_STR_STORE,
        .off1 = offsetof(struct zl_engine_options, time_scale),
        .help = "wall time per unit of device time with zonelab_timing=modeled (2: twice as slow)",
        .category = FIO_OPT_C_ENGINE,
        .group = FIO_OPT_G_INVALID,
    },
    {
        .name = "zonelab_scheduler",
        .lname = "zonelab I/O scheduler",
        .type = FIO_OPT_STR_STORE,
        .off1 = offsetof(struct zl_engine_options, scheduler),
        .help = "host I/O scheduler in front of the device (none, mq-deadline, zinc)",
        .category = FIO_OPT_C_ENGINE,
        .group = FIO_OPT_G_INVALID,
    },
    {
        .name = "zonelab_stats",
        .lname = "zonelab statistics file",
        .type = FIO_OPT_STR_STORE,
        .off1 = offsetof(struct zl_engine_options, stats),
        .help = "write the device's counters (JSON) to this file when the image closes",
        .category = FIO_OPT_C_ENGINE,
        .group = FIO_OPT_G_INVALID,
    },
    {
        .name = NULL,
    },
};

/* fio's exit, and job threads still on their way out.
 *
 * A job thread of fio (3.33, thread=1) reads its thread_data once more after
 * marking itself exited, and fio's exit unmaps the thread_data of every job
 * (an atexit handler). A job thread descheduled across that moment takes fio
 * down with SIGSEGV after fio has printed its results -- with fio's own
 * engines too. Jobs on zonelab images always run as threads, so the engine
 * closes the window for its own: each job thread is counted when its engine
 * starts, uncounted by a thread-specific destructor (which runs after the
 * thread's last read of its thread_data), and an exit handler, registered
 * after fio's and so run before it, waits for the count to reach zero
 * (bounded, so that a thread that never ends cannot hold fio's exit).
 * libzonelab_fio.so is linked -z nodelete: the destructor and the handler
 * stay mapped after fio lets go of the engine. */
#define ZL_EXIT_WAIT_S 10

static pthread_mutex_t zl_exit_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t zl_exit_cond = PTHREAD_COND_INITIALIZER;
static unsigned int zl_live_job_threads;
static pthread_key_t zl_job_thread_key;
static int zl_job_thread_key_made;
static pthread_once_t zl_exit_once = PTHREAD_ONCE_INIT;

static void zl_job_thread_gone(void* unused) {
  (void)unused;
  pthread_mutex_lock(&zl_exit_mutex);
  zl_live_job_threads--;
  pthread_cond_broadcast(&zl_exit_cond);
  pthread_mutex_unlock(&zl_exit_mutex);
}

static void zl_wait_for_job_threads(void) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += ZL_EXIT_WAIT_S;
  pthread_mutex_lock(&zl_exit_mutex);
  while (zl_live_job_threads > 0) {
    if (pthread_cond_timedwait(&zl_exit_cond, &zl_exit_mutex, &deadline) == ETIMEDOUT) break;
  }
  pthread_mutex_unlock(&zl_exit_mutex);
}

static void zl_exit_setup(void) {
  if (pthread_key_create(&zl_job_thread_key, zl_job_thread_gone) != 0) return;
  zl_job_thread_key_made = 1;
  atexit(zl_wait_for_job_threads);
}

/* Called on the job's own thread. */
static void zl_count_job_thread(void) {
  pthread_once(&zl_exit_once, zl_exit_setup);
  /* fio's main thread is the one that waits: it is not counted. */
  if (!zl_job_thread_key_made || syscall(SYS_gettid) == getpid()) return;
  if (pthread_getspecific(zl_job_thread_key) != NULL) return;
  pthread_mutex_lock(&zl_exit_mutex);
  if (pthread_setspecific(zl_job_thread_key, &zl_live_job_threads) == 0) zl_live_job_threads++;
  pthread_mutex_unlock(&zl_exit_mutex);
}

/* A job: its hold on its image (taken in setup, given back in cleanup --
 * fio frees the job's files before it cleans the engine up), its queue and
 * the io_us of the last getevents. */
struct zl_job {
  zl_fio_image* image;
  zl_fio_queue* queue;
  struct io_u** events;
  unsigned int events_size;
  /* Reads leave fio's buffer as it was, as null_blk without memory_backed
   * does: the image stores no data and the job does not verify (a verify
   * reads zeros, so what was never stored fails it). */
  int reads_move_no_data;
};

static struct zl_job* zl_job_of(struct thread_data* td) {
  if (td->io_ops_data == NULL) td->io_ops_data = calloc(1, sizeof(struct zl_job));
  return td->io_ops_data;
}

static int zl_fail(struct thread_data* td, int error, const char* message) {
  log_err("zonelab: %s\n", message);
  td_verror(td, error, "zonelab");
  return 1;
}

/* The options as the C++ side takes them; 0, or 1 with the error said. */
static int zl_read_options(struct thread_data* td, struct zl_fio_options* out) {
  struct zl_engine_options* o = td->eo;
  char message[256];

  memset(out, 0, sizeof(*out));
  out->timing_off = o->timing_off ? 1 : 0;
  out->batched_journal = o->batched_journal ? 1 : 0;
  out->time_scale = 1.0;
  if (o->time_scale != NULL && o->time_scale[0] != '\0') {
    char* end = NULL;
    errno = 0;
    out->time_scale = strtod(o->time_scale, &end);
    if (errno != 0 || end == o->time_scale || *end != '\0' || !(out->time_scale > 0)) {
      snprintf(message, sizeof(message),
               "zonelab_time_scale=%.64s: a number above 0 (wall time per unit of device time)",
               o->time_scale);
      return zl_fail(td, EINVAL, message);
    }
    if (out->timing_off) {
      return zl_fail(td, EINVAL, "zonelab_time_scale needs zonelab_timing=modeled");
    }
  }
  out->scheduler = o->scheduler;
  out->stats_path = o->stats;
  return 0;
}

/* A job's block sizes must be whole LBAs of the image. */
static int zl_check_sizes(struct thread_data* td, const char* name, uint64_t start,
                          const struct zl_fio_geometry* g) {
  char message[512];
  int ddir;

  for (ddir = 0; ddir < DDIR_RWDIR_CNT; ddir++) {
    unsigned long long sizes[2] = {td->o.min_bs[ddir], td->o.max_bs[ddir]};
    int k;
    for (k = 0; k < 2; k++) {
      if (sizes[k] != 0 && sizes[k] % g->lba_bytes != 0) {
        snprintf(message, sizeof(message),
                 "%s: a block size of %llu bytes is not a whole number of the image's %u-byte "
                 "LBAs",
                 name, sizes[k], g->lba_bytes);
        return zl_fail(td, EINVAL, message);
      }
    }
  }
  if (start % g->lba_bytes != 0) {
    snprintf(message, sizeof(message), "%s: offset %llu is not a whole number of %u-byte LBAs",
             name, (unsigned long long)start, g->lba_bytes);
    return zl_fail(td, EINVAL, message);
  }
  if (start >= g->size_bytes) {
    snprintf(message, sizeof(message),
             "%s: offset %llu is past the end of the image's %llu bytes (%u zones)", name,
             (unsigned long long)start, (unsigned long long)g->size_bytes, g->zone_count);
    return zl_fail(td, EINVAL, message);
  }
  if (g->zoned && td->o.zone_mode != ZONE_MODE_ZBD && (td_write(td) || td_trim(td))) {
    snprintf(message, sizeof(message),
             "%s is a zoned namespace: a job that writes to it needs zonemode=zbd (fio then "
             "writes at each zone's write pointer)",
             name);
    return zl_fail(td, EINVAL, message);
  }
  if (g->zoned && td->o.zone_mode == ZONE_MODE_ZBD && !g->uniform_zones) {
    snprintf(message, sizeof(message),
             "%s has zones of several sizes; fio's zonemode=zbd takes zones of one size", name);
    return zl_fail(td, EINVAL, message);
  }
  return 0;
}

static int zl_setup(struct thread_data* td) {
  struct zl_fio_options options;
  struct fio_file* f;
  unsigned int i;
  char message[1024];
  struct zl_job* job;

  if (zl_read_options(td, &options)) return 1;
  if (td->o.nr_files > 1) {
    return zl_fail(td, EINVAL, "a job runs on one zonelab image (one filename)");
  }
  job = zl_job_of(td);
  if (job == NULL) return zl_fail(td, ENOMEM, "out of memory");
  if (!td->o.use_thread) {
    if (!td->o.create_serialize) {
      return zl_fail(td, EINVAL,
                     "jobs on a zonelab image run as threads of one fio, sharing its model: "
                     "add thread=1 (or leave create_serialize on)");
    }
    td->o.use_thread = 1;
  }
  for_each_file(td, f, i) {
    zl_fio_image* image = f->engine_data;
    struct zl_fio_geometry g;
    if (image == NULL) {
      image = job->image;
      if (image == NULL) image = zl_fio_open(f->file_name, &options, message, sizeof(message));
      if (image == NULL) return zl_fail(td, EINVAL, message);
      job->image = image;
      f->engine_data = image;
    }
    zl_fio_get_geometry(image, &g);
    f->real_file_size = g.size_bytes;
    fio_file_set_size_known(f);
    /* The job's first offset, as fio works it out (offset=, a percentage,
     * offset_increment for clones). */
    if (zl_check_sizes(td, f->file_name, get_start_offset(td, f), &g)) return 1;
    /* fio asks the engine for zones only of a device, not of a file. */
    f->filetype = FIO_TYPE_BLOCK;
  }
  return 0;
}

static int zl_init(struct thread_data* td) {
  struct zl_job* job = td->io_ops_data;

  if (!td->o.use_thread) {
    return zl_fail(td, EINVAL,
                   "jobs on a zonelab image run as threads of one fio, sharing its model: add "
                   "thread=1");
  }
  zl_count_job_thread();
  if (job == NULL || job->image == NULL) {
    return zl_fail(td, EINVAL, "no image to run on (filename=IMAGE)");
  }
  /* Again now that fio has turned offsets in zones (offset=10z) into bytes. */
  {
    struct fio_file* f;
    unsigned int i;
    struct zl_fio_geometry g;
    zl_fio_get_geometry(job->image, &g);
    for_each_file(td, f, i) {
      if (zl_check_sizes(td, f->file_name, get_start_offset(td, f), &g)) return 1;
    }
    job->reads_move_no_data = !g.stores_data && td->o.verify == 0; /* VERIFY_NONE */
  }
  job->events_size = td->o.iodepth > 0 ? td->o.iodepth : 1;
  job->events = calloc(job->events_size, sizeof(job->events[0]));
  job->queue = zl_fio_queue_new(job->image);
  if (job->events == NULL || job->queue == NULL) return zl_fail(td, ENOMEM, "out of memory");
  return 0;
}

static void zl_cleanup(struct thread_data* td) {
  struct zl_job* job = td->io_ops_data;

  if (job == NULL) return;
  zl_fio_queue_free(job->queue);
  free(job->events);
  /* The image closes (its state saved) when its last job lets go. */
  if (job->image != NULL) zl_fio_close(job->image);
  free(job);
  td->io_ops_data = NULL;
}

static int zl_open_file(struct thread_data* td, struct fio_file* f) {
  (void)td;
  (void)f;
  return 0;
}

static int zl_close_file(struct thread_data* td, struct fio_file* f) {
  (void)td;
  (void)f;
  return 0;
}

static int zl_get_file_size(struct thread_data* td, struct fio_file* f) {
  struct zl_fio_geometry g;
  (void)td;
  if (f->engine_data == NULL) return EINVAL;
  zl_fio_get_geometry(f->engine_data, &g);
  f->real_file_size = g.size_bytes;
  fio_file_set_size_known(f);
  return 0;
}

static int zl_invalidate(struct thread_data* td, struct fio_file* f) {
  (void)td;
  (void)f;
  return 0;
}

static enum fio_q_status zl_queue(struct thread_data* td, struct io_u* io_u) {
  struct zl_job* job = td->io_ops_data;
  int io;
  int error;

  switch (io_u->ddir) {
    case DDIR_READ:
      io = ZL_FIO_READ;
      break;
    case DDIR_WRITE:
      io = ZL_FIO_WRITE;
      break;
    case DDIR_TRIM:
      io = ZL_FIO_TRIM;
      break;
    case DDIR_SYNC:
    case DDIR_DATASYNC:
    case DDIR_SYNC_FILE_RANGE:
      io = ZL_FIO_FLUSH;
      break;
    default:
      io_u->error = EINVAL;
      return FIO_Q_COMPLETED;
  }
  error = zl_fio_submit(job->queue, io, io_u->offset, io_u->xfer_buflen,
                        io == ZL_FIO_READ && job->reads_move_no_data ? NULL : io_u->xfer_buf, io_u);
  if (error != 0) {
    io_u->error = error;
    return FIO_Q_COMPLETED;
  }
  return FIO_Q_QUEUED;
}

static int zl_commit(struct thread_data* td) {
  struct zl_job* job = td->io_ops_data;
  zl_fio_commit(job->queue);
  return 0;
}

static int zl_getevents(struct thread_data* td, unsigned int min, unsigned int max,
                        const struct timespec* t) {
  struct zl_job* job = td->io_ops_data;
  int64_t timeout_ns = -1;
  unsigned int got;
  unsigned int k;

  if (t != NULL) timeout_ns = (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
  if (max > job->events_size) max = job->events_size;
  got = zl_fio_reap(job->queue, min, max, timeout_ns);
  for (k = 0; k < got; k++) {
    int error = 0;
    struct io_u* io_u = zl_fio_event(job->queue, k, &error, NULL);
    io_u->error = error;
    if (error != 0) io_u->resid = io_u->xfer_buflen;
    job->events[k] = io_u;
  }
  return (int)got;
}

static struct io_u* zl_event(struct thread_data* td, int event) {
  struct zl_job* job = td->io_ops_data;
  return job->events[event];
}

static int zl_get_zoned_model(struct thread_data* td, struct fio_file* f,
                              enum zbd_zoned_model* model) {
  struct zl_fio_geometry g;
  (void)td;
  if (f->engine_data == NULL) return -EINVAL;
  zl_fio_get_geometry(f->engine_data, &g);
  *model = g.zoned ? ZBD_HOST_MANAGED : ZBD_NONE;
  return 0;
}

static int zl_report_zones(struct thread_data* td, struct fio_file* f, uint64_t offset,
                           struct zbd_zone* zones, unsigned int nr_zones) {
  struct zl_fio_zone* report;
  int got;
  int k;
  (void)td;

  if (f->engine_data == NULL) return -EINVAL;
  report = calloc(nr_zones > 0 ? nr_zones : 1, sizeof(*report));
  if (report == NULL) return -ENOMEM;
  got = zl_fio_report_zones(f->engine_data, offset, report, nr_zones);
  for (k = 0; k < got; k++) {
    zones[k].start = report[k].start;
    zones[k].wp = report[k].wp;
    zones[k].len = report[k].len;
    zones[k].capacity = report[k].capacity;
    zones[k].type = ZBD_ZONE_TYPE_SWR;
    zones[k].cond = (enum zbd_zone_cond)report[k].cond;
  }
  free(report);
  return got;
}

static int zl_reset_wp(struct thread_data* td, struct fio_file* f, uint64_t offset,
                       uint64_t length) {
  char message[512];
  int error;
  if (f->engine_data == NULL) return -EINVAL;
  error = zl_fio_reset_zones(f->engine_data, offset, length, message, sizeof(message));
  if (error != 0) {
    log_err("zonelab: %s: %s\n", f->file_name, message);
    td_verror(td, error, "zonelab zone reset");
    return -error;
  }
  return 0;
}

static int zl_get_max_open_zones(struct thread_data* td, struct fio_file* f,
                                 unsigned int* max_open_zones) {
  struct zl_fio_geometry g;
  (void)td;
  if (f->engine_data == NULL) return -EINVAL;
  zl_fio_get_geometry(f->engine_data, &g);
  *max_open_zones = g.max_open_zones;
  return 0;
}

static struct ioengine_ops zl_ops = {
    .name = "zonelab",
    .version = FIO_IOOPS_VERSION,
    .flags = FIO_DISKLESSIO | FIO_NOEXTEND | FIO_NODISKUTIL,
    .setup = zl_setup,
    .init = zl_init,
    .queue = zl_queue,
    .commit = zl_commit,
    .getevents = zl_getevents,
    .event = zl_event,
    .cleanup = zl_cleanup,
    .open_file = zl_open_file,
    .close_file = zl_close_file,
    .invalidate = zl_invalidate,
    .get_file_size = zl_get_file_size,
    .get_zoned_model = zl_get_zoned_model,
    .report_zones = zl_report_zones,
    .reset_wp = zl_reset_wp,
    .get_max_open_zones = zl_get_max_open_zones,
    .option_struct_size = sizeof(struct zl_engine_options),
    .options = zl_options,
};

/* fio looks this up when it loads the engine. The running fio must be the
 * one the engine was built against: its structures are read as that fio's
 * headers lay them out. */
void get_ioengine(struct ioengine_ops** ops) {
  if (strcmp(fio_version_string, ZONELAB_FIO_BUILT_FOR) != 0) {
    log_err(
        "zonelab: libzonelab_fio.so was built against %s (engine interface %d) and this is %s; "
        "rebuild zonelab with this fio's source (docs/fio.md)\n",
        ZONELAB_FIO_BUILT_FOR, FIO_IOOPS_VERSION, fio_version_string);
    *ops = NULL;
    return;
  }
  *ops = &zl_ops;
}
