/*
 * strbuf: a growable, always NUL-terminated byte buffer (after git's strbuf).
 * buf is never NULL once initialised; strbuf_detach() is the one way to take the memory.
 */
#ifndef CUTEGEN_STRBUF_H
#define CUTEGEN_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct strbuf {
    char *buf;
    size_t len;
    size_t alloc;
} strbuf;

#define STRBUF_INIT { NULL, 0, 0 }

void strbuf_init(strbuf *sb);
void strbuf_release(strbuf *sb);
void strbuf_reset(strbuf *sb);
char *strbuf_detach(strbuf *sb);
void strbuf_grow(strbuf *sb, size_t extra);
void strbuf_add(strbuf *sb, const void *data, size_t len);
void strbuf_adds(strbuf *sb, const char *s);
void strbuf_addc(strbuf *sb, char c);
__attribute__((format(printf, 2, 3))) void strbuf_addf(strbuf *sb, const char *fmt, ...);
void strbuf_vaddf(strbuf *sb, const char *fmt, va_list ap);
void strbuf_truncate(strbuf *sb, size_t len);
void strbuf_trim_end(strbuf *sb);
/* The buffer's text, or "" for a buffer never written to. */
const char *strbuf_str(const strbuf *sb);

#endif
