/* The process's cancellation token (core/cancel.h): a flag and a self-pipe, set from signal handlers. */
#include "cancel.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile int flag;
static volatile sig_atomic_t by_signal;
static int pipe_fd[2] = {-1, -1};

static void on_signal(int sig)
{
	kf_cancel_request(sig);
}

void kf_cancel_install(void)
{
	struct sigaction sa;

	if (pipe_fd[0] < 0 && pipe2(pipe_fd, O_CLOEXEC | O_NONBLOCK) != 0)
		pipe_fd[0] = pipe_fd[1] = -1; /* the flag still works; waits fall back to their ticks */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: a blocking call returns EINTR and its loop looks at the token */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void kf_cancel_request(int sig)
{
	int saved = errno;

	if (!flag) {
		by_signal = sig;
		flag = 1;
		if (pipe_fd[1] >= 0) {
			ssize_t r = write(pipe_fd[1], "x", 1);
			(void)r; /* a full pipe is readable already */
		}
	}
	errno = saved;
}

bool kf_cancelled(void)
{
	return flag != 0;
}

int kf_cancel_signal(void)
{
	return (int)by_signal;
}

int kf_cancel_fd(void)
{
	return pipe_fd[0];
}

volatile int *kf_cancel_flag(void)
{
	return &flag;
}

void kf_cancel_reset(void)
{
	char drain[64];

	if (pipe_fd[0] >= 0)
		while (read(pipe_fd[0], drain, sizeof(drain)) > 0)
			;
	by_signal = 0;
	flag = 0;
}
