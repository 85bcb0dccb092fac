/* jsonw.c - a small streaming JSON writer, see jsonw.h. */
#include "jsonw.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Deep enough for any document nanprof writes; deeper containers are
 * written as null and their contents dropped, so the output stays valid
 * JSON without an unbounded stack. */
#define NP_JSONW_MAX_DEPTH 64

struct np_jsonw {
	FILE *f;
	enum np_jsonw_mode mode;
	int err;
	int depth;		/* open containers we track, <= MAX_DEPTH */
	int skip;		/* open containers nested too deep to write */
	bool after_name;	/* a key was written; its value needs no comma */
	/* Per open container: has it had an element yet (then the next
	 * one needs a comma)? */
	bool nonempty[NP_JSONW_MAX_DEPTH];
};

/* Every write goes through these three, so the error is always seen.
 * After the first failure nothing more is written: the output is lost
 * anyway, and a full disk should not cost a failing syscall per byte. */
static void put_bytes(struct np_jsonw *w, const char *s, size_t n)
{
	if (w->err || n == 0)
		return;
	if (fwrite(s, 1, n, w->f) != n)
		w->err = -EIO;
}

static void put_str(struct np_jsonw *w, const char *s)
{
	put_bytes(w, s, strlen(s));
}

static void put_char(struct np_jsonw *w, char c)
{
	if (w->err)
		return;
	if (fputc((unsigned char)c, w->f) == EOF)
		w->err = -EIO;
}

struct np_jsonw *np_jsonw_new(FILE *f, enum np_jsonw_mode mode)
{
	struct np_jsonw *w;

	if (!f) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->f = f;
	w->mode = mode;
	return w;
}

void np_jsonw_free(struct np_jsonw *w)
{
	free(w);
}

int np_jsonw_error(const struct np_jsonw *w)
{
	return w ? w->err : -EINVAL;
}

/* Called before every value and every key: writes the comma that
 * separates it from the previous element of its container. */
static void before_element(struct np_jsonw *w)
{
	if (w->after_name) {
		w->after_name = false;
		return;
	}
	if (w->depth > 0) {
		if (w->nonempty[w->depth - 1])
			put_char(w, ',');
		w->nonempty[w->depth - 1] = true;
	}
}

/* Called after every complete value: a finished top-level value ends a
 * line in LINES mode. */
static void after_value(struct np_jsonw *w)
{
	if (w->depth == 0 && w->mode == NP_JSONW_LINES)
		put_char(w, '\n');
}

static void start_container(struct np_jsonw *w, char open)
{
	if (!w)
		return;
	if (w->skip > 0 || w->depth == NP_JSONW_MAX_DEPTH) {
		/* The first too-deep container stands in as null so the
		 * document stays well formed; everything inside it is
		 * dropped until its matching end. */
		if (w->skip++ == 0) {
			before_element(w);
			put_str(w, "null");
		}
		return;
	}
	before_element(w);
	put_char(w, open);
	w->nonempty[w->depth++] = false;
}

static void end_container(struct np_jsonw *w, char close)
{
	if (!w)
		return;
	if (w->skip > 0) {
		if (--w->skip == 0)
			after_value(w);
		return;
	}
	if (w->depth == 0)
		return;		/* unbalanced end: ignore rather than corrupt */
	w->depth--;
	w->after_name = false;
	put_char(w, close);
	after_value(w);
}

void np_jsonw_start_object(struct np_jsonw *w) { start_container(w, '{'); }
void np_jsonw_end_object(struct np_jsonw *w) { end_container(w, '}'); }
void np_jsonw_start_array(struct np_jsonw *w) { start_container(w, '['); }
void np_jsonw_end_array(struct np_jsonw *w) { end_container(w, ']'); }

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if the byte at s
 * does not start one.  Overlong forms, surrogates and code points above
 * U+10FFFF are invalid (RFC 3629). */
static size_t utf8_seq_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n, i;
	unsigned char lo = 0x80, hi = 0xbf;	/* bounds of the 2nd byte */

	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;		/* overlong */
		else if (c == 0xed)
			hi = 0x9f;		/* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;		/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;		/* above U+10FFFF */
	} else {
		return 0;
	}
	if (s[1] < lo || s[1] > hi)
		return 0;
	/* A NUL terminator fails this test, so we never read past it. */
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* Writes s quoted and escaped.  Runs of bytes that need no escaping go
 * out in one fwrite. */
static void put_quoted(struct np_jsonw *w, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	const unsigned char *run = s;
	char esc[8];
	size_t n;

	put_char(w, '"');
	while (*s) {
		if (*s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\') {
			s++;
			continue;
		}
		if (*s >= 0x80) {
			n = utf8_seq_len(s);
			if (n) {
				s += n;
				continue;
			}
		}
		put_bytes(w, (const char *)run, (size_t)(s - run));
		if (*s == '"' || *s == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*s;
			put_bytes(w, esc, 2);
		} else if (*s < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", *s);
			put_str(w, esc);
		} else {
			put_str(w, "\xef\xbf\xbd");	/* U+FFFD, one per bad byte */
		}
		run = ++s;
	}
	put_bytes(w, (const char *)run, (size_t)(s - run));
	put_char(w, '"');
}

void np_jsonw_name(struct np_jsonw *w, const char *name)
{
	if (!w || w->skip)
		return;
	before_element(w);
	put_quoted(w, name ? name : "");
	put_char(w, ':');
	w->after_name = true;
}

/* Writes one scalar's ready-made text as an element. */
static void put_scalar(struct np_jsonw *w, const char *text)
{
	if (!w || w->skip)
		return;
	before_element(w);
	put_str(w, text);
	after_value(w);
}

void np_jsonw_string(struct np_jsonw *w, const char *s)
{
	if (!s) {
		put_scalar(w, "null");
		return;
	}
	if (!w || w->skip)
		return;
	before_element(w);
	put_quoted(w, s);
	after_value(w);
}

void np_jsonw_uint(struct np_jsonw *w, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	put_scalar(w, buf);
}

void np_jsonw_int(struct np_jsonw *w, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	put_scalar(w, buf);
}

/* %.15g when it reads back as the same double (short and readable),
 * else %.17g, which always does.  A host process may have set a locale
 * whose decimal point is ',', which JSON does not allow. */
static void format_double(char *buf, size_t size, double v)
{
	char *p;

	snprintf(buf, size, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, size, "%.17g", v);
	for (p = buf; *p; p++)
		if (*p == ',')
			*p = '.';
}

void np_jsonw_double(struct np_jsonw *w, double v)
{
	char buf[32];

	if (!isfinite(v)) {
		put_scalar(w, "null");
		return;
	}
	format_double(buf, sizeof(buf), v);
	put_scalar(w, buf);
}

void np_jsonw_bool(struct np_jsonw *w, bool v)
{
	put_scalar(w, v ? "true" : "false");
}

void np_jsonw_null(struct np_jsonw *w)
{
	put_scalar(w, "null");
}

void np_jsonw_string_field(struct np_jsonw *w, const char *name, const char *s)
{
	np_jsonw_name(w, name);
	np_jsonw_string(w, s);
}

void np_jsonw_uint_field(struct np_jsonw *w, const char *name, uint64_t v)
{
	np_jsonw_name(w, name);
	np_jsonw_uint(w, v);
}

void np_jsonw_int_field(struct np_jsonw *w, const char *name, int64_t v)
{
	np_jsonw_name(w, name);
	np_jsonw_int(w, v);
}

void np_jsonw_double_field(struct np_jsonw *w, const char *name, double v)
{
	np_jsonw_name(w, name);
	np_jsonw_double(w, v);
}

void np_jsonw_bool_field(struct np_jsonw *w, const char *name, bool v)
{
	np_jsonw_name(w, name);
	np_jsonw_bool(w, v);
}
