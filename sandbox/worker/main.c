/* kforge-worker: the untrusted side. Until the worker protocol lands it only refuses to run. */
#include <stdio.h>

int main(void)
{
	fputs("kforge-worker: this build has no worker protocol yet\n", stderr);
	return 3;
}
