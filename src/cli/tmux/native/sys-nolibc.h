/*
 * The few system services tmux-launcher.c uses, as Linux system calls, for the build without the C
 * library (x86_64 only: -DSB_NOLIBC -static -nostdlib -fno-stack-protector -fno-pie -no-pie). It
 * exists for speed: glibc's start-up runs dozens of `cpuid` instructions, each a trip to the
 * hypervisor in a virtual machine, before main. The C library's headers are used for types and
 * constants only; nothing of the library is linked. Memory is one mapping per buffer (the launcher
 * holds a handful), grown with mremap.
 */
#if !defined(__linux__) || !defined(__x86_64__)
#error "the launcher builds without the C library only on Linux x86_64"
#endif

#define _GNU_SOURCE /* mremap */
#include <fcntl.h>
#include <stddef.h>
#include <asm/ioctls.h>
#include <linux/errno.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>

#define NULL_ENV ((char **)0)

static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
	return ret;
}

#define sys3(n, a, b, c) sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)

/* The environment, from the stack at start. */
static char **sb_environ;

/* The last call's error (a positive errno), for say_error. */
static long sb_errno;

static long sb_result(long ret)
{
	if (ret < 0 && ret > -4096) {
		sb_errno = -ret;
		return -1;
	}
	return ret;
}

/* GCC may call these for copies and clears it writes itself, so they keep their usual names. */
void *memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	while (n--)
		*d++ = *s++;
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	if (d < s) {
		while (n--)
			*d++ = *s++;
	} else {
		while (n--)
			d[n] = s[n];
	}
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	for (; n > 0; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	const char *p = s;
	while (*p)
		p++;
	return (size_t)(p - s);
}

static int sb_strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

static int sb_strncmp(const char *a, const char *b, size_t n)
{
	for (; n > 0; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (*a == '\0')
			return 0;
	}
	return 0;
}

static char *sb_strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (*s == '\0')
			return NULL;
	}
}

static void *sb_memchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;
	for (; n > 0; n--, p++)
		if (*p == (unsigned char)c)
			return (void *)p;
	return NULL;
}

static char *sb_strcpy(char *dst, const char *src)
{
	memcpy(dst, src, strlen(src) + 1);
	return dst;
}

static char *sb_getenv(const char *name)
{
	size_t len = strlen(name);
	char **e;
	for (e = sb_environ; e != NULL && *e != NULL; e++)
		if (sb_strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

static __attribute__((noreturn)) void sb_exit(int code)
{
	for (;;)
		sys3(SYS_exit_group, code, 0, 0);
}

/* Each block is its own mapping, its size in the 16 bytes before it. */
#define BLOCK_HEAD 16

static void *sb_realloc(void *old, size_t n)
{
	size_t size = (n + BLOCK_HEAD + 4095) & ~(size_t)4095;
	long p;
	if (old == NULL)
		p = sys6(SYS_mmap, 0, (long)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	else
		p = sys6(SYS_mremap, (long)((char *)old - BLOCK_HEAD), (long)*(size_t *)((char *)old - BLOCK_HEAD), (long)size, MREMAP_MAYMOVE, 0, 0);
	if (p < 0 && p > -4096)
		return NULL;
	*(size_t *)p = size;
	return (char *)p + BLOCK_HEAD;
}

/* Fresh mappings are zeroed. */
static void *sb_calloc(size_t count, size_t size)
{
	return sb_realloc(NULL, count * size);
}

static void sb_free(void *p)
{
	if (p != NULL)
		sys3(SYS_munmap, (char *)p - BLOCK_HEAD, *(size_t *)((char *)p - BLOCK_HEAD), 0);
}

static ssize_t sb_read(int fd, void *buf, size_t n)
{
	return sb_result(sys3(SYS_read, fd, buf, n));
}

static ssize_t sb_write(int fd, const void *buf, size_t n)
{
	return sb_result(sys3(SYS_write, fd, buf, n));
}

static int sb_open(const char *path, int flags)
{
	return (int)sb_result(sys6(SYS_openat, AT_FDCWD, (long)path, flags, 0, 0, 0));
}

static int sb_close(int fd)
{
	return (int)sb_result(sys3(SYS_close, fd, 0, 0));
}

/* glibc's struct stat is the kernel's on x86_64. */
static int sb_lstat(const char *path, struct stat *st)
{
	return (int)sb_result(sys6(SYS_newfstatat, AT_FDCWD, (long)path, (long)st, AT_SYMLINK_NOFOLLOW, 0, 0));
}

static int sb_fstat(int fd, struct stat *st)
{
	return (int)sb_result(sys3(SYS_fstat, fd, st, 0));
}

static uid_t sb_getuid(void)
{
	return (uid_t)sys3(SYS_getuid, 0, 0, 0);
}

static int sb_isatty(int fd)
{
	/* struct termios as the kernel fills it is 36 bytes. */
	char termios[64];
	return sys3(SYS_ioctl, fd, TCGETS, termios) == 0;
}

static int sb_socket(int domain, int type, int protocol)
{
	return (int)sb_result(sys3(SYS_socket, domain, type, protocol));
}

static int sb_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	return (int)sb_result(sys3(SYS_connect, fd, addr, len));
}

#define strcmp sb_strcmp
#define strncmp sb_strncmp
#define strchr sb_strchr
#define memchr sb_memchr
#define strcpy sb_strcpy
#define getenv sb_getenv
#define exit sb_exit
#define realloc sb_realloc
#define calloc sb_calloc
#define free sb_free
#define read sb_read
#define write sb_write
#define open(path, flags) sb_open(path, flags)
#define close sb_close
#define lstat sb_lstat
#define fstat sb_fstat
#define getuid sb_getuid
#define isatty sb_isatty
#define socket sb_socket
#define connect sb_connect

/* True when the last failed call was interrupted by a signal. */
static int interrupted(void)
{
	return sb_errno == EINTR;
}

/* Writes all of data to fd (tmux-launcher.c, for both builds); -1 on an error. */
static int write_all(int fd, const char *data, size_t len);

/* Says why `what` failed (the last call's error, by number: there is no strerror here) on stderr. */
static void say_error(const char *what)
{
	char num[24];
	size_t i = sizeof num;
	long e = sb_errno;
	num[--i] = '\n';
	do {
		num[--i] = (char)('0' + e % 10);
		e /= 10;
	} while (e > 0 && i > 0);
	write_all(2, "tmux: ", 6);
	write_all(2, what, strlen(what));
	write_all(2, ": error ", 8);
	write_all(2, num + i, sizeof num - i);
}

/* The directory this runs in, or NULL; the kernel's answer is at most a page. */
static char *current_dir(void)
{
	char *buf = realloc(NULL, 4096);
	if (buf == NULL || sb_result(sys3(SYS_getcwd, buf, 4096, 0)) < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Runs `path` with `args`, with SWITCHBOARD_HOME set to `home` (when given); returns only on failure. */
static void exec_with_home(const char *path, char **args, const char *home)
{
	char **env = sb_environ;
	if (home != NULL) {
		size_t n = 0, i, j = 0, len = strlen(home);
		char *entry;
		while (sb_environ != NULL && sb_environ[n] != NULL)
			n++;
		env = calloc(n + 2, sizeof *env);
		entry = calloc(len + sizeof "SWITCHBOARD_HOME=", 1);
		if (env == NULL || entry == NULL)
			return;
		memcpy(entry, "SWITCHBOARD_HOME=", sizeof "SWITCHBOARD_HOME=" - 1);
		memcpy(entry + sizeof "SWITCHBOARD_HOME=" - 1, home, len);
		env[j++] = entry;
		for (i = 0; i < n; i++)
			if (sb_strncmp(sb_environ[i], "SWITCHBOARD_HOME=", sizeof "SWITCHBOARD_HOME=" - 1) != 0)
				env[j++] = sb_environ[i];
	}
	sb_result(sys3(SYS_execve, path, args, env));
}

/*
 * The home folder of the user running this, from /etc/passwd, or NULL (a user only a network
 * directory knows, say: the Node launcher asks the whole user database).
 */
__attribute__((unused)) static const char *user_home(void)
{
	static char *text;
	size_t len = 0, cap = 0;
	char uid[24], *line;
	size_t ui = sizeof uid;
	unsigned long u = (unsigned long)getuid();
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t n;
		if (len + 4097 > cap) {
			char *next = realloc(text, cap = cap ? cap * 2 : 65536);
			if (next == NULL) {
				close(fd);
				return NULL;
			}
			text = next;
		}
		n = read(fd, text + len, cap - len - 1);
		if (n < 0 && interrupted())
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (text == NULL)
		return NULL;
	text[len] = '\0';
	uid[--ui] = '\0';
	do {
		uid[--ui] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	/* name:password:uid:gid:gecos:home:shell */
	for (line = text; *line != '\0';) {
		char *end = sb_strchr(line, '\n'), *field[7];
		int count = 0;
		char *p = line;
		if (end != NULL)
			*end = '\0';
		field[count++] = p;
		while (count < 7 && (p = sb_strchr(p, ':')) != NULL) {
			*p++ = '\0';
			field[count++] = p;
		}
		if (count >= 6 && sb_strcmp(field[2], uid + ui) == 0 && field[5][0] == '/')
			return field[5];
		if (end == NULL)
			break;
		line = end + 1;
	}
	return NULL;
}

int main(int argc, char **argv);

/* The kernel's entry: argc, then argv, then the environment, on the stack. */
__attribute__((used)) static void sb_start(long *sp)
{
	int argc = (int)sp[0];
	char **argv = (char **)(sp + 1);
	sb_environ = argv + argc + 1;
	sb_exit(main(argc, argv));
}

__asm__(".text\n"
	".global _start\n"
	"_start:\n"
	"	xor %rbp, %rbp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call sb_start\n"
	"	hlt\n");
