/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared declarations of the imastream command: subcommand entry points and helpers. */
#ifndef IMASTREAM_CLI_H
#define IMASTREAM_CLI_H

#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "imastream/common.h"

/* Exit codes: 0 all done, 1 some files failed, 2 usage error. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

int cmd_hash(int argc, char **argv);
int cmd_keys(int argc, char **argv);
int cmd_sign(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_sign_package(int argc, char **argv);
int cmd_sign_digests(int argc, char **argv);
int cmd_install(int argc, char **argv);
int cmd_relabel(int argc, char **argv);
/* relabel --pending (cmd_relabel_pending.c): @dry_run and @operands are refused. */
struct cli_settings;
int cli_relabel_pending(struct cli_settings *settings, const char *root, bool dry_run,
			bool operands);
/* verify --rpmdb's exit status when the only findings are labels still pending. */
#define CLI_PENDING 3
/* The package paths with pending labels in a root (pending_paths.c). */
struct cli_pending_inode {
	dev_t dev;
	ino_t ino;
};
struct cli_pending_paths {
	int rootfd;
	char **paths;			  /* sorted */
	struct cli_pending_inode *inodes; /* in the order the entries came, not sorted */
	size_t n, cap;
};
int cli_pending_paths_load(struct cli_pending_paths *s, const char *root);
bool cli_pending_paths_has(const struct cli_pending_paths *s, const char *path);
void cli_pending_paths_free(struct cli_pending_paths *s);
int cmd_recover(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_attest(int argc, char **argv);

/*
 * Output (cli/output.c).  One escaping rule for every name the command prints, on both
 * streams: a backslash becomes "\\", a newline "\n", a carriage return "\r", a tab "\t",
 * any other control byte (0x01-0x1f, 0x7f) "\xHH".  On standard output a line holding an
 * escaped name starts with a backslash, as sha256sum marks it; messages on standard
 * error are escaped as a whole.  So every record is one line and no name can drive the
 * terminal.
 */

/*
 * Every line the command prints on stderr starts with "imastream CMD:", the name of the
 * command that runs (set once by main(), before any thread starts), the library's
 * messages included; only a line before any command is known says "imastream:".
 */
void cli_set_command(const char *name);
/* A log that prints "imastream CMD: message" to stderr; DEBUG/INFO only when verbose. */
extern const struct imastream_log cli_log;
void cli_set_verbose(int level);
/* "imastream CMD: MESSAGE" on stderr, escaped, in one write (safe from worker threads). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Why a labelled file no package owns is an orphan (verify --rpmdb, recover --rpmdb). */
const char *cli_orphan_kind(int kind);
/* "imastream CMD: MESSAGE" on stderr, as cli_error() does. */
void cli_say(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "imastream CMD: MESSAGE (see imastream CMD --help)"; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Messages held back: a worker thread that works on one item of many captures what it
 * says (cli_error, cli_say, cli_log), and the main thread prints it when it reports that
 * item, so that the output of -j N is that of -j 1, in the same order.
 */
struct cli_captured {
	char *prefix;
	char *msg;
};
struct cli_capture {
	struct cli_captured *msgs;
	size_t n, cap;
};
/* From now on this thread's messages go to @c (until cli_capture_end()). */
void cli_capture_begin(struct cli_capture *c);
void cli_capture_end(void);
/*
 * Prints what @c holds and empties it.  @one_line (a failure): several messages become
 * one line, the last one (which names the item) with the others in parentheses.
 */
void cli_capture_flush(struct cli_capture *c, bool one_line);
void cli_capture_free(struct cli_capture *c);

/* One line of standard output, built from our text, hex values and escaped names. */
struct cli_line {
	char *buf;
	size_t len, size;
	bool escaped; /* a name in it was escaped: the line gets the leading backslash */
	bool oom;
};
void cli_line_text(struct cli_line *l, const char *text);
void cli_line_name(struct cli_line *l, const char *name);
void cli_line_hex(struct cli_line *l, const uint8_t *v, size_t len);
/* Writes the line and a newline to @out and empties @l. Return: 0, or -1 (said or ferror). */
int cli_line_put(struct cli_line *l, FILE *out);
void cli_line_free(struct cli_line *l);
/* A value line of hash and sign: "HEX  NAME" as sha256sum has it, or HEX alone (@name NULL). */
int cli_put_value(struct cli_line *l, const uint8_t *v, size_t len, const char *name);

/*
 * --format json (cli/json.c): JSON Lines on standard output, one object per line.  Each
 * has "record": "file", "package" or another item kind, then its fields; the last one is
 * {"record": "summary", "command": ...} with the counts, raw byte counts and
 * "elapsed_s".  Names are JSON strings: a byte that is not UTF-8 becomes the code point
 * of the same number.  Messages stay on standard error.
 */
struct cli_json {
	char *buf;
	size_t len, size;
	bool oom;
};
void cli_json_begin(struct cli_json *j, const char *record);
void cli_json_str(struct cli_json *j, const char *key, const char *value); /* NULL: null */
void cli_json_hex(struct cli_json *j, const char *key, const uint8_t *v, size_t len);
void cli_json_uint(struct cli_json *j, const char *key, uint64_t v);
void cli_json_seconds(struct cli_json *j, const char *key, double v);
void cli_json_bool(struct cli_json *j, const char *key, bool v);
/* Ends the object and writes it as one line. Return: 0, or -1 (out of memory said, or ferror). */
int cli_json_put(struct cli_json *j, FILE *out);
void cli_json_free(struct cli_json *j);
/* --format FORMAT of command @cmd: text or json.  Return: CLI_OK, or CLI_USAGE (said). */
int cli_format_option(const char *cmd, const char *spelled, const char *arg, bool *json);

/* The progress line: drawn over itself on stderr, taken away before any message. */
void cli_progress_draw(const char *text);
void cli_progress_clear(void);
/* --progress (1), --quiet (0) or neither (-1): draw only when stderr is a terminal. */
bool cli_progress_wanted(int show);

/* The counts of a tree command: a progress line while it runs, a summary at the end. */
struct cli_tally {
	const char *cmd;      /* "hash": "imastream hash: 12 files, ..." */
	bool draw;            /* progress line (cli_progress_wanted()) */
	bool summary;         /* summary line at the end */
	unsigned long files;  /* regular files done, well or not */
	uint64_t bytes;       /* their sizes */
	struct timespec start, last;
};
void cli_tally_start(struct cli_tally *t);
/* One more file of @bytes; redraws the progress line at most ten times a second. */
void cli_tally_file(struct cli_tally *t, uint64_t bytes, unsigned long failures);
/* Takes the progress line away and prints the summary line. */
void cli_tally_end(struct cli_tally *t, unsigned long failures);
/* "42%, 12 s left": @done of @total after @elapsed seconds, for a progress line (tally.c). */
const char *cli_eta(double done, double total, double elapsed, char *buf, size_t size);
/* "512 bytes", "1.5 KiB", "96.0 MiB": a size in a summary line (tally.c). */
const char *cli_human_size(uint64_t bytes, char *buf, size_t size);
/* Seconds from @t0 to now on @clock: the time a summary line gives (tally.c). */
double cli_seconds_since(clockid_t clock, const struct timespec *t0);

/*
 * -p/--pass (cli/pass.c): asks for the passphrase on the terminal, without echo, and
 * hands it to the key loader through a variable of this process's own environment,
 * whose name it returns; cli_pass_forget() wipes it once the key is loaded.
 * Return: CLI_OK, or CLI_USAGE with one line (no terminal, or nothing typed).
 */
int cli_pass_prompt(const char *cmd, const char *key, const char **env_name_ret);
void cli_pass_forget(void);

#endif /* IMASTREAM_CLI_H */
