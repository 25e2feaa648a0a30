/*
 * lane: cross-process sharing of one host's GPUs and CPU cores between cutegen
 * processes (cutegen bench runs one `cutegen run` per problem at once).
 *
 * A GPU lane is an exclusive lock on one GPU: everything that runs on the GPU (task
 * specs, trials, timing, baselines, profiles) holds it, so a GPU never times two things
 * at once and at most one problem's tensors are live on it at a time. CPU slots bound
 * the compilers running on the host to its cores. Both are flock()s on files in the
 * directory named by $CUTEGEN_LANE_DIR (bench creates it): the kernel drops a lock when
 * its holder dies, so a killed process never leaves a lane taken. Without the variable
 * every call here does nothing, and a lone cutegen process runs as before.
 *
 * Each GPU lane's holds are appended to DIR/gpu<N>.log ("<pid> <acquired> <released>",
 * seconds since the epoch), from which bench reports how busy each GPU was.
 */
#ifndef CUTEGEN_LANE_H
#define CUTEGEN_LANE_H

/* Takes the GPU lane of device (waits for it); nestable within a process. Returns 0, or
 * -1 when no lanes are configured or the lock file cannot be opened (then it runs
 * unlocked, with a warning). */
int lane_gpu_acquire(int device);
void lane_gpu_release(int device);

/* Takes one CPU slot (waits for one); returns a handle for lane_cpu_release, -1 when no
 * slots are configured. */
int lane_cpu_acquire(void);
void lane_cpu_release(int handle);

/* Sets up DIR for n_cpu slots (bench calls it once; files are created as needed). */
int lane_dir_init(const char *dir, int n_cpu);

#endif
