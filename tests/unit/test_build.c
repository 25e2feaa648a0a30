/* Unit tests for the build pool with fake compilers (shell scripts given as the config's
 * nvcc): cache hits and misses, what the hash covers, time-outs, a missing nvcc, an
 * unwritable cache, compile errors and their digest, parallel builds. The real nvcc is
 * exercised by tests/cli/t0200-build.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build.h"
#include "util.h"

static char *tmp_dir;

/* A fake nvcc: answers --version, then runs body (with $out the -o argument). */
static char *write_fake(const char *name, const char *body)
{
    char *path = xasprintf("%s/%s", tmp_dir, name);
    char *text = xasprintf("#!/bin/sh\n"
                           "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 99.0, V99.0.1'; exit 0; fi\n"
                           "out=; prev=; for a in \"$@\"; do [ \"$prev\" = -o ] && out=$a; prev=$a; done\n"
                           "%s\n", body);
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
    chmod(path, 0755);
    free(text);
    return path;
}

static char *write_source(const char *name, const char *text)
{
    char *path = xasprintf("%s/%s", tmp_dir, name);
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
    return path;
}

static build_config base_config(const char *nvcc)
{
    static char *abi, *cache;
    free(abi);
    free(cache);
    abi = xasprintf("%s/include", cg_source_dir());
    cache = xasprintf("%s/cache", tmp_dir);
    build_config cfg = { .nvcc = nvcc, .cutlass_include = tmp_dir, .arch = "sm_90a",
                         .cache_dir = cache, .abi_include = abi, .timeout_s = 20, .jobs = 2,
                         .mode = "plain" };
    return cfg;
}

static int setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/cutegen-test-build.XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    tmp_dir = xstrdup(tmpl);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char *cmd[] = { "rm", "-rf", tmp_dir, NULL };
    pid_t pid = fork();
    if (pid == 0) {
        execvp(cmd[0], cmd);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    free(tmp_dir);
    return 0;
}

static void build_ok(const build_config *cfg, const char *src, build_result *r)
{
    build_result_init(r);
    assert_int_equal(build_kernel(cfg, src, r), 0);
    if (r->status != BUILD_OK)
        fail_msg("build failed: %s", r->digest.buf);
}

static void test_cache_hit_and_key(void **state)
{
    (void)state;
    char *nvcc = write_fake("nvcc-ok", "echo built > \"$out\"");
    char *src = write_source("k.cu", "__global__ void k() {}\n");
    build_config cfg = base_config(nvcc);
    build_result a, b, c, d, e;
    build_ok(&cfg, src, &a);
    assert_false(a.cached);
    assert_true(file_exists(a.so_path));
    assert_true(file_exists(a.log_path));
    build_ok(&cfg, src, &b);
    assert_true(b.cached);
    assert_string_equal(a.hash, b.hash);
    assert_string_equal(a.so_path, b.so_path);

    char *src2 = write_source("k.cu", "__global__ void k() { }\n"); /* one byte more */
    build_ok(&cfg, src2, &c);
    assert_false(c.cached);
    assert_string_not_equal(a.hash, c.hash);

    build_config cfg2 = cfg;
    cfg2.arch = "sm_80";
    build_ok(&cfg2, src2, &d);
    assert_string_not_equal(c.hash, d.hash);

    const char *extra[] = { "-DTILE=64", NULL };
    build_config cfg3 = cfg;
    cfg3.extra_flags = extra;
    build_ok(&cfg3, src2, &e);
    assert_string_not_equal(c.hash, e.hash);

    /* the same CUTLASS (its version in the key) and abi.h elsewhere: the same hash, so a
     * cache built on one machine serves another (bench/prebuild.sh) */
    char *elsewhere = xasprintf("%s/elsewhere", tmp_dir); /* no version.h: "unknown", as tmp_dir */
    char *cmd = xasprintf("mkdir -p %s", elsewhere);
    assert_int_equal(system(cmd), 0);
    char *abi_copy = xasprintf("%s/include", elsewhere);
    char *cmd2 = xasprintf("mkdir -p %s && cp -r %s/include/cutegen %s/", abi_copy, cg_source_dir(), abi_copy);
    assert_int_equal(system(cmd2), 0);
    build_config cfg4 = cfg;
    cfg4.cutlass_include = elsewhere;
    cfg4.abi_include = abi_copy;
    build_result g;
    build_ok(&cfg4, src2, &g);
    assert_true(g.cached);
    assert_string_equal(g.hash, c.hash);
    build_result_release(&g);
    free(elsewhere);
    free(abi_copy);
    free(cmd);
    free(cmd2);

    build_result f;
    cfg.force = true;
    build_ok(&cfg, src2, &f);
    assert_false(f.cached);
    assert_string_equal(f.hash, c.hash);

    build_result_release(&a);
    build_result_release(&b);
    build_result_release(&c);
    build_result_release(&d);
    build_result_release(&e);
    build_result_release(&f);
    free(nvcc);
    free(src);
    free(src2);
}

static void test_timeout_kills_the_compiler(void **state)
{
    (void)state;
    char *nvcc = write_fake("nvcc-slow", "sleep 30; echo built > \"$out\"");
    char *src = write_source("slow.cu", "// slow\n");
    build_config cfg = base_config(nvcc);
    cfg.timeout_s = 1;
    build_result r;
    build_result_init(&r);
    double t0 = now_seconds();
    assert_int_equal(build_kernel(&cfg, src, &r), 0);
    assert_true(now_seconds() - t0 < 10);
    assert_int_equal(r.status, BUILD_TIMEOUT);
    assert_non_null(strstr(r.digest.buf, "time limit"));
    assert_true(file_exists(r.log_path));
    /* a time-out is not cached: the next build tries again */
    build_result r2;
    build_result_init(&r2);
    assert_int_equal(build_kernel(&cfg, src, &r2), 0);
    assert_false(r2.cached);
    build_result_release(&r);
    build_result_release(&r2);
    free(nvcc);
    free(src);
}

static void test_missing_nvcc(void **state)
{
    (void)state;
    char *src = write_source("m.cu", "// m\n");
    build_config cfg = base_config("/nonexistent/bin/nvcc");
    build_result r;
    build_result_init(&r);
    assert_int_equal(build_kernel(&cfg, src, &r), 0);
    assert_int_equal(r.status, BUILD_TOOL_ERROR);
    assert_non_null(strstr(r.digest.buf, "/nonexistent/bin/nvcc"));
    assert_non_null(strstr(r.digest.buf, "CUDA"));
    build_result_release(&r);
    free(src);
}

static void test_unwritable_cache(void **state)
{
    (void)state;
    char *nvcc = write_fake("nvcc-ok2", "echo built > \"$out\"");
    char *src = write_source("u.cu", "// u\n");
    build_config cfg = base_config(nvcc);
    cfg.cache_dir = "/proc/self/no-cache-here";
    build_result r;
    build_result_init(&r);
    assert_int_equal(build_kernel(&cfg, src, &r), 0);
    assert_int_equal(r.status, BUILD_TOOL_ERROR);
    assert_non_null(strstr(r.digest.buf, "CUTEGEN_CACHE_DIR"));
    build_result_release(&r);
    free(nvcc);
    free(src);
}

static void test_compile_error_is_digested_and_cached(void **state)
{
    (void)state;
    char *nvcc = write_fake("nvcc-err", "echo 'bad.cu(2): error: identifier \"zero\" is undefined' >&2; exit 2");
    char *src = write_source("bad.cu", "__global__ void k(float *y)\n{ y[0] = zero; }\n");
    build_config cfg = base_config(nvcc);
    build_result r, r2;
    build_result_init(&r);
    build_result_init(&r2);
    assert_int_equal(build_kernel(&cfg, src, &r), 0);
    assert_int_equal(r.status, BUILD_COMPILE_ERROR);
    assert_null(r.so_path);
    assert_non_null(strstr(r.digest.buf, "error: bad.cu:2: identifier \"zero\" is undefined"));
    assert_non_null(strstr(r.digest.buf, "2 | { y[0] = zero; }"));
    assert_int_equal(build_kernel(&cfg, src, &r2), 0);
    assert_true(r2.cached);
    assert_int_equal(r2.status, BUILD_COMPILE_ERROR);
    assert_string_equal(r.digest.buf, r2.digest.buf);
    build_result_release(&r);
    build_result_release(&r2);
    free(nvcc);
    free(src);
}

static void test_build_many_in_parallel(void **state)
{
    (void)state;
    /* Each fake compile marks its start, then waits (10 s at most) until three have started
     * and writes how many it saw: 3 only if the builds ran at once. No wall-clock bound, so
     * a loaded host cannot fail it. */
    char *dir = xasprintf("%s/par-starts", tmp_dir);
    mkdir(dir, 0755);
    char *body = xasprintf("touch %s/start.$$; i=0\n"
                           "while [ $(ls %s | grep -c '^start') -lt 3 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done\n"
                           "ls %s | grep -c '^start' > %s/seen.$$; echo built > \"$out\"",
                           dir, dir, dir, dir);
    char *nvcc = write_fake("nvcc-par", body);
    char *s[3] = { write_source("p0.cu", "// 0\n"), write_source("p1.cu", "// 1\n"),
                   write_source("p2.cu", "// 2\n") };
    build_config cfg = base_config(nvcc);
    cfg.jobs = 3;
    build_result r[3];
    for (int i = 0; i < 3; i++)
        build_result_init(&r[i]);
    assert_int_equal(build_many(&cfg, (const char *const *)s, 3, r), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r[i].status, BUILD_OK);
        build_result_release(&r[i]);
        free(s[i]);
    }
    DIR *d = opendir(dir);
    assert_non_null(d);
    int seen_files = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "seen.", 5) != 0)
            continue;
        char *path = xasprintf("%s/%s", dir, e->d_name);
        strbuf sb = STRBUF_INIT;
        assert_int_equal(read_file(path, &sb, 100), 0);
        if (atoi(sb.buf) < 3)  /* this build ran with fewer than three started: one after another */
            fail_msg("a build saw %d of the 3 started: the builds did not run at once", atoi(sb.buf));
        seen_files++;
        strbuf_release(&sb);
        free(path);
    }
    closedir(d);
    assert_true(seen_files >= 3);
    free(body);
    free(nvcc);
    free(dir);
}

static void test_gencode(void **state)
{
    (void)state;
    strbuf g = STRBUF_INIT;
    assert_int_equal(build_gencode("sm_90a", &g), 0);
    assert_string_equal(g.buf, "-gencode=arch=compute_90a,code=sm_90a");
    strbuf_reset(&g);
    assert_int_equal(build_gencode("sm_80", &g), 0);
    assert_string_equal(g.buf, "-gencode=arch=compute_80,code=sm_80");
    assert_int_equal(build_gencode("90a", &g), -1);
    assert_int_equal(build_gencode("sm_90ab", &g), -1);
    assert_int_equal(build_gencode("sm_", &g), -1);
    strbuf_release(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_hit_and_key),
        cmocka_unit_test(test_timeout_kills_the_compiler),
        cmocka_unit_test(test_missing_nvcc),
        cmocka_unit_test(test_unwritable_cache),
        cmocka_unit_test(test_compile_error_is_digested_and_cached),
        cmocka_unit_test(test_build_many_in_parallel),
        cmocka_unit_test(test_gencode),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
