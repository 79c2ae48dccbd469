// SPDX-License-Identifier: LGPL-2.1-or-later
/* Everything the imastream command prints: names escaped, one locked write per stderr line, the progress line. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

/*
 * One lock for standard error: worker threads report failures while the main thread may
 * be drawing the progress line, and a message must never land in the middle of it.
 */
static pthread_mutex_t stderr_lock = PTHREAD_MUTEX_INITIALIZER;
static bool progress_shown;
static int verbosity;
/* The running command (cli_set_command()): every message of the command carries its name. */
static const char *command;
/* cli_capture_begin(): this thread's messages are held here instead of printed. */
static __thread struct cli_capture *capturing;

static bool needs_escape(unsigned char c)
{
	return c == '\\' || c < 0x20 || c == 0x7f;
}

/* Appends @n bytes to @l; remembers a failed allocation instead of losing the line silently. */
static void line_append(struct cli_line *l, const char *s, size_t n)
{
	if (l->oom)
		return;
	if (l->len + n + 1 > l->size) {
		size_t size = (l->len + n + 1) * 2;
		char *buf = realloc(l->buf, size < 128 ? 128 : size);

		if (!buf) {
			l->oom = true;
			return;
		}
		l->buf = buf;
		l->size = size < 128 ? 128 : size;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	l->buf[l->len] = '\0';
}

void cli_line_text(struct cli_line *l, const char *text)
{
	line_append(l, text, strlen(text));
}

void cli_line_name(struct cli_line *l, const char *name)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = name;

	for (const char *p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;
		char esc[4] = { '\\', 0, 0, 0 };
		size_t n = 2;

		if (!needs_escape(c))
			continue;
		line_append(l, run, (size_t)(p - run));
		run = p + 1;
		l->escaped = true;
		switch (c) {
		case '\\': esc[1] = '\\'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			esc[1] = 'x';
			esc[2] = hex[c >> 4];
			esc[3] = hex[c & 15];
			n = 4;
		}
		line_append(l, esc, n);
	}
	line_append(l, run, strlen(run));
}

void cli_line_hex(struct cli_line *l, const uint8_t *v, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char pair[2];

	for (size_t i = 0; i < len; i++) {
		pair[0] = digits[v[i] >> 4];
		pair[1] = digits[v[i] & 15];
		line_append(l, pair, 2);
	}
}

int cli_line_put(struct cli_line *l, FILE *out)
{
	int ret = 0;

	if (l->oom) {
		cli_error("out of memory");
		ret = -1;
	} else if ((l->escaped && fputc('\\', out) == EOF) ||
		   (l->len && fwrite(l->buf, 1, l->len, out) != l->len) || fputc('\n', out) == EOF) {
		ret = -1;
	}
	l->len = 0;
	l->escaped = false;
	l->oom = false;
	return ret;
}

int cli_put_value(struct cli_line *l, const uint8_t *v, size_t len, const char *name)
{
	cli_line_hex(l, v, len);
	if (name) {
		cli_line_text(l, "  ");
		cli_line_name(l, name);
	}
	return cli_line_put(l, stdout);
}

void cli_line_free(struct cli_line *l)
{
	free(l->buf);
	*l = (struct cli_line){ 0 };
}

/* Lock held: takes the progress line off the terminal, so that a message starts a line. */
static void clear_progress_locked(void)
{
	if (progress_shown) {
		fputs("\r\033[K", stderr);
		progress_shown = false;
	}
}

/* Keeps a message for cli_capture_flush(); a message that cannot be kept is printed. */
static bool capture_message(struct cli_capture *c, const char *prefix, const char *msg)
{
	struct cli_captured *v = c->msgs;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 4;

		v = realloc(c->msgs, cap * sizeof(*v));
		if (!v)
			return false;
		c->msgs = v;
		c->cap = cap;
	}
	v[c->n].prefix = strdup(prefix);
	v[c->n].msg = strdup(msg);
	if (!v[c->n].prefix || !v[c->n].msg) {
		free(v[c->n].prefix);
		free(v[c->n].msg);
		return false;
	}
	c->n++;
	return true;
}

static void print_message(const char *prefix, const char *msg);

/* Writes "PREFIX: MESSAGE\n" to stderr in one call, escaped as a whole. */
static void put_message(const char *prefix, const char *msg)
{
	if (capturing && capture_message(capturing, prefix, msg))
		return;
	print_message(prefix, msg);
}

static void print_message(const char *prefix, const char *msg)
{
	struct cli_line l = { 0 };

	cli_line_text(&l, prefix);
	cli_line_text(&l, ": ");
	cli_line_name(&l, msg);
	pthread_mutex_lock(&stderr_lock);
	clear_progress_locked();
	if (l.oom)
		fprintf(stderr, "%s: out of memory\n", prefix);
	else
		fprintf(stderr, "%s\n", l.buf);
	pthread_mutex_unlock(&stderr_lock);
	cli_line_free(&l);
}

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	char *msg;

	if (vasprintf(&msg, fmt, ap) < 0) {
		put_message(prefix, "out of memory");
		return;
	}
	put_message(prefix, msg);
	free(msg);
}

/* "imastream CMD" (or "imastream" without a command), the prefix of a command's messages. */
static void cmd_prefix(char *buf, size_t size, const char *cmd)
{
	snprintf(buf, size, "imastream%s%s", cmd ? " " : "", cmd ? cmd : "");
}

void cli_set_command(const char *name)
{
	command = name;
}

void cli_error(const char *fmt, ...)
{
	char prefix[64];
	va_list ap;

	cmd_prefix(prefix, sizeof(prefix), command);
	va_start(ap, fmt);
	vmessage(prefix, fmt, ap);
	va_end(ap);
}

void cli_say(const char *cmd, const char *fmt, ...)
{
	char prefix[64];
	va_list ap;

	cmd_prefix(prefix, sizeof(prefix), cmd);
	va_start(ap, fmt);
	vmessage(prefix, fmt, ap);
	va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	char prefix[64];
	char *msg;
	va_list ap;
	int n;

	cmd_prefix(prefix, sizeof(prefix), cmd);
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0) {
		put_message(prefix, "out of memory");
		return CLI_USAGE;
	}
	cli_say(cmd, "%s (see %s --help)", msg, prefix);
	free(msg);
	return CLI_USAGE;
}

static void print_to_stderr(void *arg, int level, const char *msg)
{
	char prefix[64];

	(void)arg;
	if (level > IMASTREAM_LOG_NOTICE + verbosity)
		return;
	cmd_prefix(prefix, sizeof(prefix), command);
	put_message(prefix, msg);
}

const struct imastream_log cli_log = { print_to_stderr, NULL };

void cli_set_verbose(int level)
{
	verbosity = level;
}

void cli_progress_draw(const char *text)
{
	struct cli_line l = { 0 };

	cli_line_text(&l, "\r\033[K");
	cli_line_name(&l, text);
	if (l.oom)
		return;
	pthread_mutex_lock(&stderr_lock);
	fputs(l.buf, stderr);
	fflush(stderr);
	progress_shown = true;
	pthread_mutex_unlock(&stderr_lock);
	cli_line_free(&l);
}

void cli_progress_clear(void)
{
	pthread_mutex_lock(&stderr_lock);
	clear_progress_locked();
	pthread_mutex_unlock(&stderr_lock);
}

bool cli_progress_wanted(int show)
{
	return show == 1 || (show == -1 && isatty(STDERR_FILENO));
}

void cli_capture_begin(struct cli_capture *c)
{
	capturing = c;
}

void cli_capture_end(void)
{
	capturing = NULL;
}

void cli_capture_flush(struct cli_capture *c, bool one_line)
{
	if (one_line && c->n > 1) {
		/* The last message names the item and the cause; the others are its details. */
		struct cli_line l = { 0 };

		cli_line_text(&l, c->msgs[c->n - 1].msg);
		for (size_t i = 0; i + 1 < c->n; i++) {
			cli_line_text(&l, i ? "; " : " (");
			cli_line_text(&l, c->msgs[i].msg);
		}
		cli_line_text(&l, ")");
		print_message(c->msgs[c->n - 1].prefix, l.oom ? c->msgs[c->n - 1].msg : l.buf);
		cli_line_free(&l);
	} else {
		for (size_t i = 0; i < c->n; i++)
			print_message(c->msgs[i].prefix, c->msgs[i].msg);
	}
	cli_capture_free(c);
}

void cli_capture_free(struct cli_capture *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->msgs[i].prefix);
		free(c->msgs[i].msg);
	}
	free(c->msgs);
	*c = (struct cli_capture){ 0 };
}
