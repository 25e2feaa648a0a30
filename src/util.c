/* util: allocation, errors, files, paths, hashing and clocks (see util.h). */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool cg_quiet = false;

static void out_of_memory(size_t n)
{
    fprintf(stderr, "cutegen: fatal: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n);
    return q;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    return strbuf_detach(&sb);
}

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
    strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, prefix);
    strbuf_vaddf(&sb, fmt, ap);
    strbuf_addc(&sb, '\n');
    fputs(sb.buf, stderr);
    strbuf_release(&sb);
}

int error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("cutegen: error: ", fmt, ap);
    va_end(ap);
    return -1;
}

void warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("cutegen: warning: ", fmt, ap);
    va_end(ap);
}

void progress(const char *fmt, ...)
{
    if (cg_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vreport("cutegen: ", fmt, ap);
    va_end(ap);
}

void BUG(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("cutegen: BUG: ", fmt, ap);
    va_end(ap);
    abort();
}

int read_file(const char *path, strbuf *sb, size_t max_bytes)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char chunk[65536];
    size_t total = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int saved = errno;
            close(fd);
            errno = saved;
            return -1;
        }
        if (n == 0)
            break;
        if (total + (size_t)n > max_bytes) {
            close(fd);
            errno = EFBIG;
            return -1;
        }
        strbuf_add(sb, chunk, (size_t)n);
        total += (size_t)n;
    }
    close(fd);
    return 0;
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
    char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        free(tmp);
        return -1;
    }
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto fail;
        p += n;
        left -= (size_t)n;
    }
    if (fsync(fd) < 0)
        goto fail;
    if (close(fd) < 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) < 0)
        goto fail;
    free(tmp);
    return 0;
fail: {
    int saved = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    free(tmp);
    errno = saved;
    return -1;
}
}

int mkdir_p(const char *path, unsigned mode)
{
    char *copy = xstrdup(path);
    for (char *p = copy + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(copy, mode) < 0 && errno != EEXIST) {
            free(copy);
            return -1;
        }
        *p = '/';
    }
    int rc = mkdir(copy, mode);
    free(copy);
    if (rc < 0 && errno != EEXIST)
        return -1;
    return 0;
}

bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool dir_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_executable(const char *path)
{
    return file_exists(path) && access(path, X_OK) == 0;
}

char *find_in_path(const char *name)
{
    if (strchr(name, '/'))
        return is_executable(name) ? xstrdup(name) : NULL;
    const char *path = getenv("PATH");
    if (!path)
        return NULL;
    char *copy = xstrdup(path);
    char *result = NULL;
    char *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        char *candidate = xasprintf("%s/%s", *dir ? dir : ".", name);
        if (is_executable(candidate)) {
            result = candidate;
            break;
        }
        free(candidate);
    }
    free(copy);
    return result;
}

char *self_dir(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return xstrdup(".");
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    return xstrdup(buf);
}

const char *cg_source_dir(void)
{
    static char *dir;
    if (dir)
        return dir;
    const char *env = getenv("CUTEGEN_SOURCE_DIR");
    if (env && *env) {
        dir = xstrdup(env);
        return dir;
    }
    char *exe = self_dir();
    char *share = xasprintf("%s/../share/cutegen", exe);
    free(exe);
    char *probe = xasprintf("%s/python/cutegen_ref.py", share);
    bool ok = file_exists(probe);
    free(probe);
    if (ok) {
        dir = share;
        return dir;
    }
    free(share);
    dir = xstrdup(CUTEGEN_SOURCE_DIR);
    return dir;
}

const char *cg_cache_dir(void)
{
    static char *dir;
    if (dir)
        return dir;
    const char *env = getenv("CUTEGEN_CACHE_DIR");
    char cwd[4096];
    if (env && *env && env[0] != '/' && getcwd(cwd, sizeof cwd))
        dir = xasprintf("%s/%s", cwd, env); /* builds run in folders of their own: absolute */
    else if (env && *env)
        dir = xstrdup(env);
    else if ((env = getenv("XDG_CACHE_HOME")) && *env)
        dir = xasprintf("%s/cutegen", env);
    else if ((env = getenv("HOME")) && *env)
        dir = xasprintf("%s/.cache/cutegen", env);
    else
        dir = xstrdup("/tmp/cutegen-cache");
    return dir;
}

void sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (!EVP_Digest(data, len, digest, &n, EVP_sha256(), NULL))
        BUG("EVP_Digest(sha256) failed");
    for (unsigned i = 0; i < n && i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
    out[64] = '\0';
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool str_starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lf = strlen(suffix);
    return ls >= lf && strcmp(s + ls - lf, suffix) == 0;
}
