// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * File signatures made ahead: a worker thread signs each queued file's IMA digest and the
 * EVM digest its predicted metadata gives, while the driver's thread streams the files;
 * the chain's signer then takes a signature from here only for exactly the digest it was
 * asked to sign, so a wrong prediction costs time, never a wrong value.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "imastream/filesig.h"
#include "imastream/hash.h"
#include "keys/sign_ahead.h"
#include "plugin/core/driver.h"
#include "plugin/core/private.h"
#include "xattr/codec.h"

enum job_state {
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_DONE,
	JOB_FAILED,
	JOB_TAKEN
};

struct job {
	enum job_state state;
	int algo;
	bool evm;
	bool ima_served;
	size_t pos; /* in the queue's order */
	uint32_t uid, gid, mode;
	size_t digest_len, evm_digest_len, ima_sig_len, evm_sig_len;
	int err;
	const char *why; /* of a failure: the test's injection, else strerror */
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	uint8_t evm_digest[IMASTREAM_HASH_MAX_DIGEST];
	uint8_t *ima_sig; /* both signatures, max_sig bytes each */
	uint8_t *evm_sig;
};

struct ims_presign {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* the worker waits here for a job, or to stop */
	pthread_cond_t done; /* the driver waits here for a running job */
	pthread_t thread;
	bool running, stop;
	unsigned long owner;	       /* ims_forks(): a forked child never takes a signature */
	struct imastream_signer *twin; /* the worker's own handle on the chain's key */
	const struct imastream_log *log;
	size_t max_sig;
	struct job **jobs; /* by the driver's file index; NULL where none was queued */
	size_t cap;
	struct job **order; /* the same jobs, in the order they were queued */
	size_t queued, order_cap;
	size_t next;	       /* the worker's cursor in order */
	long current;	       /* the file the driver is labelling, or -1 */
	long reached;	       /* the furthest queue position the driver labelled, or -1 */
	const uint8_t *replay; /* the worker's own raw signature, to build the IMA value */
	size_t replay_len;
	/* IMASTREAM_TEST_PRESIGN_FAIL_AT=N, for tests alone: the Nth job made fails. */
	long fail_at;
	/* IMASTREAM_TEST_PRESIGN_DELAY_US=N, for tests alone: each job sleeps first, so that
	 * the driver meets jobs still being made, and waits for them however long the
	 * scheduler keeps the worker aside (a test's verdict must not hang on the clock). */
	long delay_us;
	/* How long a job took the worker lately (ns): rpm's thread waits no longer for one. */
	int64_t job_ns;
	unsigned long made, used, evm_used, missed;
};

/* The twin's hook: hands back the signature the worker just made (one thread: no lock). */
static int replay(void *arg, int hash_algo, const uint8_t *digest, size_t digest_len,
		  uint8_t *sig_out, size_t sig_cap, size_t *sig_len_ret)
{
	struct ims_presign *ps = arg;

	(void)hash_algo;
	(void)digest;
	(void)digest_len;
	if (!ps->replay || ps->replay_len > sig_cap)
		return 0;
	memcpy(sig_out, ps->replay, ps->replay_len);
	*sig_len_ret = ps->replay_len;
	return 1;
}

/* Both signatures of @j, with the lock released: 0 or -errno (said on collection). */
static int make(struct ims_presign *ps, struct job *j)
{
	struct imastream_evm_input in = { .size = sizeof(in) };
	uint8_t *value;
	size_t vlen, value_cap = ps->max_sig + 64;
	int err;

	if (ps->fail_at >= 0 && ps->made == (unsigned long)ps->fail_at) {
		j->why = "injected by IMASTREAM_TEST_PRESIGN_FAIL_AT";
		return -EIO;
	}
	if (ps->delay_us > 0)
		usleep((useconds_t)ps->delay_us);
	err = imastream_signer_sign(ps->twin, j->algo, j->digest, j->digest_len, j->ima_sig,
				    ps->max_sig, &j->ima_sig_len);
	if (err || !j->evm)
		return err;
	value = malloc(value_cap);
	if (!value)
		return -ENOMEM;
	/* The security.ima value the ima plugin will write from that same signature. */
	ps->replay = j->ima_sig;
	ps->replay_len = j->ima_sig_len;
	err = imastream_ima_sign_digest(ps->twin, j->algo, j->digest, j->digest_len, value,
					value_cap, &vlen, NULL);
	ps->replay = NULL;
	if (!err) {
		in.xattrs[IMASTREAM_EVM_IMA].value = value;
		in.xattrs[IMASTREAM_EVM_IMA].len = vlen;
		in.uid = j->uid;
		in.gid = j->gid;
		in.mode = j->mode;
		in.misc_layout = IMASTREAM_EVM_MISC_64;
		err = imastream_evm_digest_portable(&in, j->algo, j->evm_digest,
						    sizeof(j->evm_digest), &j->evm_digest_len,
						    NULL);
	}
	if (!err)
		err = imastream_signer_sign(ps->twin, j->algo, j->evm_digest, j->evm_digest_len,
					    j->evm_sig, ps->max_sig, &j->evm_sig_len);
	free(value);
	return err;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Waits for the job the worker is making, at most twice as long as a job takes it: a
 * worker on a core finishes sooner, and one the scheduler has put aside would keep rpm
 * waiting longer than signing here.  Return: whether the job is no longer running.
 */
static bool await_job(struct ims_presign *ps, struct job *j)
{
	int64_t until = now_ns() + (ps->job_ns > 50000 ? 2 * ps->job_ns : 100000);
	struct timespec ts = { .tv_sec = until / 1000000000, .tv_nsec = until % 1000000000 };

	while (j->state == JOB_RUNNING)
		if (ps->delay_us > 0)
			pthread_cond_wait(&ps->done, &ps->lock);
		else if (pthread_cond_timedwait(&ps->done, &ps->lock, &ts) == ETIMEDOUT)
			break;
	return j->state != JOB_RUNNING;
}

/*
 * Caught up by the driver's thread (a slow key such as P-384 or RSA, or a worker kept
 * off its core), the worker would make the very job the driver reaches next, and the
 * driver would wait for it: one core signing at a time.  So when no job the driver has
 * to sign itself lies between it and the worker's next, that next job is left to the
 * driver, and the worker makes the one after while the driver signs it.
 */
static void leave_one_to_driver(struct ims_presign *ps)
{
	size_t from;

	if (ps->reached < 0 || ps->next > (size_t)ps->reached + 2)
		return;
	from = (size_t)ps->reached + 1;
	if (ps->next < from)
		ps->next = from;
	for (size_t p = from; p < ps->next; p++)
		if (ps->order[p]->state == JOB_QUEUED)
			return;
	if (ps->next < ps->queued)
		ps->next++;
}

static void *worker(void *arg)
{
	struct ims_presign *ps = arg;

	pthread_mutex_lock(&ps->lock);
	while (!ps->stop) {
		struct job *j = NULL;
		int64_t start, took;
		int err;

		if (ps->next >= ps->queued) {
			pthread_cond_wait(&ps->wake, &ps->lock);
			continue;
		}
		leave_one_to_driver(ps);
		if (ps->next >= ps->queued)
			continue;
		j = ps->order[ps->next];
		if (j->state != JOB_QUEUED) {
			ps->next++;
			continue;
		}
		ps->next++;
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&ps->lock);
		start = now_ns();
		err = make(ps, j);
		took = now_ns() - start;
		pthread_mutex_lock(&ps->lock);
		ps->made++;
		ps->job_ns = ps->job_ns ? (3 * ps->job_ns + took) / 4 : took;
		/* Taken meanwhile: rpm's thread stopped waiting and signed it itself. */
		if (j->state == JOB_RUNNING) {
			j->err = err;
			j->state = err ? JOB_FAILED : JOB_DONE;
		}
		pthread_cond_broadcast(&ps->done);
	}
	pthread_mutex_unlock(&ps->lock);
	return NULL;
}

static int copy_sig(const uint8_t *sig, size_t len, uint8_t *out, size_t cap, size_t *len_ret)
{
	if (len > cap)
		return -ENOSPC;
	memcpy(out, sig, len);
	*len_ret = len;
	return 1;
}

/* The chain signer's hook, on the driver's thread: only the current file's digests. */
static int take(void *arg, int hash_algo, const uint8_t *digest, size_t digest_len,
		uint8_t *sig_out, size_t sig_cap, size_t *sig_len_ret)
{
	struct ims_presign *ps = arg;
	struct job *j;
	const char *why = NULL;
	int ret = 0;

	if (ps->owner != ims_forks())
		return 0;
	pthread_mutex_lock(&ps->lock);
	j = ps->current >= 0 && (size_t)ps->current < ps->cap ? ps->jobs[ps->current] : NULL;
	if (!j || hash_algo != j->algo)
		goto out;
	if (j->state != JOB_TAKEN && !j->ima_served && digest_len == j->digest_len &&
	    memcmp(digest, j->digest, digest_len) == 0) {
		/* The worker is behind: this one is signed here, and it skips it. */
		if (j->state == JOB_QUEUED) {
			j->state = JOB_TAKEN;
			ps->missed++;
			goto out;
		}
		if (!await_job(ps, j)) {
			j->state = JOB_TAKEN;
			ps->missed++;
			goto out;
		}
		if (j->state == JOB_FAILED) {
			ret = j->err < 0 ? j->err : -EIO;
			why = j->why ? j->why : strerror(-ret);
			j->state = JOB_TAKEN;
			goto out;
		}
		ret = copy_sig(j->ima_sig, j->ima_sig_len, sig_out, sig_cap, sig_len_ret);
		j->ima_served = true;
		ps->used++;
	} else if (j->state == JOB_DONE && j->ima_served && j->evm &&
		   digest_len == j->evm_digest_len &&
		   memcmp(digest, j->evm_digest, digest_len) == 0) {
		ret = copy_sig(j->evm_sig, j->evm_sig_len, sig_out, sig_cap, sig_len_ret);
		j->state = JOB_TAKEN;
		ps->evm_used++;
	}
out:
	pthread_mutex_unlock(&ps->lock);
	if (ret < 0)
		ims_err(ps->log, ret, "signing worker: %s", why ? why : strerror(-ret));
	return ret;
}

static void stop_worker(struct ims_presign *ps)
{
	if (!ps->running)
		return;
	pthread_mutex_lock(&ps->lock);
	ps->stop = true;
	pthread_cond_broadcast(&ps->wake);
	pthread_mutex_unlock(&ps->lock);
	pthread_join(ps->thread, NULL);
	ps->running = false;
	ps->stop = false;
}

static void drop_jobs(struct ims_presign *ps)
{
	for (size_t i = 0; i < ps->cap; i++) {
		free(ps->jobs[i]);
		ps->jobs[i] = NULL;
	}
	free(ps->jobs);
	free(ps->order);
	ps->jobs = NULL;
	ps->order = NULL;
	ps->cap = 0;
	ps->queued = 0;
	ps->order_cap = 0;
	ps->next = 0;
	ps->current = -1;
	ps->reached = -1;
}

static void presign_free(struct ims_presign *ps)
{
	if (!ps)
		return;
	stop_worker(ps);
	drop_jobs(ps);
	imastream_signer_free(ps->twin);
	pthread_cond_destroy(&ps->wake);
	pthread_cond_destroy(&ps->done);
	pthread_mutex_destroy(&ps->lock);
	free(ps);
}

static int presign_new(struct imastream_signer *signer, const struct imastream_log *log,
		       struct ims_presign **ret)
{
	struct ims_presign *ps = calloc(1, sizeof(*ps));
	const char *fail_at = getenv("IMASTREAM_TEST_PRESIGN_FAIL_AT");
	const char *delay = getenv("IMASTREAM_TEST_PRESIGN_DELAY_US");
	pthread_condattr_t attr;
	int err;

	if (!ps)
		return -ENOMEM;
	pthread_mutex_init(&ps->lock, NULL);
	pthread_cond_init(&ps->wake, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&ps->done, &attr);
	pthread_condattr_destroy(&attr);
	ps->log = log;
	ps->current = -1;
	ps->reached = -1;
	ps->fail_at = fail_at && fail_at[0] ? atol(fail_at) : -1;
	ps->delay_us = delay && delay[0] ? atol(delay) : 0;
	/* A token's key signs inside the token, one session at a time: nothing to gain. */
	err = imastream_signer_dup(signer, &ps->twin);
	if (err) {
		presign_free(ps);
		return err;
	}
	ims_signer_set_take(ps->twin, replay, ps);
	ps->max_sig = imastream_signer_max_sig_size(ps->twin);
	*ret = ps;
	return 0;
}

int ims_presign_run(struct imastream_signer *signer, const struct imastream_log *log,
		    struct ims_presign **psp, bool on)
{
	struct ims_presign *ps = *psp;
	int err;

	if (!on) {
		if (ps)
			stop_worker(ps);
		return 0;
	}
	if (!ps) {
		err = presign_new(signer, log, &ps);
		if (err)
			return err;
		*psp = ps;
		ims_signer_set_take(signer, take, ps);
	}
	if (ps->running)
		return 0;
	ps->owner = ims_forks();
	err = -pthread_create(&ps->thread, NULL, worker, ps);
	if (err)
		return ims_err(log, err, "cannot start the signing worker: %s", strerror(-err));
	ps->running = true;
	return 0;
}

int ims_presign_add(struct ims_presign *ps, size_t index, const struct ims_presign_file *pf)
{
	struct job *j;
	int err = 0;

	if (!ps || pf->digest_len > IMASTREAM_HASH_MAX_DIGEST || index > (1u << 30))
		return 0;
	j = calloc(1, sizeof(*j) + 2 * ps->max_sig);
	if (!j)
		return -ENOMEM;
	j->algo = pf->algo;
	memcpy(j->digest, pf->digest, pf->digest_len);
	j->digest_len = pf->digest_len;
	j->evm = pf->evm;
	j->uid = pf->uid;
	j->gid = pf->gid;
	j->mode = pf->mode;
	j->ima_sig = (uint8_t *)(j + 1);
	j->evm_sig = j->ima_sig + ps->max_sig;
	pthread_mutex_lock(&ps->lock);
	if (index >= ps->cap) {
		size_t n = ps->cap ? ps->cap : 256;
		struct job **grown;

		while (n <= index)
			n *= 2;
		grown = realloc(ps->jobs, n * sizeof(*grown));
		if (grown) {
			memset(grown + ps->cap, 0, (n - ps->cap) * sizeof(*grown));
			ps->jobs = grown;
			ps->cap = n;
		} else {
			err = -ENOMEM;
		}
	}
	if (!err && ps->queued == ps->order_cap) {
		size_t n = ps->order_cap ? 2 * ps->order_cap : 256;
		struct job **grown = realloc(ps->order, n * sizeof(*grown));

		if (grown) {
			ps->order = grown;
			ps->order_cap = n;
		} else {
			err = -ENOMEM;
		}
	}
	if (!err && !ps->jobs[index]) {
		ps->jobs[index] = j;
		j->pos = ps->queued;
		ps->order[ps->queued++] = j;
		j = NULL;
		pthread_cond_signal(&ps->wake);
	}
	pthread_mutex_unlock(&ps->lock);
	free(j);
	return err;
}

void ims_presign_current(struct ims_presign *ps, long index)
{
	if (!ps)
		return;
	pthread_mutex_lock(&ps->lock);
	ps->current = index;
	if (index >= 0 && (size_t)index < ps->cap && ps->jobs[index] &&
	    (long)ps->jobs[index]->pos > ps->reached)
		ps->reached = (long)ps->jobs[index]->pos;
	pthread_mutex_unlock(&ps->lock);
}

void ims_presign_reset(struct ims_presign *ps)
{
	bool was_running;

	/* Nothing queued (an erase, a pretrans): the worker is left as it is. */
	if (!ps || !ps->cap)
		return;
	/* The worker may be in a job: stopped and started again around the drop. */
	was_running = ps->running;
	stop_worker(ps);
	if (ps->made || ps->missed)
		ims_logf(ps->log, IMASTREAM_LOG_DEBUG,
			 "signing worker: %lu file(s) signed ahead, %lu used (%lu with their EVM "
			 "signature), %lu signed on the caller's thread",
			 ps->made, ps->used, ps->evm_used, ps->missed);
	ps->made = ps->used = ps->evm_used = ps->missed = 0;
	drop_jobs(ps);
	if (was_running)
		ims_presign_run(NULL, ps->log, &ps, true);
}

void ims_presign_free(struct ims_presign *ps)
{
	presign_free(ps);
}
