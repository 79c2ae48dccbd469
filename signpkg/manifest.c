// SPDX-License-Identifier: LGPL-2.1-or-later
/* Reads and writes digest manifests in their one accepted form; anything else is refused with one line. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/private.h"
#include "imastream/xattr.h"
#include "signpkg/manifest.h"

/* Where the parser is: the line, for messages, and the package being filled. */
struct parser {
	const struct imastream_log *log;
	struct manifest *m;
	const char *what; /* "digest manifest" or "signatures file", for messages */
	size_t line_no;
	size_t cap_pkgs, cap_files;
	bool in_pkg;
};

static int bad(struct parser *ps, int err, const char *what)
{
	return ims_err(ps->log, err, "%s, line %zu: %s", ps->what, ps->line_no, what);
}

static bool nevra_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("._+~^:-", c) != NULL); /* strchr() finds a NUL too */
}

/* A byte PATH carries as it is; every other one is %HH. */
static bool plain_path_byte(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e && c != '%';
}

/* Exactly @len bytes of lowercase hex at @s (@n bytes long) into @out. */
static bool lower_hex(const char *s, size_t n, uint8_t *out, size_t len)
{
	if (n != 2 * len)
		return false;
	for (size_t i = 0; i < len; i++) {
		int hi = ims_hex_digit(s[2 * i]), lo = ims_hex_digit(s[2 * i + 1]);

		if (hi < 0 || lo < 0 || (s[2 * i] >= 'A' && s[2 * i] <= 'F') ||
		    (s[2 * i + 1] >= 'A' && s[2 * i + 1] <= 'F'))
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

static int upper_hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decodes PATH (@n bytes at @s) into a new string; NULL with *@why on a bad one. */
static char *decode_path(const char *s, size_t n, const char **why)
{
	char *out, *o;

	if (!n || s[0] != '/') {
		*why = "the path is not absolute";
		return NULL;
	}
	out = o = malloc(n + 1);
	if (!out) {
		*why = NULL;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int hi, lo;

		if (plain_path_byte(c)) {
			*o++ = (char)c;
			continue;
		}
		if (c != '%' || i + 2 >= n) {
			*why = c == '%' ? "a truncated %HH escape in the path" :
			       "a byte in the path that must be written %HH";
			goto fail;
		}
		hi = upper_hex_digit(s[i + 1]);
		lo = upper_hex_digit(s[i + 2]);
		if (hi < 0 || lo < 0) {
			*why = "a %HH escape that is not two uppercase hex digits";
			goto fail;
		}
		c = (unsigned char)(hi << 4 | lo);
		if (!c || plain_path_byte(c)) {
			*why = c ? "a %HH escape of a byte that is written as it is" :
			       "a NUL byte in the path";
			goto fail;
		}
		*o++ = (char)c;
		i += 2;
	}
	*o = '\0';
	if ((size_t)(o - out) > MANIFEST_MAX_PATH) {
		*why = "the path is longer than 4096 bytes";
		goto fail;
	}
	/* rpm's names are canonical: "/opt/../../etc/shadow" names no file of a package. */
	for (const char *c = out; *c;) {
		size_t len = strcspn(++c, "/");

		if (!len || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.')) {
			*why = "a path with an empty, \".\" or \"..\" component";
			goto fail;
		}
		c += len;
	}
	return out;
fail:
	free(out);
	return NULL;
}

/* Splits off the next space-separated field of @line (@len bytes) at *@pos. */
static bool next_field(const char *line, size_t len, size_t *pos, const char **f, size_t *n)
{
	const char *sp;

	if (*pos >= len)
		return false;
	*f = line + *pos;
	sp = memchr(*f, ' ', len - *pos);
	*n = sp ? (size_t)(sp - *f) : len - *pos;
	*pos += *n + (sp ? 1 : 0);
	/* "a  b" or a trailing space: an empty field, never accepted. */
	return *n > 0 && !(sp && *pos >= len);
}

static int package_line(struct parser *ps, const char *line, size_t len)
{
	struct manifest *m = ps->m;
	struct manifest_pkg *p;
	const char *f;
	size_t pos = 0, n;

	if (ps->in_pkg)
		return bad(ps, -EINVAL, "a package starts before the previous one ended");
	if (m->n_pkgs >= MANIFEST_MAX_PACKAGES)
		return bad(ps, -E2BIG, "more than 1048576 packages");
	if (m->n_pkgs == ps->cap_pkgs) {
		size_t cap = ps->cap_pkgs ? ps->cap_pkgs * 2 : 16;

		p = realloc(m->pkgs, cap * sizeof(*p));
		if (!p)
			return bad(ps, -ENOMEM, "out of memory");
		m->pkgs = p;
		ps->cap_pkgs = cap;
	}
	p = &m->pkgs[m->n_pkgs];
	*p = (struct manifest_pkg){ .line = ps->line_no };
	next_field(line, len, &pos, &f, &n); /* "package" */
	if (!next_field(line, len, &pos, &f, &n) || n > MANIFEST_MAX_NEVRA)
		return bad(ps, -EINVAL, "a package line needs a NEVRA of 1 to 255 bytes");
	for (size_t i = 0; i < n; i++)
		if (!nevra_char(f[i]))
			return bad(ps, -EINVAL, "a NEVRA byte outside letters, digits and ._+~^:-");
	p->nevra = strndup(f, n);
	if (!p->nevra)
		return bad(ps, -ENOMEM, "out of memory");
	m->n_pkgs++; /* owned by @m from here on, for manifest_free() */
	if (!next_field(line, len, &pos, &f, &n) || !lower_hex(f, n, p->header_sha256, 32))
		return bad(ps, -EINVAL, "a package line needs the header's SHA-256 in 64 lowercase hex digits");
	if (pos < len)
		return bad(ps, -EINVAL, "a package line has fields after the header digest");
	ps->in_pkg = true;
	ps->cap_files = 0;
	return 0;
}

/* VALUE of a sig line: a signature v2 over @algo, nothing before or after it. */
static int value_field(struct parser *ps, struct manifest_file *mf, const char *f, size_t n)
{
	struct imastream_xattr_info info = { .size = sizeof(info) };

	if (n % 2 || n < 2 * (IMASTREAM_SIG_HDR_SIZE + 1) || n > 2 * SIGNATURES_MAX_VALUE)
		return bad(ps, -EINVAL, "a signature value that is not 10 to 2057 bytes of hex");
	mf->value = malloc(n / 2);
	if (!mf->value)
		return bad(ps, -ENOMEM, "out of memory");
	if (!lower_hex(f, n, mf->value, n / 2))
		return bad(ps, -EINVAL, "a signature value that is not lowercase hex");
	mf->value_len = n / 2;
	if (imastream_xattr_decode(mf->value, mf->value_len, &info, NULL) ||
	    info.type != IMASTREAM_XATTR_DIGSIG || info.version != IMASTREAM_SIG_V2)
		return bad(ps, -EINVAL, "a signature value that is not an IMA signature (03 02 header)");
	if (info.algo != mf->algo->algo)
		return bad(ps, -EINVAL, "a signature value over another hash algorithm than the line's");
	return 0;
}

static int file_line(struct parser *ps, const char *line, size_t len)
{
	struct manifest_pkg *p;
	struct manifest_file *mf;
	const char *f, *why = NULL;
	char name[16];
	size_t pos = 0, n;

	if (!ps->in_pkg)
		return bad(ps, -EINVAL, "a file line outside a package");
	p = &ps->m->pkgs[ps->m->n_pkgs - 1];
	if (p->n_files >= MANIFEST_MAX_FILES)
		return bad(ps, -E2BIG, "more than 1048576 files in one package");
	if (p->n_files == ps->cap_files) {
		size_t cap = ps->cap_files ? ps->cap_files * 2 : 16;

		mf = realloc(p->files, cap * sizeof(*mf));
		if (!mf)
			return bad(ps, -ENOMEM, "out of memory");
		p->files = mf;
		ps->cap_files = cap;
	}
	mf = &p->files[p->n_files];
	*mf = (struct manifest_file){ .line = ps->line_no };
	next_field(line, len, &pos, &f, &n); /* "file" or "sig" */
	if (!next_field(line, len, &pos, &f, &n) || n >= sizeof(name))
		return bad(ps, -EINVAL, "a file line needs a hash algorithm");
	memcpy(name, f, n);
	name[n] = '\0';
	mf->algo = imastream_hash_by_name(name);
	/* The table's own spelling only: one way to write it. */
	if (!mf->algo || strcmp(mf->algo->name, name))
		return bad(ps, -EINVAL, "an unknown hash algorithm");
	if (!next_field(line, len, &pos, &f, &n) ||
	    !lower_hex(f, n, mf->digest, mf->algo->digest_size))
		return bad(ps, -EINVAL, "a digest that is not lowercase hex of the algorithm's size");
	if (ps->m->kind == MANIFEST_SIGNATURES) {
		int err = next_field(line, len, &pos, &f, &n) ? value_field(ps, mf, f, n) :
			  bad(ps, -EINVAL, "a sig line needs the signature value after the digest");

		if (err) {
			free(mf->value);
			return err;
		}
	}
	/* The path is the rest of the line: it has no spaces (they are %20). */
	if (!next_field(line, len, &pos, &f, &n) || pos < len) {
		free(mf->value);
		return bad(ps, -EINVAL, ps->m->kind == MANIFEST_SIGNATURES ?
			   "a sig line needs one path after the signature value" :
			   "a file line needs one path after the digest");
	}
	mf->path = decode_path(f, n, &why);
	if (!mf->path) {
		free(mf->value);
		return why ? bad(ps, -EINVAL, why) : bad(ps, -ENOMEM, "out of memory");
	}
	p->n_files++;
	return 0;
}

static int by_path(const void *a, const void *b)
{
	const struct manifest_file *fa = *(const struct manifest_file *const *)a;
	const struct manifest_file *fb = *(const struct manifest_file *const *)b;
	int c = strcmp(fa->path, fb->path);

	return c ? c : fa->line < fb->line ? -1 : fa->line > fb->line;
}

/* A package lists a path once: which of two lines would its signature be? */
static int unique_paths(struct parser *ps, const struct manifest_pkg *p)
{
	const struct manifest_file **sorted;
	int err = 0;

	if (p->n_files < 2)
		return 0;
	sorted = malloc(p->n_files * sizeof(*sorted));
	if (!sorted)
		return bad(ps, -ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_files; i++)
		sorted[i] = &p->files[i];
	qsort(sorted, p->n_files, sizeof(*sorted), by_path);
	for (size_t i = 1; i < p->n_files && !err; i++)
		if (!strcmp(sorted[i - 1]->path, sorted[i]->path))
			err = ims_err(ps->log, -EINVAL,
				      "%s, line %zu: a second line for the path of line %zu in "
				      "this package",
				      ps->what, sorted[i]->line, sorted[i - 1]->line);
	free(sorted);
	return err;
}

static int by_header(const void *a, const void *b)
{
	const struct manifest_pkg *pa = *(const struct manifest_pkg *const *)a;
	const struct manifest_pkg *pb = *(const struct manifest_pkg *const *)b;
	int c = memcmp(pa->header_sha256, pb->header_sha256, 32);

	return c ? c : pa->line < pb->line ? -1 : pa->line > pb->line;
}

/* One block per package header: a signatures file with two is refused on import. */
static int unique_headers(struct parser *ps)
{
	const struct manifest *m = ps->m;
	const struct manifest_pkg **sorted;
	int err = 0;

	if (m->n_pkgs < 2)
		return 0;
	sorted = malloc(m->n_pkgs * sizeof(*sorted));
	if (!sorted)
		return ims_err(ps->log, -ENOMEM, "%s: out of memory", ps->what);
	for (size_t i = 0; i < m->n_pkgs; i++)
		sorted[i] = &m->pkgs[i];
	qsort(sorted, m->n_pkgs, sizeof(*sorted), by_header);
	for (size_t i = 1; i < m->n_pkgs && !err; i++)
		if (!memcmp(sorted[i - 1]->header_sha256, sorted[i]->header_sha256, 32))
			err = ims_err(ps->log, -EINVAL,
				      "%s, line %zu: a second block for the package header of line "
				      "%zu (%s)",
				      ps->what, sorted[i]->line, sorted[i - 1]->line,
				      sorted[i]->nevra);
	free(sorted);
	return err;
}

static int end_line(struct parser *ps, const char *line, size_t len)
{
	const struct manifest_pkg *p;
	unsigned long long count = 0;
	const char *f;
	size_t pos = 0, n;

	if (!ps->in_pkg)
		return bad(ps, -EINVAL, "an end line outside a package");
	p = &ps->m->pkgs[ps->m->n_pkgs - 1];
	next_field(line, len, &pos, &f, &n); /* "end" */
	if (!next_field(line, len, &pos, &f, &n) || pos < len || n > 7 || (n > 1 && f[0] == '0'))
		return bad(ps, -EINVAL, "an end line needs the file count, in decimal");
	for (size_t i = 0; i < n; i++) {
		if (f[i] < '0' || f[i] > '9')
			return bad(ps, -EINVAL, "an end line needs the file count, in decimal");
		count = count * 10 + (unsigned)(f[i] - '0');
	}
	if (count != p->n_files)
		return bad(ps, -EINVAL, "the end line's count is not the number of file lines");
	ps->in_pkg = false;
	return unique_paths(ps, p);
}

static bool starts(const char *line, size_t len, const char *word)
{
	size_t n = strlen(word);

	return len > n && !memcmp(line, word, n) && line[n] == ' ';
}

static int parse(const char *buf, size_t len, enum manifest_kind kind, const char *name,
		 const struct imastream_log *log, struct manifest *m)
{
	bool sigs = kind == MANIFEST_SIGNATURES;
	struct parser ps = { .log = log,
			     .m = m,
			     .what = name ? name :
				     sigs ? "signatures file" :
					    "digest manifest" };
	const char *magic = sigs ? SIGNATURES_MAGIC : MANIFEST_MAGIC;
	const char *record = sigs ? "sig" : "file";
	size_t pos = 0, max_line = sigs ? SIGNATURES_MAX_LINE : MANIFEST_MAX_LINE;
	int err = 0;

	*m = (struct manifest){ .kind = kind };
	if (len > MANIFEST_MAX_BYTES)
		return ims_err(log, -E2BIG, "%s: larger than 512 MiB", ps.what);
	while (pos < len && !err) {
		const char *line = buf + pos, *lf = memchr(line, '\n', len - pos);
		size_t n = lf ? (size_t)(lf - line) : len - pos;

		ps.line_no++;
		if (!lf)
			err = bad(&ps, -EINVAL, "the last line does not end with a newline");
		else if (n > max_line)
			err = bad(&ps, -E2BIG, sigs ? "a line longer than 20480 bytes" :
				  "a line longer than 16384 bytes");
		else if (memchr(line, '\0', n))
			/* No field may hide one: C strings would end there (fuzzer's find). */
			err = bad(&ps, -EINVAL, "a NUL byte");
		else if (ps.line_no == 1)
			err = n == strlen(magic) && !memcmp(line, magic, n) ? 0 :
			      bad(&ps, -EINVAL, sigs ? "not a signatures file (version 1)" :
				  "not a digest manifest (version 1)");
		else if (starts(line, n, "package"))
			err = package_line(&ps, line, n);
		else if (starts(line, n, record))
			err = file_line(&ps, line, n);
		else if (starts(line, n, "end"))
			err = end_line(&ps, line, n);
		else
			err = bad(&ps, -EINVAL, sigs ? "not a package, sig or end record" :
				  "not a package, file or end record");
		pos += n + 1;
	}
	if (!err && !ps.line_no)
		err = ims_err(log, -EINVAL, "%s: empty", ps.what);
	else if (!err && ps.in_pkg)
		err = bad(&ps, -EINVAL, "the last package has no end line");
	if (!err)
		err = unique_headers(&ps);
	if (err)
		manifest_free(m);
	return err;
}

int manifest_parse(const char *buf, size_t len, const struct imastream_log *log,
		   struct manifest *m)
{
	return parse(buf, len, MANIFEST_DIGESTS, NULL, log, m);
}

int signatures_parse(const char *buf, size_t len, const struct imastream_log *log,
		     struct manifest *m)
{
	return parse(buf, len, MANIFEST_SIGNATURES, NULL, log, m);
}

int manifest_parse_file(const char *buf, size_t len, enum manifest_kind kind, const char *name,
			const struct imastream_log *log, struct manifest *m)
{
	return parse(buf, len, kind, name, log, m);
}

void manifest_free(struct manifest *m)
{
	for (size_t i = 0; i < m->n_pkgs; i++) {
		for (size_t j = 0; j < m->pkgs[i].n_files; j++) {
			free(m->pkgs[i].files[j].path);
			free(m->pkgs[i].files[j].value);
		}
		free(m->pkgs[i].files);
		free(m->pkgs[i].nevra);
	}
	free(m->pkgs);
	*m = (struct manifest){ 0 };
}

int manifest_write_start(FILE *out)
{
	return fputs(MANIFEST_MAGIC "\n", out) == EOF ? -EIO : 0;
}

/* One fwrite per value: a signatures file holds millions of them. */
static void put_hex(FILE *out, const uint8_t *v, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char buf[2 * SIGNATURES_MAX_VALUE];

	for (size_t i = 0; i < len; i++) {
		buf[2 * i] = digits[v[i] >> 4];
		buf[2 * i + 1] = digits[v[i] & 15];
	}
	fwrite(buf, 1, 2 * len, out);
}

int signatures_write_start(FILE *out)
{
	return fputs(SIGNATURES_MAGIC "\n", out) == EOF ? -EIO : 0;
}

static int write_pkg(FILE *out, const struct manifest_pkg *p, bool sigs)
{
	size_t n = strlen(p->nevra);

	/* Everything checked first: nothing is written for a package that cannot be. */
	if (!n || n > MANIFEST_MAX_NEVRA || p->n_files > MANIFEST_MAX_FILES)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!nevra_char(p->nevra[i]))
			return -EINVAL;
	for (size_t i = 0; i < p->n_files; i++)
		if (!p->files[i].algo || p->files[i].path[0] != '/' ||
		    strlen(p->files[i].path) > MANIFEST_MAX_PATH ||
		    (sigs && (!p->files[i].value || p->files[i].value_len > SIGNATURES_MAX_VALUE)))
			return -EINVAL;
	fprintf(out, "package %s ", p->nevra);
	put_hex(out, p->header_sha256, 32);
	fputc('\n', out);
	for (size_t i = 0; i < p->n_files; i++) {
		const struct manifest_file *mf = &p->files[i];

		fprintf(out, "%s %s ", sigs ? "sig" : "file", mf->algo->name);
		put_hex(out, mf->digest, mf->algo->digest_size);
		fputc(' ', out);
		if (sigs) {
			put_hex(out, mf->value, mf->value_len);
			fputc(' ', out);
		}
		for (const unsigned char *c = (const unsigned char *)mf->path; *c; c++) {
			if (plain_path_byte(*c))
				fputc(*c, out);
			else
				fprintf(out, "%%%02X", *c);
		}
		fputc('\n', out);
	}
	fprintf(out, "end %zu\n", p->n_files);
	return ferror(out) ? -EIO : 0;
}

int manifest_write_pkg(FILE *out, const struct manifest_pkg *p)
{
	return write_pkg(out, p, false);
}

int signatures_write_pkg(FILE *out, const struct manifest_pkg *p)
{
	return write_pkg(out, p, true);
}
