/* lane: GPU lanes and CPU slots shared between cutegen processes through flock(). */
#include "lane.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define LANE_MAX_GPUS 16

static pthread_mutex_t lane_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int fd, depth;
    double since;
} gpu_lanes[LANE_MAX_GPUS];

static const char *lane_dir(void)
{
    const char *d = getenv("CUTEGEN_LANE_DIR");
    return d && *d ? d : NULL;
}

static double epoch_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int open_lock(const char *dir, const char *name)
{
    char *path = xasprintf("%s/%s", dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        warning("cannot open the lane lock '%s' (%s): running without it", path, strerror(errno));
    free(path);
    return fd;
}

static int lock_wait(int fd)
{
    while (flock(fd, LOCK_EX) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

int lane_gpu_acquire(int device)
{
    const char *dir = lane_dir();
    if (!dir || device < 0 || device >= LANE_MAX_GPUS)
        return -1;
    pthread_mutex_lock(&lane_mu);
    if (gpu_lanes[device].depth++ > 0) {
        pthread_mutex_unlock(&lane_mu);
        return 0;
    }
    char name[32];
    snprintf(name, sizeof name, "gpu%d.lock", device);
    int fd = open_lock(dir, name);
    if (fd >= 0 && lock_wait(fd) < 0) {
        close(fd);
        fd = -1;
    }
    gpu_lanes[device].fd = fd;
    gpu_lanes[device].since = epoch_seconds();
    pthread_mutex_unlock(&lane_mu);
    return fd >= 0 ? 0 : -1;
}

static void log_hold(const char *dir, int device, double since)
{
    char *path = xasprintf("%s/gpu%d.log", dir, device);
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%d %.3f %.3f\n", (int)getpid(), since, epoch_seconds());
        fclose(f);
    }
    free(path);
}

void lane_gpu_release(int device)
{
    const char *dir = lane_dir();
    if (!dir || device < 0 || device >= LANE_MAX_GPUS)
        return;
    pthread_mutex_lock(&lane_mu);
    if (gpu_lanes[device].depth > 0 && --gpu_lanes[device].depth == 0 &&
        gpu_lanes[device].fd >= 0) {
        log_hold(dir, device, gpu_lanes[device].since);
        flock(gpu_lanes[device].fd, LOCK_UN);
        close(gpu_lanes[device].fd);
        gpu_lanes[device].fd = -1;
    }
    pthread_mutex_unlock(&lane_mu);
}

static int cpu_slots(const char *dir)
{
    char *path = xasprintf("%s/cpu.slots", dir);
    FILE *f = fopen(path, "r");
    free(path);
    int n = 0;
    if (f) {
        if (fscanf(f, "%d", &n) != 1)
            n = 0;
        fclose(f);
    }
    return n;
}

int lane_cpu_acquire(void)
{
    const char *dir = lane_dir();
    int n = dir ? cpu_slots(dir) : 0;
    if (n <= 0)
        return -1;
    for (unsigned spin = 0;; spin++) {
        for (int i = 0; i < n; i++) {
            char name[32];
            snprintf(name, sizeof name, "cpu%d.lock", (i + (int)getpid()) % n);
            int fd = open_lock(dir, name);
            if (fd < 0)
                return -1;
            if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                return fd;
            close(fd);
        }
        struct timespec ts = { 0, 20 * 1000 * 1000 }; /* every slot busy: retry in 20 ms */
        nanosleep(&ts, NULL);
    }
}

void lane_cpu_release(int handle)
{
    if (handle < 0)
        return;
    flock(handle, LOCK_UN);
    close(handle);
}

int lane_dir_init(const char *dir, int n_cpu)
{
    if (mkdir_p(dir, 0755) < 0)
        return error("cannot create the lane directory '%s': %s", dir, strerror(errno));
    char *path = xasprintf("%s/cpu.slots", dir);
    char text[32];
    int len = snprintf(text, sizeof text, "%d\n", n_cpu);
    int rc = write_file_atomic(path, text, (size_t)len);
    free(path);
    return rc < 0 ? error("cannot write '%s/cpu.slots'", dir) : 0;
}
