/* The runner's pool (runner/runner.h): one step per task, inline or in up to N child processes at once,
 * each reporting its run id and status back through a pipe. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/runner.h"
#include "cancel.h"

#define POOL_TICK_MS 100 /* the longest a finished job waits to be collected */

struct child_msg {
	int64_t run_id;
	int status;
	char msg[sizeof(((struct kf_err *)0)->msg)];
};

static bool stopped(volatile int *stop)
{
	return stop && *stop;
}

static enum kf_status run_inline(const struct kf_suite *s, kf_runner_fn fn, void *ctx, volatile int *stop,
				 kf_runner_done_fn done, void *done_ctx, int64_t *run_ids, struct kf_err *err)
{
	for (size_t i = 0; i < s->n; i++) {
		if (stopped(stop))
			return kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted");
		if (fn(ctx, &s->v[i], &run_ids[i], err))
			return kf_err_prefix(err, "task '%s'", s->v[i].name);
		if (done)
			done(done_ctx, i + 1, s->n, &s->v[i], run_ids[i]);
	}
	return KF_OK;
}

/* Forks the step of task i; its result comes back on *fd. */
static enum kf_status spawn(const struct kf_suite *s, size_t i, kf_runner_fn fn, void *ctx, pid_t *pid,
			    int *fd, struct kf_err *err)
{
	int p[2];
	pid_t k;
	if (pipe(p))
		return kf_err_set(err, KF_ERR_IO, "pipe: %s", strerror(errno));
	if ((k = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return kf_err_set(err, KF_ERR_IO, "fork: %s", strerror(errno));
	}
	if (k == 0) {
		struct child_msg m = {0};
		struct kf_err cerr = KF_ERR_INIT;
		close(p[0]);
		m.status = fn(ctx, &s->v[i], &m.run_id, &cerr);
		snprintf(m.msg, sizeof(m.msg), "%s", cerr.msg);
		ssize_t w = write(p[1], &m, sizeof(m));
		_exit(w == (ssize_t)sizeof(m) ? 0 : 3);
	}
	close(p[1]);
	*pid = k;
	*fd = p[0];
	return KF_OK;
}

/* Collects the child that ended (pid k), if it is one of ours. */
static void collect(const struct kf_suite *s, pid_t k, pid_t *pid, int *fd, size_t next, size_t *running,
		    size_t *n_done, kf_runner_done_fn done, void *done_ctx, int64_t *run_ids,
		    enum kf_status *st, struct kf_err *err)
{
	for (size_t i = 0; i < next; i++) {
		struct child_msg m;
		ssize_t r;
		if (pid[i] != k)
			continue;
		r = read(fd[i], &m, sizeof(m));
		close(fd[i]);
		pid[i] = 0;
		(*running)--;
		(*n_done)++;
		if (r != (ssize_t)sizeof(m)) {
			if (!*st)
				*st = kf_err_set(err, KF_ERR_CRASH, "task '%s': its bench process died",
						 s->v[i].name);
		} else if (m.status) {
			if (!*st) {
				*st = kf_err_set(err, (enum kf_status)m.status, "%s", m.msg);
				kf_err_prefix(err, "task '%s'", s->v[i].name);
			}
		} else {
			run_ids[i] = m.run_id;
			if (done)
				done(done_ctx, *n_done, s->n, &s->v[i], m.run_id);
		}
	}
}

enum kf_status kf_runner_pool_run(const struct kf_suite *s, kf_runner_fn fn, void *ctx, int jobs,
				  volatile int *stop, kf_runner_done_fn done, void *done_ctx,
				  int64_t *run_ids, struct kf_err *err)
{
	enum kf_status st = KF_OK;
	size_t next = 0, running = 0, n_done = 0;
	bool forwarded = false;
	pid_t *pid;
	int *fd;

	if (jobs <= 1)
		return run_inline(s, fn, ctx, stop, done, done_ctx, run_ids, err);
	pid = calloc(s->n ? s->n : 1, sizeof(pid_t));
	fd = calloc(s->n ? s->n : 1, sizeof(int));
	if (!pid || !fd) {
		free(pid);
		free(fd);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	fflush(NULL); /* a child must not flush the parent's buffered output again */
	while (n_done < s->n) {
		while (!st && !stopped(stop) && running < (size_t)jobs && next < s->n) {
			if ((st = spawn(s, next, fn, ctx, &pid[next], &fd[next], err)))
				break;
			next++;
			running++;
		}
		if (!running)
			break;
		if (stopped(stop) && !forwarded) {
			/* a signal sent to kforge alone (not its process group) reaches the jobs this way */
			for (size_t i = 0; i < next; i++)
				if (pid[i] > 0)
					kill(pid[i], SIGTERM);
			forwarded = true;
		}
		int ws;
		pid_t k = waitpid(-1, &ws, WNOHANG);
		if (k == 0) {
			/* until a job ends: woken at once by the cancellation token, otherwise every tick */
			struct pollfd p = {forwarded ? -1 : kf_cancel_fd(), POLLIN, 0};
			poll(&p, 1, POOL_TICK_MS);
			continue;
		}
		if (k < 0) {
			if (errno == EINTR)
				continue;
			st = kf_err_set(err, KF_ERR_IO, "waitpid: %s", strerror(errno));
			break;
		}
		collect(s, k, pid, fd, next, &running, &n_done, done, done_ctx, run_ids, &st, err);
		if ((st || stopped(stop)) && next < s->n)
			next = s->n; /* start nothing more; wait for the running ones */
		if (next == s->n && !running)
			break;
	}
	free(pid);
	free(fd);
	if (!st && stopped(stop))
		st = kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted");
	return st;
}
