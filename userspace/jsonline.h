/* jsonline.h - reading and rewriting the top-level members of one JSON
 * object on one line, as nanprof writes them (events.jsonl, and each
 * event line of trace.json).  Not a general JSON parser: values are only
 * read at depth 1, but strings (with escapes) and nested values are
 * skipped correctly wherever they are. */
#ifndef NP_JSONLINE_H
#define NP_JSONLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The top-level member `key` as a number.  0, or -ENOENT (absent, or not
 * a number). */
int np_jl_num(const char *line, const char *key, double *out);
int np_jl_int(const char *line, const char *key, int64_t *out);

/* The top-level member `key` as a string (unescaped only for plain
 * ASCII; escapes are copied as they are).  0 or -ENOENT. */
int np_jl_str(const char *line, const char *key, char *buf, size_t len);

/* Writes line to f with each top-level numeric member whose key map()
 * recognises replaced by what it returns: map returns true and fills
 * repl (a JSON number) to replace.  0, or -EIO when f failed. */
typedef bool (*np_jl_map_fn)(const char *key, const char *num, char *repl, size_t len,
			     void *arg);
int np_jl_rewrite(const char *line, FILE *f, np_jl_map_fn map, void *arg);

#endif
