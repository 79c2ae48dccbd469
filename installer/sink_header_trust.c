// SPDX-License-Identifier: LGPL-2.1-or-later
/* The chain sink's OpenPGP header trust: the --pgp-key files and the root's rpm keyring. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rpm/header.h>
#include <rpm/rpmkeyring.h>
#include <rpm/rpmlog.h>
#include <rpm/rpmts.h>

#include "common/private.h"
#include "imastream/hooks.h"
#include "installer/sink_header_trust.h"
#include "plugin/core/trust_domains.h"

struct ims_header_trust {
	const struct imastream_log *log;
	struct ims_domains *keys; /* the --pgp-key files: one domain */
	rpmKeyring rpmdb_keys;    /* the root's rpm keyring (rpm --import), or NULL */
};

/* librpm's messages while we open the root's database: our log, at debug level. */
static int rpmlog_to_debug(rpmlogRec rec, rpmlogCallbackData data)
{
	const struct imastream_log *log = data;
	const char *msg = rpmlogRecMessage(rec);
	size_t len = strlen(msg);

	while (len && msg[len - 1] == '\n')
		len--;
	ims_logf(log, IMASTREAM_LOG_DEBUG, "librpm: %.*s", (int)len, msg);
	return 0;
}

/* "pgp-key=1:FILE:FILE" for the trust-domain loader: every key file in one domain. */
static int load_keys(struct ims_header_trust *t, const char *const *pgp_keys)
{
	size_t len = sizeof("pgp-key=1");
	char *spec;
	int err;

	if (!pgp_keys || !pgp_keys[0])
		return 0;
	for (const char *const *k = pgp_keys; *k; k++) {
		if (strpbrk(*k, ":, \t"))
			return ims_err(t->log, -EINVAL, "OpenPGP key file %s: a name with ':', ',' or a blank is not supported",
				       *k);
		len += strlen(*k) + 1;
	}
	spec = malloc(len);
	if (!spec)
		return -ENOMEM;
	strcpy(spec, "pgp-key=1");
	for (const char *const *k = pgp_keys; *k; k++) {
		strcat(spec, ":");
		strcat(spec, *k);
	}
	err = ims_domains_load(spec, "OpenPGP keys", t->log, &t->keys);
	free(spec);
	return err;
}

static void load_rpmdb_keys(struct ims_header_trust *t, rpmts ts)
{
	rpmlogCallback prev = rpmlogSetCallback(rpmlog_to_debug, (void *)t->log);

	t->rpmdb_keys = rpmtsGetKeyring(ts, 1);
	rpmtsCloseDB(ts);
	rpmlogSetCallback(prev, NULL);
}

int ims_header_trust_new(const char *const *pgp_keys, void *rpm_ts,
			 const struct imastream_log *log, struct ims_header_trust **ret)
{
	struct ims_header_trust *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	t->log = log;
	err = load_keys(t, pgp_keys);
	if (err) {
		ims_header_trust_free(t);
		return err;
	}
	if (rpm_ts)
		load_rpmdb_keys(t, rpm_ts);
	*ret = t;
	return 0;
}

void ims_header_trust_free(struct ims_header_trust *t)
{
	if (!t)
		return;
	ims_domains_free(t->keys);
	if (t->rpmdb_keys)
		rpmKeyringFree(t->rpmdb_keys);
	free(t);
}

/* The verdict on @rpm_header's signature; *@result 0 (verified), -ENOKEY or -EKEYREJECTED. */
static int judge(struct ims_header_trust *t, const char *name, void *rpm_header,
		 struct ims_verdict *verdict, int *result)
{
	/* The --pgp-key files are one domain; the root's rpm keyring (rpm --import) next. */
	int err = ims_header_judge(t->keys, t->rpmdb_keys, rpm_header, verdict);

	if (err == -EINVAL && verdict->why && !strcmp(verdict->why, "unknown key"))
		verdict->why = "signed header without an immutable region";
	else if (err)
		return ims_err(t->log, err, "%s: cannot check the header signature: %s", name,
			       strerror(-err));
	*result = !verdict->why ? 0 :
		  !strcmp(verdict->why, "unsigned") || !strcmp(verdict->why, "unknown key") ?
				  -ENOKEY :
				  -EKEYREJECTED;
	return 0;
}

/* The refusal of a header judged @result, in one line; 0 when it is accepted. */
static int refusal(struct ims_header_trust *t, const char *name, const struct ims_verdict *verdict,
		   int result, bool allow_unsigned, bool quiet)
{
	if (result == -EKEYREJECTED)
		return ims_err(t->log, result, "%s: refused: %s (key id %s)", name, verdict->why,
			       verdict->keyid[0] ? verdict->keyid : "none");
	if (result && !allow_unsigned) {
		if (verdict->keyid[0])
			return ims_err(t->log, -EKEYREJECTED,
				       "%s: refused: header signed by unknown key %s (not among "
				       "the trusted OpenPGP keys; "
				       "trust it with --pgp-key FILE or rpm --import in the root)",
				       name, verdict->keyid);
		return ims_err(
			t->log, -EKEYREJECTED,
			"%s: refused: the header is not signed (--allow-unsigned accepts it)",
			name);
	}
	if (result && !quiet)
		ims_logf(t->log, IMASTREAM_LOG_INFO,
			 "%s: %s header accepted (unsigned packages allowed)", name,
			 verdict->keyid[0] ? "unknown key's" : "unsigned");
	return 0;
}

int ims_header_trust_precheck(struct ims_header_trust *t, const char *name, void *rpm_header,
			      bool allow_unsigned)
{
	struct ims_verdict verdict;
	int result, err = judge(t, name, rpm_header, &verdict, &result);

	return err ? err : refusal(t, name, &verdict, result, allow_unsigned, true);
}

int ims_header_trust_check(struct ims_header_trust *t, struct imastream_chain *chain,
			   const char *name, void *rpm_header, bool allow_unsigned,
			   bool *verified_ret)
{
	struct imastream_verify v = { .size = sizeof(v), .what = "header" };
	struct ims_verdict verdict;
	struct ims_header_sigs sigs;
	int err;

	*verified_ret = false;
	err = judge(t, name, rpm_header, &verdict, &v.result);
	if (err)
		return err;
	*verified_ret = !v.result;
	err = ims_header_sigs_read(rpm_header, &sigs);
	if (err)
		return err;
	if (sigs.n) {
		v.sig = sigs.sig[0];
		v.sig_len = sigs.len[0];
	}
	err = imastream_chain_verify(chain, &v);
	ims_header_sigs_free(&sigs);
	if (err)
		return ims_err(t->log, err, "%s: refused by the verify hook: %s", name, strerror(-err));
	return refusal(t, name, &verdict, v.result, allow_unsigned, false);
}
