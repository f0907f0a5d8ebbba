/* Write where the invoking user may: /etc/passwd, ~/.bashrc, the kforge binary, a world-writable
 * folder, /dev/shm (the replay trick of GPU MODE's competitions); link, rename, truncate there. */
#include "redteam.h"

#include <pwd.h>

static void rt_attack(void)
{
	const struct passwd *pw = getpwuid(getuid());
	char bashrc[512];

	rt_try_write_open("/etc/passwd", 0);
	rt_try_write_open(RT_HOME "/.bashrc", 0);
	if (pw && pw->pw_dir) {
		snprintf(bashrc, sizeof(bashrc), "%s/.bashrc", pw->pw_dir);
		rt_try_write_open(bashrc, 0);
	}
	rt_try_write_open(RT_KFORGE, 0);
	rt_try_write_open(RT_OUTSIDE "/created", O_CREAT);
	rt_try_write_open("/dev/shm/kforge-redteam", O_CREAT);
	rt_try_write_open("/tmp/kforge-redteam-tmp", O_CREAT);
	if (symlink("/etc/passwd", RT_OUTSIDE "/link") == 0)
		RT_BREACH("made a symlink in %s", RT_OUTSIDE);
	if (mkdir(RT_OUTSIDE "/dir", 0700) == 0)
		RT_BREACH("made a folder in %s", RT_OUTSIDE);
	if (rename(RT_OUTSIDE "/victim", RT_OUTSIDE "/renamed") == 0)
		RT_BREACH("renamed a file in %s", RT_OUTSIDE);
	if (truncate(RT_OUTSIDE "/victim", 0) == 0)
		RT_BREACH("truncated a file in %s", RT_OUTSIDE);
	if (unlink(RT_OUTSIDE "/victim") == 0)
		RT_BREACH("removed a file in %s", RT_OUTSIDE);
}
