/*
 * Switchboard's `tmux` launcher in C, compiled by `switchboard compat install` where a C compiler
 * exists. Node alone takes longer to start than tmux takes to answer, and tools poll each pane
 * about 150 times a minute, so the common path is this: inside a pane, the pane's own socket and
 * token from its variables (never the runtime file, whose token is the owner's); elsewhere the
 * daemon's runtime file under $SWITCHBOARD_HOME or the real home from the user database, read
 * under the trust rule every reader follows (client/endpoint.ts); send argv, what tmux takes of
 * the environment from a client (client-env.ts), directory and whether stdin is a terminal as one
 * newline-delimited JSON-RPC `tmux_command` call over the daemon's Unix socket, print the reply and
 * exit with its code. Anything else (no daemon yet, a file the rule refuses, a pane without its
 * token or socket, a command that may start a server and so sends the whole environment, a daemon's
 * refusal) goes to the Node launcher, which handles every case and says what is wrong. The token
 * is read from the file or the pane's variable and sent on the socket, never put on a command line.
 *
 * Build: cc -O2 -DSB_NODE='"…/node"' -DSB_SCRIPT='"…/tmux-main.js"' -DSB_CLI='"…/main.js"' [-DSB_HOME='"…"'] -o tmux tmux-launcher.c
 *
 * On Linux x86_64 `compat install` first builds it without the C library (-DSB_NOLIBC, see
 * sys-nolibc.h): -O2 -static -nostdlib -fno-stack-protector -fno-pie -no-pie. glibc's start-up,
 * static or dynamic, asks the CPU about itself with dozens of `cpuid` instructions, and each one
 * is a trip to the hypervisor in a virtual machine (5.6 µs each on the bench machine, 0.3 to 0.4 ms
 * a run in all): more than the daemon takes to answer. Without the C library the program starts in
 * about 0.15 ms. Where that build fails, the ordinary one is used.
 */
#ifdef SB_NOLIBC
#include "sys-nolibc.h"
#else
#include "sys-libc.h"
#endif

/* Writes all of data to fd; -1 on an error. */
static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0) {
			if (interrupted())
				continue;
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

#ifndef SB_NODE
#define SB_NODE "node"
#endif
#ifndef SB_SCRIPT
#error "SB_SCRIPT (the Node launcher's path) must be defined"
#endif
#ifndef SB_CLI
#error "SB_CLI (the switchboard CLI script's path) must be defined"
#endif

/* The runtime file is small; anything larger is not ours. */
#define MAX_RUNTIME_FILE (64 * 1024)

struct buf {
	char *data;
	size_t len;
	size_t cap;
};

static void buf_put(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *next = realloc(b->data, cap);
		if (next == NULL) {
			say_error("out of memory");
			exit(1);
		}
		b->data = next;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

static const char hex_digits[] = "0123456789abcdef";

/* The value of a hex digit, or -1. */
static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The number in the (up to) four hex digits at p, as strtoul reads them. */
static unsigned long hex4(const char *p)
{
	unsigned long v = 0;
	int i, d;
	for (i = 0; i < 4 && (d = hex_value(p[i])) >= 0; i++)
		v = v * 16 + (unsigned long)d;
	return v;
}

/* Length of a valid UTF-8 sequence at s (of at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0 && s[0] >= 0xc2)
		len = 2;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3;
	else if ((s[0] & 0xf8) == 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* Appends s as a JSON string; bytes that are not UTF-8 become U+FFFD (the daemon reads strict UTF-8). */
static void json_string(struct buf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0;
	char esc[8];
	buf_put(b, "\"", 1);
	while (i < n) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			buf_put(b, esc, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			esc[0] = '\\';
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex_digits[c >> 4];
			esc[5] = hex_digits[c & 15];
			buf_put(b, esc, 6);
			i++;
		} else if (c < 0x80) {
			buf_put(b, (const char *)s + i, 1);
			i++;
		} else {
			size_t len = utf8_len(s + i, n - i);
			if (len == 0) {
				buf_str(b, "\\ufffd");
				i++;
			} else {
				buf_put(b, (const char *)s + i, len);
				i += len;
			}
		}
	}
	buf_put(b, "\"", 1);
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static void put_utf8(struct buf *out, unsigned long cp)
{
	char u[4];
	if (cp < 0x80) {
		u[0] = (char)cp;
		buf_put(out, u, 1);
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		buf_put(out, u, 2);
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		buf_put(out, u, 3);
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		buf_put(out, u, 4);
	}
}

/* Reads a JSON string at p (its opening quote) into out (if given); returns what follows, or NULL. */
static const char *parse_string(const char *p, struct buf *out)
{
	if (*p != '"')
		return NULL;
	p++;
	while (*p != '"') {
		if (*p == '\0')
			return NULL;
		if (*p != '\\') {
			const char *start = p;
			while (*p != '"' && *p != '\\' && *p != '\0')
				p++;
			if (out)
				buf_put(out, start, (size_t)(p - start));
			continue;
		}
		p++;
		char c = *p++;
		char one = 0;
		switch (c) {
		case '"': one = '"'; break;
		case '\\': one = '\\'; break;
		case '/': one = '/'; break;
		case 'b': one = '\b'; break;
		case 'f': one = '\f'; break;
		case 'n': one = '\n'; break;
		case 'r': one = '\r'; break;
		case 't': one = '\t'; break;
		case 'u': {
			unsigned long cp;
			if (strlen(p) < 4)
				return NULL;
			cp = hex4(p);
			p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && p[0] == '\\' && p[1] == 'u') {
				unsigned long lo = hex4(p + 2);
				if (lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				}
			}
			if (out)
				put_utf8(out, cp);
			continue;
		}
		default:
			return NULL;
		}
		if (out)
			buf_put(out, &one, 1);
	}
	return p + 1;
}

/* Skips any JSON value at p; returns what follows, or NULL. */
static const char *skip_value(const char *p)
{
	p = skip_ws(p);
	if (*p == '"')
		return parse_string(p, NULL);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		p = skip_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = parse_string(skip_ws(p), NULL);
				if (p == NULL)
					return NULL;
				p = skip_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = skip_value(p);
			if (p == NULL)
				return NULL;
			p = skip_ws(p);
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p == close)
				return p + 1;
			return NULL;
		}
	}
	while (*p != '\0' && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n')
		p++;
	return p;
}

/*
 * Walks a JSON object at p, calling on_key for each key; on_key reads the value (returning what
 * follows) or returns NULL to have it skipped.
 */
typedef const char *(*key_fn)(const char *key, const char *value, void *ctx);

static int walk_object(const char *p, key_fn on_key, void *ctx)
{
	struct buf key = {0};
	p = skip_ws(p);
	if (*p++ != '{')
		return -1;
	p = skip_ws(p);
	if (*p == '}')
		return 0;
	for (;;) {
		key.len = 0;
		p = parse_string(skip_ws(p), &key);
		if (p == NULL)
			return -1;
		p = skip_ws(p);
		if (*p++ != ':')
			return -1;
		p = skip_ws(p);
		const char *next = on_key(key.data ? key.data : "", p, ctx);
		p = next ? next : skip_value(p);
		if (p == NULL)
			return -1;
		p = skip_ws(p);
		if (*p == ',') {
			p++;
			continue;
		}
		free(key.data);
		return *p == '}' ? 0 : -1;
	}
}

struct runtime {
	struct buf socket;
	struct buf token;
};

static const char *runtime_key(const char *key, const char *value, void *ctx)
{
	struct runtime *rt = ctx;
	if (strcmp(key, "socket") == 0 && *value == '"')
		return parse_string(value, &rt->socket);
	if (strcmp(key, "token") == 0 && *value == '"')
		return parse_string(value, &rt->token);
	return NULL;
}

struct reply {
	int has_result;
	int is_error;
	struct buf out;
	struct buf err;
	struct buf attach;
	int exit_code;
	int need_stdin;
};

static const char *result_key(const char *key, const char *value, void *ctx)
{
	struct reply *r = ctx;
	if (strcmp(key, "stdout") == 0)
		return parse_string(value, &r->out);
	if (strcmp(key, "stderr") == 0)
		return parse_string(value, &r->err);
	if (strcmp(key, "attach") == 0 && *value == '"')
		return parse_string(value, &r->attach);
	if (strcmp(key, "exit_code") == 0) {
		int negative = *value == '-';
		const char *end = value + negative;
		long code = 0;
		for (; *end >= '0' && *end <= '9'; end++)
			if (code < 100000000)
				code = code * 10 + (*end - '0');
		r->exit_code = (int)(negative ? -code : code);
		return end;
	}
	if (strcmp(key, "need_stdin") == 0)
		r->need_stdin = strncmp(value, "true", 4) == 0;
	return NULL;
}

static const char *reply_key(const char *key, const char *value, void *ctx)
{
	struct reply *r = ctx;
	if (strcmp(key, "result") == 0 && *value == '{') {
		r->has_result = 1;
		if (walk_object(value, result_key, r) != 0)
			return NULL;
		return skip_value(value);
	}
	if (strcmp(key, "error") == 0)
		r->is_error = 1;
	return NULL;
}

static char **saved_argv;
static int saved_argc;
/* The Switchboard home; the Node launcher, if it takes over, and `switchboard attach` get the same. */
static const char *launcher_home;

/* Hands the whole invocation to the Node launcher, which handles every case. */
static void fallback(void)
{
	char **args = calloc((size_t)saved_argc + 3, sizeof *args);
	int i;
	if (args == NULL)
		exit(1);
	args[0] = (char *)SB_NODE;
	args[1] = (char *)SB_SCRIPT;
	for (i = 1; i < saved_argc; i++)
		args[i + 1] = saved_argv[i];
	exec_with_home(SB_NODE, args, launcher_home);
	say_error("cannot run " SB_NODE);
	exit(1);
}

/* Set when the runtime file can be read by others: said once, with the reply (client/endpoint.ts's words). */
static char *exposed_file;
static unsigned exposed_mode;

/*
 * Reads the runtime file under the trust rule of every reader: its folder this user's and
 * writable by no one else; the file not a link (O_NOFOLLOW), a regular file of this user's that no
 * one else can write, checked on the descriptor that is read. Readable by others: used, and
 * warned about. Anything refused goes to the Node launcher, which says what is wrong.
 */
static int read_runtime(const char *home, struct runtime *rt)
{
	struct buf path = {0}, text = {0};
	struct stat st;
	char chunk[4096];
	ssize_t n;
	int fd;
	if (lstat(home, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022) != 0)
		return -1;
	buf_str(&path, home);
	buf_str(&path, "/daemon.json");
	fd = open(path.data, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		free(path.data);
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022) != 0 || st.st_size > MAX_RUNTIME_FILE) {
		free(path.data);
		close(fd);
		return -1;
	}
	if ((st.st_mode & 044) != 0) {
		exposed_file = path.data;
		exposed_mode = (unsigned)(st.st_mode & 0777);
	} else {
		free(path.data);
	}
	while ((n = read(fd, chunk, sizeof chunk)) > 0)
		buf_put(&text, chunk, (size_t)n);
	close(fd);
	if (text.data == NULL || walk_object(text.data, runtime_key, rt) != 0) {
		free(text.data);
		return -1;
	}
	free(text.data);
	return rt->socket.data != NULL && rt->token.data != NULL ? 0 : -1;
}

/* A variable's value, or NULL when it says nothing: empty, or a reference its setter could not expand. */
static const char *usable_env(const char *name)
{
	const char *value = getenv(name);
	return value == NULL || *value == '\0' || *value == '$' ? NULL : value;
}

/*
 * Inside a pane (its id or the daemon's variables set): 1 with the pane's socket and token in rt,
 * -1 when either is missing (the Node launcher refuses, or calls over TCP), 0 outside every pane.
 */
static int pane_runtime(struct runtime *rt)
{
	static const char *const marks[] = {"SWITCHBOARD_PANE_ID", "SWITCHBOARD_RPC_HOST", "SWITCHBOARD_RPC_PORT", "SWITCHBOARD_RPC_SOCKET", "SWITCHBOARD_RPC_TOKEN", NULL};
	const char *const *mark;
	const char *socket_path = usable_env("SWITCHBOARD_RPC_SOCKET");
	const char *token = usable_env("SWITCHBOARD_RPC_TOKEN");
	int in_pane = 0;
	for (mark = marks; *mark != NULL; mark++)
		if (usable_env(*mark) != NULL)
			in_pane = 1;
	if (!in_pane)
		return 0;
	if (token == NULL)
		token = usable_env("ENSO_RPC_TOKEN");
	if (socket_path == NULL || token == NULL)
		return -1;
	buf_str(&rt->socket, socket_path);
	buf_str(&rt->token, token);
	return 1;
}

/* What tmux takes from a client that does not start its server (client-env.ts's TMUX_CLIENT_VARIABLES). */
static const char *const client_variables[] = {
	"DISPLAY", "KRB5CCNAME", "MSYSTEM", "SSH_ASKPASS", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "SSH_CONNECTION", "WINDOWID", "XAUTHORITY",
	"TERM", "TERM_PROGRAM", "COLORTERM",
	"TMUX", "TMUX_PANE", "TMUX_TMPDIR", "PWD", "HOME", "SHELL",
	NULL,
};

/* True when `word` names a command that starts a server: a prefix of its name, or its alias. */
static int names_starting_command(const char *word)
{
	static const char *const names[] = {"new-session", "start-server", "attach-session", NULL};
	static const char *const aliases[] = {"new", "start", "attach", NULL};
	size_t len = strlen(word);
	int i;
	if (len > 0 && word[len - 1] == ';')
		len--;
	if (len == 0)
		return 0;
	for (i = 0; names[i] != NULL; i++)
		if (strncmp(names[i], word, len) == 0 || (strlen(aliases[i]) == len && strncmp(aliases[i], word, len) == 0))
			return 1;
	return 0;
}

/*
 * Whether the command line may start a tmux server, and so must send the whole environment (the
 * server's global environment): no command at all, or any word that could name such a command.
 * It errs towards yes, which only costs the Node launcher's start; the Node launcher decides
 * exactly, with the command table.
 */
static int may_start_server(int argc, char **argv)
{
	int i = 1, words = 0;
	for (; i < argc; i++) {
		const char *arg = argv[i];
		size_t j;
		if (strcmp(arg, "--") == 0) {
			i++;
			break;
		}
		if (arg[0] != '-' || arg[1] == '\0')
			break;
		for (j = 1; arg[j] != '\0'; j++) {
			if (strchr("cfLST", arg[j]) != NULL) {
				if (arg[j + 1] == '\0')
					i++;
				break;
			}
		}
	}
	for (; i < argc; i++, words++)
		if (names_starting_command(argv[i]))
			return 1;
	return words == 0;
}

static int connect_socket(const char *path)
{
	struct sockaddr_un addr;
	int fd;
	if (strlen(path) >= sizeof addr.sun_path)
		return -1;
	memset(&addr, 0, sizeof addr);
	addr.sun_family = AF_UNIX;
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One call: the request out, one reply line back. */
static int call(const struct runtime *rt, const struct buf *request, struct reply *r)
{
	struct buf line = {0};
	char chunk[65536];
	int fd = connect_socket(rt->socket.data);
	if (fd < 0)
		return -1;
	if (write_all(fd, request->data, request->len) != 0) {
		close(fd);
		return -1;
	}
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && interrupted())
			continue;
		if (n <= 0)
			break;
		buf_put(&line, chunk, (size_t)n);
		if (memchr(chunk, '\n', (size_t)n) != NULL)
			break;
	}
	close(fd);
	if (line.data == NULL || walk_object(line.data, reply_key, r) != 0 || !r->has_result || r->is_error) {
		free(line.data);
		return -1;
	}
	free(line.data);
	return 0;
}

static void build_request(struct buf *b, const struct runtime *rt, int argc, char **argv, const struct buf *stdin_data)
{
	char *cwd = current_dir();
	const char *const *name;
	int i;
	buf_str(b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tmux_command\",\"params\":{\"token\":");
	json_string(b, rt->token.data);
	buf_str(b, ",\"argv\":[");
	for (i = 1; i < argc; i++) {
		if (i > 1)
			buf_str(b, ",");
		json_string(b, argv[i]);
	}
	buf_str(b, "],\"env\":{");
	/* Only what tmux takes from a client that starts no server: a line that may start one went to the Node launcher. */
	for (name = client_variables, i = 0; *name != NULL; name++) {
		const char *value = getenv(*name);
		if (value == NULL)
			continue;
		if (i++ > 0)
			buf_str(b, ",");
		json_string(b, *name);
		buf_str(b, ":");
		json_string(b, value);
	}
	buf_str(b, "},\"cwd\":");
	json_string(b, cwd != NULL ? cwd : "/");
	free(cwd);
	buf_str(b, isatty(0) ? ",\"tty\":true" : ",\"tty\":false");
	if (stdin_data != NULL) {
		buf_str(b, ",\"stdin\":");
		json_string(b, stdin_data->data != NULL ? stdin_data->data : "");
	}
	buf_str(b, "}}\n");
}

static const char *switchboard_home(void)
{
	const char *env = getenv("SWITCHBOARD_HOME");
	if (env != NULL && *env != '\0')
		return env;
#ifdef SB_HOME
	return SB_HOME;
#else
	static struct buf home;
	/* The real home from the user database: tools rewrite $HOME for the programs they start. */
	const char *dir = user_home();
	if (dir == NULL)
		return NULL;
	buf_str(&home, dir);
	buf_str(&home, "/.switchboard");
	return home.data;
#endif
}

int main(int argc, char **argv)
{
	struct runtime rt = {0};
	struct buf request = {0};
	struct reply r = {0};
	const char *home;

	saved_argc = argc;
	saved_argv = argv;
	home = switchboard_home();
	/* The Node launcher, if it takes over, must use the same home (one built in here, say). */
	launcher_home = home;
	if (may_start_server(argc, argv))
		fallback();
	switch (pane_runtime(&rt)) {
	case 1:
		break;
	case 0:
		if (home == NULL || read_runtime(home, &rt) != 0)
			fallback();
		break;
	default:
		fallback();
	}
	build_request(&request, &rt, argc, argv, NULL);
	if (call(&rt, &request, &r) != 0)
		fallback();
	if (r.need_stdin) {
		struct buf in = {0};
		char chunk[65536];
		ssize_t n;
		while ((n = read(0, chunk, sizeof chunk)) > 0)
			buf_put(&in, chunk, (size_t)n);
		request.len = 0;
		build_request(&request, &rt, argc, argv, &in);
		memset(&r, 0, sizeof r);
		if (call(&rt, &request, &r) != 0)
			fallback();
	}
	if (exposed_file != NULL) {
		struct buf warning = {0};
		char mode[3] = {(char)('0' + ((exposed_mode >> 6) & 7)), (char)('0' + ((exposed_mode >> 3) & 7)), (char)('0' + (exposed_mode & 7))};
		buf_str(&warning, "switchboard: warning: the runtime file ");
		buf_str(&warning, exposed_file);
		buf_str(&warning, " can be read by other users (mode ");
		buf_put(&warning, mode, 3);
		buf_str(&warning, "), so they can take the daemon's owner token from it; make it private: chmod 600 ");
		buf_str(&warning, exposed_file);
		buf_str(&warning, "\n");
		write_all(2, warning.data, warning.len);
	}
	if (r.out.len > 0)
		write_all(1, r.out.data, r.out.len);
	if (r.err.len > 0)
		write_all(2, r.err.data, r.err.len);
	/* attach-session: this terminal becomes the pane, through `switchboard attach`. */
	if (r.attach.data != NULL && r.exit_code == 0) {
		char *args[] = {(char *)SB_NODE, (char *)SB_CLI, (char *)"--home", (char *)home, (char *)"attach", r.attach.data, NULL};
		exec_with_home(SB_NODE, args, home);
		say_error("cannot run " SB_NODE);
		return 1;
	}
	return r.exit_code;
}
