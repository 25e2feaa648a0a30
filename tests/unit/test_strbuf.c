/* Unit tests for strbuf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

static void test_add_and_format(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    assert_string_equal(strbuf_str(&sb), "");
    strbuf_adds(&sb, "abc");
    strbuf_addf(&sb, "-%d-%s", 42, "x");
    assert_string_equal(sb.buf, "abc-42-x");
    assert_int_equal(sb.len, 8);
    strbuf_truncate(&sb, 3);
    assert_string_equal(sb.buf, "abc");
    strbuf_adds(&sb, "  \n");
    strbuf_trim_end(&sb);
    assert_string_equal(sb.buf, "abc");
    char *s = strbuf_detach(&sb);
    assert_string_equal(s, "abc");
    assert_null(sb.buf);
    free(s);
}

static void test_grow_large(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    for (int i = 0; i < 10000; i++)
        strbuf_addc(&sb, (char)('a' + i % 26));
    assert_int_equal(sb.len, 10000);
    assert_int_equal(sb.buf[9999], 'a' + 9999 % 26);
    assert_int_equal(sb.buf[10000], '\0');
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_and_format),
        cmocka_unit_test(test_grow_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
