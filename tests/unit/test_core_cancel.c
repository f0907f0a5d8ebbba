/* The cancellation token (core/cancel.h): a request sets it once, wakes a poll on its descriptor, records
 * the signal; SIGINT and SIGTERM request it once installed. */
#include <poll.h>
#include <sys/time.h>
#include <signal.h>
#include <unistd.h>

#include "cancel.h"
#include "kf.h"
#include "testing.h"

static int readable(int fd, int wait_ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	return poll(&p, 1, wait_ms) == 1 && (p.revents & POLLIN);
}

static void test_request_and_reset(void)
{
	kf_cancel_install();
	CHECK(kf_cancel_fd() >= 0);
	CHECK(!kf_cancelled());
	CHECK(!*kf_cancel_flag());
	CHECK(!readable(kf_cancel_fd(), 0));
	kf_cancel_request(0);
	CHECK(kf_cancelled());
	CHECK(*kf_cancel_flag());
	CHECK_EQ_INT(kf_cancel_signal(), 0);
	CHECK(readable(kf_cancel_fd(), 0));
	/* a second request changes nothing (the first signal stays the one recorded) */
	kf_cancel_request(SIGTERM);
	CHECK_EQ_INT(kf_cancel_signal(), 0);
	kf_cancel_reset();
	CHECK(!kf_cancelled());
	CHECK(!readable(kf_cancel_fd(), 0));
}

static void test_signals_request_it(void)
{
	static const int sigs[] = {SIGINT, SIGTERM};
	kf_cancel_install();
	kf_cancel_install(); /* idempotent: the same pipe */
	for (size_t i = 0; i < KF_ARRAY_SIZE(sigs); i++) {
		int fd = kf_cancel_fd();
		CHECK(!kf_cancelled());
		raise(sigs[i]); /* the process survives: the handler only records it */
		CHECK(kf_cancelled());
		CHECK_EQ_INT(kf_cancel_signal(), sigs[i]);
		CHECK(readable(kf_cancel_fd(), 100));
		CHECK_EQ_INT(kf_cancel_fd(), fd);
		kf_cancel_reset();
	}
}

/* A signal that lands while a poll waits on the descriptor (the waits in sandbox/child.c, session.c,
 * agent/llm.c, runner/pool.c) wakes it well before its timeout. */
static void test_wakes_a_waiting_poll(void)
{
	struct itimerval it = {{0, 0}, {0, 50000}};
	struct sigaction sa = {0}, old;
	double t0;
	kf_cancel_install();
	sa.sa_handler = (void (*)(int))kf_cancel_request;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART; /* even when the poll is restarted instead of failing with EINTR */
	sigaction(SIGALRM, &sa, &old);
	t0 = kf_now_ms();
	setitimer(ITIMER_REAL, &it, NULL);
	{
		struct pollfd p = {kf_cancel_fd(), POLLIN, 0};
		int r;
		do
			r = poll(&p, 1, 5000);
		while (r < 0);
		CHECK_EQ_INT(r, 1);
	}
	sigaction(SIGALRM, &old, NULL);
	CHECKF(kf_now_ms() - t0 < 2000, "took %.0f ms", kf_now_ms() - t0);
	CHECK_EQ_INT(kf_cancel_signal(), SIGALRM);
	kf_cancel_reset();
}

KF_TEST_MAIN(TEST(test_request_and_reset), TEST(test_signals_request_it), TEST(test_wakes_a_waiting_poll))
