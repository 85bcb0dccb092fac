/* jsonw.h - a small streaming JSON writer (in the spirit of bpftool's).
 *
 * Nothing is built in memory: every call writes to the FILE at once.
 * Strings are escaped per RFC 8259 (control characters as \u00XX, invalid
 * UTF-8 bytes replaced by U+FFFD).  Non-finite doubles, which JSON cannot
 * hold, are written as null.
 */
#ifndef NP_JSONW_H
#define NP_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct np_jsonw;

/* In NP_JSONW_LINES mode a newline follows each top-level value, which
 * makes a JSON Lines stream (events.jsonl). */
enum np_jsonw_mode { NP_JSONW_COMPACT = 0, NP_JSONW_LINES = 1 };

/* Returns NULL (errno set) when out of memory. Does not own f. */
struct np_jsonw *np_jsonw_new(FILE *f, enum np_jsonw_mode mode);
/* Frees w; does not close its FILE.  Safe on NULL. */
void np_jsonw_free(struct np_jsonw *w);

void np_jsonw_start_object(struct np_jsonw *w);
void np_jsonw_end_object(struct np_jsonw *w);
void np_jsonw_start_array(struct np_jsonw *w);
void np_jsonw_end_array(struct np_jsonw *w);
/* The key of the next value inside an object. */
void np_jsonw_name(struct np_jsonw *w, const char *name);

void np_jsonw_string(struct np_jsonw *w, const char *s);   /* NULL -> null */
void np_jsonw_uint(struct np_jsonw *w, uint64_t v);
void np_jsonw_int(struct np_jsonw *w, int64_t v);
void np_jsonw_double(struct np_jsonw *w, double v);       /* shortest %.17g-safe form */
void np_jsonw_bool(struct np_jsonw *w, bool v);
void np_jsonw_null(struct np_jsonw *w);

/* name + value in one call. */
void np_jsonw_string_field(struct np_jsonw *w, const char *name, const char *s);
void np_jsonw_uint_field(struct np_jsonw *w, const char *name, uint64_t v);
void np_jsonw_int_field(struct np_jsonw *w, const char *name, int64_t v);
void np_jsonw_double_field(struct np_jsonw *w, const char *name, double v);
void np_jsonw_bool_field(struct np_jsonw *w, const char *name, bool v);

/* 0, or -EIO once any write to the FILE has failed (sticky). */
int np_jsonw_error(const struct np_jsonw *w);

#endif
