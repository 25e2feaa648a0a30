/* Unit tests for integrity: the symbol rules, and real shared objects built with gcc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integrity.h"
#include "proc.h"
#include "util.h"

static void test_symbol_rules(void **state)
{
    (void)state;
    const char *why = NULL;
    assert_true(integrity_symbol_allowed("cudaLaunchKernel", &why));
    assert_true(integrity_symbol_allowed("__cudaRegisterFatBinary", &why));
    assert_true(integrity_symbol_allowed("expf", &why));
    assert_true(integrity_symbol_allowed("_ZNSt8ios_base4InitC1Ev", &why));
    assert_false(integrity_symbol_allowed("cublasSgemm_v2", &why));
    assert_false(integrity_symbol_allowed("dlopen", &why));
    assert_false(integrity_symbol_allowed("system", &why));
    assert_false(integrity_symbol_allowed("fopen", &why));
    assert_false(integrity_symbol_allowed("pthread_create", &why));
    assert_false(integrity_symbol_allowed("cudaDeviceReset", &why));
    assert_non_null(strstr(why, "resets"));
    assert_false(integrity_symbol_allowed("cudaIpcOpenMemHandle", &why));
    /* CuTe's host-side TMA set-up (make_tma_copy) reaches the driver this way */
    assert_true(integrity_symbol_allowed("cudaGetDriverEntryPointByVersion", &why));
    assert_false(integrity_symbol_allowed("_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE", &why));
    assert_false(integrity_symbol_allowed("_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode", &why));
}

/* Builds a shared object from C source with gcc; returns its path or NULL. */
static char *build_so(const char *name, const char *source)
{
    char *dir = xasprintf("/tmp/cg-integrity-%d", (int)getpid());
    mkdir_p(dir, 0755);
    char *c = xasprintf("%s/%s.c", dir, name);
    char *so = xasprintf("%s/%s.so", dir, name);
    write_file_atomic(c, source, strlen(source));
    const char *argv[] = { "cc", "-shared", "-fPIC", "-O1", "-o", so, c, NULL };
    proc_opts o = { .argv = argv, .timeout_s = 60 };
    proc_result r;
    proc_result_init(&r);
    int ok = proc_run(&o, &r) == 0 && r.exit_code == 0;
    if (!ok)
        fprintf(stderr, "cc failed: %s\n", r.err.buf);
    proc_result_release(&r);
    free(c);
    free(dir);
    if (!ok) {
        free(so);
        return NULL;
    }
    return so;
}

static enum integrity_result check_source(const char *name, const char *src, strbuf *why)
{
    char *so = build_so(name, src);
    assert_non_null(so);
    enum integrity_result r = integrity_check_object(so, why);
    unlink(so);
    free(so);
    return r;
}

static void test_objects(void **state)
{
    (void)state;
    strbuf why = STRBUF_INIT;
    assert_int_equal(check_source("good", "#include <string.h>\n"
                                  "int cg_forward(void *p){ memset(p,0,4); return 0; }\n", &why),
                     INTEGRITY_OK);
    strbuf_reset(&why);
    assert_int_equal(check_source("noentry", "int other(void){ return 1; }\n", &why),
                     INTEGRITY_NO_ENTRY);
    assert_non_null(strstr(why.buf, "cg_forward"));
    strbuf_reset(&why);
    assert_int_equal(check_source("sys", "#include <stdlib.h>\n"
                                  "int cg_forward(void){ return system(\"true\"); }\n", &why),
                     INTEGRITY_REJECTED);
    assert_non_null(strstr(why.buf, "'system'"));
    strbuf_reset(&why);
    assert_int_equal(check_source("dl", "#include <dlfcn.h>\n"
                                  "int cg_forward(void){ return dlopen(\"x\",1)!=0; }\n", &why),
                     INTEGRITY_REJECTED);
    assert_non_null(strstr(why.buf, "dlopen"));
    strbuf_reset(&why);
    assert_int_equal(check_source("rawsys", "int cg_forward(void){ long r; "
                                  "__asm__ volatile(\"syscall\" : \"=a\"(r) : \"a\"(39) : "
                                  "\"rcx\",\"r11\",\"memory\"); return (int)r; }\n", &why),
                     INTEGRITY_REJECTED);
    assert_non_null(strstr(why.buf, "system call"));
    strbuf_release(&why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symbol_rules),
        cmocka_unit_test(test_objects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
