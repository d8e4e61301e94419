/*
 * Descriptor flags Node.js does not expose: close-on-exec. node-pty 1.1.0 leaves the master side of
 * every PTY it opens inheritable (forkpty returns it without FD_CLOEXEC; microsoft/node-pty#657), so
 * every later child of the daemon, every later pane included, would hold every earlier pane's
 * terminal and could type into it. Switchboard marks each master close-on-exec right after the
 * spawn, on the same thread, before anything else can fork.
 *
 * Also the process on the other end of a local socket (SO_PEERCRED on Linux, LOCAL_PEERPID on
 * macOS): the daemon judges a caller by where it runs, not only by the token it shows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <node_api.h>
#ifdef __APPLE__
#include <sys/un.h>
#endif

static napi_value throw_errno(napi_env env, const char *what, int err) {
  char message[128];
  snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  napi_throw_error(env, NULL, message);
  return NULL;
}

static int fd_argument(napi_env env, napi_callback_info info, int *fd) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) return 0;
  int32_t value;
  if (napi_get_value_int32(env, argv[0], &value) != napi_ok || value < 0) return 0;
  *fd = value;
  return 1;
}

/* setCloseOnExec(fd): sets FD_CLOEXEC on fd. */
static napi_value set_close_on_exec(napi_env env, napi_callback_info info) {
  int fd;
  if (!fd_argument(env, info, &fd)) {
    napi_throw_type_error(env, NULL, "setCloseOnExec(fd): fd must be a descriptor number");
    return NULL;
  }
  int flags = fcntl(fd, F_GETFD);
  if (flags == -1) return throw_errno(env, "fcntl(F_GETFD)", errno);
  if ((flags & FD_CLOEXEC) == 0 && fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == -1) return throw_errno(env, "fcntl(F_SETFD)", errno);
  napi_value result;
  napi_get_undefined(env, &result);
  return result;
}

/* isCloseOnExec(fd): whether FD_CLOEXEC is set on fd. */
static napi_value is_close_on_exec(napi_env env, napi_callback_info info) {
  int fd;
  if (!fd_argument(env, info, &fd)) {
    napi_throw_type_error(env, NULL, "isCloseOnExec(fd): fd must be a descriptor number");
    return NULL;
  }
  int flags = fcntl(fd, F_GETFD);
  if (flags == -1) return throw_errno(env, "fcntl(F_GETFD)", errno);
  napi_value result;
  napi_get_boolean(env, (flags & FD_CLOEXEC) != 0, &result);
  return result;
}

/* peerPid(fd): the process id of the peer of a connected local socket (as it was at connect), or -1 where the OS does not tell. */
static napi_value peer_pid(napi_env env, napi_callback_info info) {
  int fd;
  if (!fd_argument(env, info, &fd)) {
    napi_throw_type_error(env, NULL, "peerPid(fd): fd must be a descriptor number");
    return NULL;
  }
  int32_t pid = -1;
#if defined(SO_PEERCRED) && defined(__linux__)
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) return throw_errno(env, "getsockopt(SO_PEERCRED)", errno);
  pid = cred.pid > 0 ? (int32_t)cred.pid : -1;
#elif defined(__APPLE__) && defined(LOCAL_PEERPID)
  pid_t peer = 0;
  socklen_t len = sizeof peer;
  if (getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, &peer, &len) == -1) return throw_errno(env, "getsockopt(LOCAL_PEERPID)", errno);
  pid = peer > 0 ? (int32_t)peer : -1;
#endif
  napi_value result;
  napi_create_int32(env, pid, &result);
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
    { "setCloseOnExec", NULL, set_close_on_exec, NULL, NULL, NULL, napi_default, NULL },
    { "isCloseOnExec", NULL, is_close_on_exec, NULL, NULL, NULL, napi_default, NULL },
    { "peerPid", NULL, peer_pid, NULL, NULL, NULL, napi_default, NULL },
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
