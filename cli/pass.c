// SPDX-License-Identifier: LGPL-2.1-or-later
/* -p/--pass: the key's passphrase typed on the terminal, as evmctl -p asks for it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli/cli.h"

/*
 * The key loader takes a passphrase from a file or from a named environment variable,
 * never as a string.  The typed one goes into this variable of our own environment:
 * it is never exported (no child is started while it is set) and /proc/PID/environ
 * shows the environment the process started with, not this one.
 */
#define PROMPT_VAR "IMASTREAM_TYPED_PASSPHRASE"
#define PASS_MAX 1024

/* Reads one line from @fd into @buf (NUL-terminated, without the newline). */
static ssize_t read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		char c;
		ssize_t r = read(fd, &c, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0 || c == '\n' || c == '\r')
			break;
		buf[n++] = c;
	}
	buf[n] = '\0';
	return (ssize_t)n;
}

/* "Passphrase for KEY: ", the key's name escaped as every name the command prints. */
static void prompt_line(int tty, const char *key)
{
	struct cli_line l = { 0 };

	cli_line_text(&l, "Passphrase for ");
	cli_line_name(&l, key);
	cli_line_text(&l, ": ");
	if (!l.oom)
		dprintf(tty, "%s", l.buf);
	cli_line_free(&l);
}

int cli_pass_prompt(const char *cmd, const char *key, const char **env_name_ret)
{
	struct termios old, quiet;
	char pass[PASS_MAX];
	ssize_t len;
	int tty;

	tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (tty < 0 || tcgetattr(tty, &old) < 0) {
		if (tty >= 0)
			close(tty);
		return cli_usage_error(cmd, "-p asks for the passphrase on a terminal, and there is none; use --pass-file FILE or --pass-env VAR");
	}
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	quiet.c_lflag |= ECHONL;
	prompt_line(tty, key);
	tcsetattr(tty, TCSANOW, &quiet);
	len = read_line(tty, pass, sizeof(pass));
	tcsetattr(tty, TCSANOW, &old);
	close(tty);
	if (len <= 0) {
		explicit_bzero(pass, sizeof(pass));
		return cli_usage_error(cmd, "-p: no passphrase was typed");
	}
	if (setenv(PROMPT_VAR, pass, 1) < 0) {
		explicit_bzero(pass, sizeof(pass));
		cli_error("out of memory");
		return CLI_FAILED;
	}
	explicit_bzero(pass, sizeof(pass));
	*env_name_ret = PROMPT_VAR;
	return CLI_OK;
}

void cli_pass_forget(void)
{
	char *typed = getenv(PROMPT_VAR);

	/* getenv() points into the "NAME=VALUE" string setenv() made: wipe it in place. */
	if (typed)
		explicit_bzero(typed, strlen(typed));
	unsetenv(PROMPT_VAR);
}
