/* Run a shell command, exec, fork, spawn a thread: as the invoking user (root in CI) this was the
 * whole machine. Each way in turn; the last one, system(), blocks SIGSYS first (the filter then kills). */
#include "redteam.h"

#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void *rt_thread(void *arg)
{
	return arg;
}

static void rt_attack(void)
{
	pid_t p;
	pthread_t t;
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)"touch " RT_OUTSIDE "/exec", NULL};
	char *envp[] = {NULL};

	/* fork then exec in the child */
	p = fork();
	if (p == 0) {
		execve("/bin/sh", argv, envp);
		_exit(127);
	}
	if (p > 0) {
		RT_BREACH("fork() made process %d", (int)p);
		waitpid(p, NULL, 0);
	}
	/* a raw clone without CLONE_THREAD */
	long r = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	if (r > 0)
		RT_BREACH("clone() made process %ld", r);
	if (pthread_create(&t, NULL, rt_thread, NULL) == 0) {
		RT_BREACH("pthread_create made a thread");
		pthread_join(t, NULL);
	}
	/* exec in place of the worker */
	execve("/bin/sh", argv, envp);
	RT_NOTE("execve: %s", strerror(errno));
#ifndef RT_NO_SYSTEM
	if (system("touch " RT_OUTSIDE "/system") == 0)
		RT_BREACH("system() ran a shell command");
#endif
}
