/* Unit tests for bench's problem selection (ranges, levels, shards) and lane.c's locks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "lane.h"
#include "util.h"

static void test_ranges(void **state)
{
    (void)state;
    assert_int_equal(bench_in_ranges(NULL, 7), 1);
    assert_int_equal(bench_in_ranges("1-20,23", 1), 1);
    assert_int_equal(bench_in_ranges("1-20,23", 20), 1);
    assert_int_equal(bench_in_ranges("1-20,23", 21), 0);
    assert_int_equal(bench_in_ranges("1-20,23", 23), 1);
    assert_int_equal(bench_in_ranges("5", 5), 1);
    assert_int_equal(bench_in_ranges("5", 6), 0);
    assert_int_equal(bench_in_ranges("3-1", 2), -1);
    assert_int_equal(bench_in_ranges("a", 2), -1);
    assert_int_equal(bench_in_ranges("1,,2", 2), -1);
    assert_int_equal(bench_in_ranges("1-", 2), -1);
}

static void test_shard(void **state)
{
    (void)state;
    int i = -1, n = -1;
    assert_int_equal(bench_parse_shard("0/4", &i, &n), 0);
    assert_int_equal(i, 0);
    assert_int_equal(n, 4);
    assert_int_equal(bench_parse_shard("3/4", &i, &n), 0);
    assert_int_equal(bench_parse_shard("4/4", &i, &n), -1);
    assert_int_equal(bench_parse_shard("0/0", &i, &n), -1);
    assert_int_equal(bench_parse_shard("1", &i, &n), -1);
    assert_int_equal(bench_parse_shard("-1/2", &i, &n), -1);
    assert_int_equal(bench_parse_shard("1/2x", &i, &n), -1);
}

static char tree[] = "/tmp/cutegen-test-bench-XXXXXX";

static void touch(const char *rel)
{
    char *p = xasprintf("%s/%s", tree, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("# a problem\n", f);
    fclose(f);
    free(p);
}

static int make_tree(void **state)
{
    (void)state;
    assert_non_null(mkdtemp(tree));
    char *d1 = xasprintf("%s/level1", tree), *d2 = xasprintf("%s/level2", tree);
    mkdir(d1, 0755);
    mkdir(d2, 0755);
    free(d1);
    free(d2);
    touch("level1/10_Ten.py");
    touch("level1/2_Two.py");
    touch("level1/1_One.py");
    touch("level1/README.md");
    touch("level1/notes.py"); /* no number: not a problem */
    touch("level2/1_Fused.py");
    touch("level2/30_Late.py");
    return 0;
}

static void test_select_sorted_and_filtered(void **state)
{
    (void)state;
    bench_opts o;
    bench_opts_init(&o);
    o.kernelbench = tree;
    o.levels = "2,1";
    bench_problem *v;
    strbuf err = STRBUF_INIT;
    int n = bench_select(&o, &v, &err);
    assert_int_equal(n, 5);
    const char *want[] = { "l1-1_One", "l1-2_Two", "l1-10_Ten", "l2-1_Fused", "l2-30_Late" };
    for (int i = 0; i < n; i++)
        assert_string_equal(v[i].slug, want[i]);
    assert_int_equal(v[2].number, 10);
    assert_int_equal(v[3].level, 2);
    bench_problems_free(v, n);

    o.problems = "1-2";
    n = bench_select(&o, &v, &err);
    assert_int_equal(n, 3); /* l1-1, l1-2, l2-1 */
    bench_problems_free(v, n);

    /* Files given one by one keep the level and number of a KernelBench-shaped path. */
    char *t1 = xasprintf("%s/level2/30_Late.py", tree), *t2 = xasprintf("%s/level1/2_Two.py", tree);
    const char *tasks[] = { t1, t2 };
    bench_opts one;
    bench_opts_init(&one);
    one.tasks = tasks;
    one.n_tasks = 2;
    n = bench_select(&one, &v, &err);
    assert_int_equal(n, 2);
    assert_string_equal(v[0].slug, "l1-2_Two");
    assert_int_equal(v[1].level, 2);
    assert_int_equal(v[1].number, 30);
    bench_problems_free(v, n);
    /* --in-order: the tasks as given (level 2's #30 first), after the levels' problems (sorted) */
    one.in_order = true;
    one.kernelbench = tree;
    one.levels = "1";
    one.problems = "1,10";
    n = bench_select(&one, &v, &err);
    assert_int_equal(n, 4);
    const char *given[] = { "l1-1_One", "l1-10_Ten", "l2-30_Late", "l1-2_Two" };
    for (int i = 0; i < n; i++)
        assert_string_equal(v[i].slug, given[i]);
    bench_problems_free(v, n);
    free(t1);
    free(t2);

    o.problems = NULL;
    o.levels = "1,2";
    o.shards = 2;
    o.shard = 1;
    n = bench_select(&o, &v, &err);
    assert_int_equal(n, 2); /* the 2nd and 4th of the sorted five */
    assert_string_equal(v[0].slug, "l1-2_Two");
    assert_string_equal(v[1].slug, "l2-1_Fused");
    bench_problems_free(v, n);
    strbuf_release(&err);
}

static void test_select_errors(void **state)
{
    (void)state;
    bench_opts o;
    bench_opts_init(&o);
    o.kernelbench = tree;
    bench_problem *v = NULL;
    strbuf err = STRBUF_INIT;
    o.levels = "3";
    assert_int_equal(bench_select(&o, &v, &err), -1);
    assert_non_null(strstr(err.buf, "level3"));
    strbuf_reset(&err);
    o.levels = "1x";
    assert_int_equal(bench_select(&o, &v, &err), -1);
    assert_non_null(strstr(err.buf, "--level"));
    strbuf_reset(&err);
    o.levels = "1";
    o.problems = "9-2";
    assert_int_equal(bench_select(&o, &v, &err), -1);
    assert_non_null(strstr(err.buf, "--problems"));
    strbuf_reset(&err);
    const char *tasks[] = { "/nonexistent/problem.py" };
    o.problems = NULL;
    o.tasks = tasks;
    o.n_tasks = 1;
    assert_int_equal(bench_select(&o, &v, &err), -1);
    assert_non_null(strstr(err.buf, "does not exist"));
    strbuf_release(&err);
}

/* A GPU lane held by one process is not taken by another until released; a killed
 * holder releases it; CPU slots run out and come back. */
static void test_lanes(void **state)
{
    (void)state;
    char *dir = xasprintf("%s/lanes", tree);
    assert_int_equal(lane_dir_init(dir, 2), 0);
    setenv("CUTEGEN_LANE_DIR", dir, 1);
    assert_int_equal(lane_gpu_acquire(0), 0);
    assert_int_equal(lane_gpu_acquire(0), 0); /* nested */
    char *lock = xasprintf("%s/gpu0.lock", dir);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(lock, O_RDWR);
        _exit(flock(fd, LOCK_EX | LOCK_NB) == 0 ? 1 : 0); /* must be busy */
    }
    int status;
    waitpid(pid, &status, 0);
    assert_int_equal(WEXITSTATUS(status), 0);
    lane_gpu_release(0);
    lane_gpu_release(0);
    pid = fork();
    if (pid == 0) {
        int fd = open(lock, O_RDWR);
        _exit(flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : 1); /* free now */
    }
    waitpid(pid, &status, 0);
    assert_int_equal(WEXITSTATUS(status), 0);
    char *log = xasprintf("%s/gpu0.log", dir);
    strbuf text = STRBUF_INIT;
    assert_int_equal(read_file(log, &text, 4096) >= 0, 1);
    int pid_logged = 0;
    double a = 0, b = 0;
    assert_int_equal(sscanf(text.buf, "%d %lf %lf", &pid_logged, &a, &b), 3); /* one hold */
    assert_int_equal(pid_logged, (int)getpid());
    assert_true(b >= a);
    /* CPU slots: two, then a child finds none free while we hold both. */
    int s1 = lane_cpu_acquire(), s2 = lane_cpu_acquire();
    assert_true(s1 >= 0 && s2 >= 0);
    pid = fork();
    if (pid == 0) {
        int busy = 0;
        for (int i = 0; i < 2; i++) {
            char *p = xasprintf("%s/cpu%d.lock", dir, i);
            int fd = open(p, O_RDWR);
            busy += flock(fd, LOCK_EX | LOCK_NB) != 0;
        }
        _exit(busy == 2 ? 0 : 1);
    }
    waitpid(pid, &status, 0);
    assert_int_equal(WEXITSTATUS(status), 0);
    lane_cpu_release(s1);
    lane_cpu_release(s2);
    unsetenv("CUTEGEN_LANE_DIR");
    assert_int_equal(lane_cpu_acquire(), -1); /* no lanes configured: nothing to do */
    assert_int_equal(lane_gpu_acquire(0), -1);
    strbuf_release(&text);
    free(log);
    free(lock);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_shard),
        cmocka_unit_test(test_select_sorted_and_filtered),
        cmocka_unit_test(test_select_errors),
        cmocka_unit_test(test_lanes),
    };
    return cmocka_run_group_tests(tests, make_tree, NULL);
}
