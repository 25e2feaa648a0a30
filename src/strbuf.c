/* strbuf: growable NUL-terminated byte buffers (see strbuf.h). */
#include "strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void strbuf_init(strbuf *sb)
{
    sb->buf = NULL;
    sb->len = 0;
    sb->alloc = 0;
    strbuf_grow(sb, 0);
}

void strbuf_release(strbuf *sb)
{
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->alloc = 0;
}

void strbuf_reset(strbuf *sb)
{
    strbuf_truncate(sb, 0);
}

char *strbuf_detach(strbuf *sb)
{
    strbuf_grow(sb, 0);
    char *s = sb->buf;
    sb->buf = NULL;
    sb->len = sb->alloc = 0;
    return s;
}

void strbuf_grow(strbuf *sb, size_t extra)
{
    size_t need = sb->len + extra + 1;
    if (need <= sb->alloc)
        return;
    size_t alloc = sb->alloc ? sb->alloc : 64;
    while (alloc < need)
        alloc *= 2;
    sb->buf = xrealloc(sb->buf, alloc);
    if (sb->alloc == 0)
        sb->buf[0] = '\0';
    sb->alloc = alloc;
}

void strbuf_add(strbuf *sb, const void *data, size_t len)
{
    strbuf_grow(sb, len);
    memcpy(sb->buf + sb->len, data, len);
    sb->len += len;
    sb->buf[sb->len] = '\0';
}

void strbuf_adds(strbuf *sb, const char *s)
{
    strbuf_add(sb, s, strlen(s));
}

void strbuf_addc(strbuf *sb, char c)
{
    strbuf_add(sb, &c, 1);
}

void strbuf_vaddf(strbuf *sb, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0)
        return;
    strbuf_grow(sb, (size_t)n);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void strbuf_addf(strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(sb, fmt, ap);
    va_end(ap);
}

void strbuf_truncate(strbuf *sb, size_t len)
{
    strbuf_grow(sb, 0);
    if (len < sb->len) {
        sb->len = len;
        sb->buf[len] = '\0';
    }
}

void strbuf_trim_end(strbuf *sb)
{
    while (sb->len > 0 && isspace((unsigned char)sb->buf[sb->len - 1]))
        sb->len--;
    if (sb->buf)
        sb->buf[sb->len] = '\0';
}

const char *strbuf_str(const strbuf *sb)
{
    return sb->buf ? sb->buf : "";
}
