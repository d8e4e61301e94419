/*
 * The few system services tmux-launcher.c uses, over the C library: the portable build (macOS, the
 * BSDs, Linux on any processor). sys-nolibc.h gives the same names without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

/* True when the last failed call was interrupted by a signal. */
static int interrupted(void)
{
	return errno == EINTR;
}

/* The directory this runs in (to free), or NULL. */
static char *current_dir(void)
{
	return getcwd(NULL, 0);
}

/* Writes all of data to fd (tmux-launcher.c, for both builds); -1 on an error. */
static int write_all(int fd, const char *data, size_t len);

/* Says why `what` failed (the last call's error) on stderr. */
static void say_error(const char *what)
{
	const char *why = strerror(errno);
	write_all(2, "tmux: ", 6);
	write_all(2, what, strlen(what));
	write_all(2, ": ", 2);
	write_all(2, why, strlen(why));
	write_all(2, "\n", 1);
}

/* Runs `path` with `args`, with SWITCHBOARD_HOME set to `home` (when given); returns only on failure. */
static void exec_with_home(const char *path, char **args, const char *home)
{
	if (home != NULL)
		setenv("SWITCHBOARD_HOME", home, 1);
	execv(path, args);
}

/* The home folder of the user running this, from the user database, or NULL. */
__attribute__((unused)) static const char *user_home(void)
{
	struct passwd *pw = getpwuid(getuid());
	return pw == NULL ? NULL : pw->pw_dir;
}
