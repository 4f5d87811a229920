/* limen-documents — who sends a FUSE request, and which views it may use.
 *
 * The kernel tells the pid of the thread behind each request. A host process may use
 * every view (the root, by-app and each app's); a sandboxed app only its own
 * by-app/APPID. A process that cannot be identified may use none.
 *
 * Every new process (each `ls` a person runs) is identified at its first walk through a
 * gate. Where the kernel has pidfs (Linux 6.13 and later), a host process in the daemon's
 * own mount namespace and in a cgroup already seen to be no Snap's is told from its pidfd
 * alone (two ioctls): about a tenth of what reading its /proc entry costs.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fuse-private.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "app-info.h"
#include "proc-stat.h"

/* Identify @pid, started at @start, through the core: *@host, or *@app for an app.
 * The answer counts only if it is about the same process (no pid reuse in between). */
static void
identify_pid (pid_t pid, guint64 start, gboolean *host, char **app)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_pid (pid, &error);

  *host = FALSE;
  *app = NULL;
  if (info && limen_app_info_get_start_time (info) == start)
    {
      *host = limen_app_info_is_host (info);
      *app = *host ? NULL : g_strdup (limen_app_info_get_id (info));
    }
  else if (error)
    g_debug ("FUSE request from unidentifiable pid %d: %s", (int) pid, error->message);
}

/* The pidfd interface of Linux 6.9 (PIDFD_THREAD), 6.11 (PIDFD_GET_MNT_NAMESPACE) and
 * 6.13 (PIDFD_GET_INFO), which the build system's headers may lack. */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#define LIMEN_PIDFS_MAGIC 0x50494446
#define LIMEN_PIDFD_INFO_CGROUPID (1ULL << 2)
typedef struct {
  guint64 mask;
  guint64 cgroupid;
  guint32 pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  gint32  exit_code;
} LimenPidfdInfo;   /* the first version of struct pidfd_info, 64 bytes */
#define LIMEN_PIDFD_GET_MNT_NAMESPACE _IO (0xFF, 3)
#define LIMEN_PIDFD_GET_INFO _IOWR (0xFF, 11, LimenPidfdInfo)

/* May a process be taken for a plain host process without identify_pid? Not where test
 * harnesses name every caller's identity (only identify_pid follows that). */
static gboolean
is_plain_host_allowed (void)
{
#ifdef LIMEN_TEST_HOOKS
  return g_getenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND") == NULL;
#else
  return TRUE;
#endif
}

/* Is the process behind @proc_fd (its /proc entry) a host process that is no app of any
 * kind: its root holds no /.flatpak-info and its cgroup is no Snap's? That is the answer
 * identify_pid gives such a process, found with three reads of its /proc entry instead of
 * a whole identification (its status, its stat twice, errors made and logged). FALSE for
 * anything else, or when a read fails: identify_pid then decides. A reaped process's entry
 * answers nothing more, so what is read here is about the process @proc_fd was opened on. */
static gboolean
is_plain_host (int proc_fd)
{
  g_autofd int root = -1;
  g_autofd int cgroup = -1;
  char buf[4096];
  size_t len = 0;
  ssize_t n;
  struct stat st;

  if (!is_plain_host_allowed ())
    return FALSE;
  root = openat (proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0 || fstatat (root, ".flatpak-info", &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
    return FALSE;
  cgroup = openat (proc_fd, "cgroup", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (cgroup < 0)
    return FALSE;
  while ((n = read (cgroup, buf + len, sizeof buf - 1 - len)) > 0)
    len += n;
  if (n < 0 || len == sizeof buf - 1)
    return FALSE;   /* unread, or longer than a cgroup line of a real system */
  buf[len] = '\0';
  return !limen_cgroup_is_snap (buf);
}

/* A pidfd of the thread @pid (FUSE names the thread), with the token that names that
 * thread for as long as the system runs (its pidfs inode, tagged so that it never equals a
 * start time), or -1 where the kernel has no pidfs. */
static int
open_pidfd (pid_t pid, guint64 *token)
{
  struct statfs sfs;
  struct stat st;
  int pidfd = syscall (SYS_pidfd_open, pid, PIDFD_THREAD);

  if (pidfd < 0)
    return -1;
  if (fstatfs (pidfd, &sfs) != 0 || sfs.f_type != LIMEN_PIDFS_MAGIC || fstat (pidfd, &st) != 0)
    {
      close (pidfd);
      return -1;
    }
  *token = (guint64) st.st_ino | (G_GUINT64_CONSTANT (1) << 63);
  return pidfd;
}

/* The cgroup id of @pidfd's process, 0 when the kernel does not tell. */
static guint64
pidfd_cgroup (int pidfd)
{
  LimenPidfdInfo info = { .mask = LIMEN_PIDFD_INFO_CGROUPID };

  if (ioctl (pidfd, LIMEN_PIDFD_GET_INFO, &info) != 0 || !(info.mask & LIMEN_PIDFD_INFO_CGROUPID))
    return 0;
  return info.cgroupid;
}

/* Is @pidfd's process in the daemon's own mount namespace? Then it is no sandboxed app:
 * Flatpak and Snap run their apps in mount namespaces of their own, and a process that
 * joined one is no longer in ours. (One that chroot()s into a tree holding a /.flatpak-info
 * of its own, which identify_pid would believe, is a host process all the same.) */
static gboolean
pidfd_in_own_mount_ns (int pidfd)
{
  static struct stat own;
  static gsize own_read;
  g_autofd int ns = -1;
  struct stat st;

  if (g_once_init_enter (&own_read))
    {
      if (stat ("/proc/self/ns/mnt", &own) != 0)
        own.st_ino = 0;
      g_once_init_leave (&own_read, 1);
    }
  ns = ioctl (pidfd, LIMEN_PIDFD_GET_MNT_NAMESPACE, 0);
  return own.st_ino != 0 && ns >= 0 && fstat (ns, &st) == 0 && st.st_dev == own.st_dev && st.st_ino == own.st_ino;
}

/* Is @pidfd's process alive? (A pidfd becomes readable when its process exits.) */
static gboolean
pidfd_alive (int pidfd)
{
  struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

  return poll (&pfd, 1, 0) == 0;
}

/* Is @pidfd's process a plain host process, told without /proc: in our mount namespace,
 * in a cgroup already seen to be no Snap's, and still alive after both were read? */
static gboolean
pidfd_is_plain_host (LimenFuse *fs, int pidfd)
{
  return is_plain_host_allowed () && pidfd_in_own_mount_ns (pidfd) &&
         limen_fuse_pid_cache_cgroup_is_plain (fs->pids, pidfd_cgroup (pidfd)) && pidfd_alive (pidfd);
}

/* Identify the process @pid with its /proc entry: *@host, or *@app for an app; FALSE when
 * it is gone. With @pidfd (>= 0), of the same process, the cgroup of a plain host process
 * is remembered, and the answer counts only if the process is still alive after it: the
 * pid then still was its own while /proc was read. Without, only if the process started
 * at @expect_start. */
static gboolean
identify_by_proc (LimenFuse *fs, pid_t pid, int pidfd, guint64 expect_start, gboolean *host, char **app)
{
  char path[64];
  g_autofd int proc_fd = -1;
  guint64 start, cgroup = pidfd >= 0 ? pidfd_cgroup (pidfd) : 0;

  g_snprintf (path, sizeof path, "/proc/%d", (int) pid);
  proc_fd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (proc_fd < 0 || !limen_proc_stat_read_start_time_at (proc_fd, &start, NULL) || start == 0 ||
      (pidfd < 0 && start != expect_start))
    return FALSE;
  if (is_plain_host (proc_fd))
    {
      *host = TRUE;
      *app = NULL;
      /* Only when the process stayed in that cgroup while its name was read. */
      if (cgroup != 0 && pidfd_cgroup (pidfd) == cgroup)
        limen_fuse_pid_cache_set_cgroup_plain (fs->pids, cgroup);
    }
  else
    identify_pid (pid, start, host, app);
  return pidfd < 0 || pidfd_alive (pidfd);
}

/* *@host and *@app of the process @pid, remembered or found; FALSE when it is gone. */
static gboolean
identify_caller (LimenFuse *fs, pid_t pid, gint64 now, gboolean *host, char **app)
{
  guint64 token;
  g_autofd int pidfd = open_pidfd (pid, &token);

  if (pidfd < 0)
    {
      /* No pidfs: the process is named by its start time, read from /proc/PID/stat. */
      if ((token = limen_proc_stat_start_time (pid)) == 0)
        return FALSE;
    }
  if (limen_fuse_pid_cache_lookup (fs->pids, pid, token, now, host, app))
    return TRUE;
  if (pidfd >= 0 && pidfd_is_plain_host (fs, pidfd))
    {
      *host = TRUE;
      *app = NULL;
    }
  else if (!identify_by_proc (fs, pid, pidfd, token, host, app))
    return FALSE;
  limen_fuse_pid_cache_store (fs->pids, pid, token, now, *host, *app);
  return TRUE;
}

gboolean
limen_fuse_caller_allowed (LimenFuse *fs, fuse_req_t req, const char *view_app)
{
  pid_t pid = fuse_req_ctx (req)->pid;
  gboolean host = FALSE;
  g_autofree char *app = NULL;
  gint64 now = g_get_monotonic_time ();
  int recent;

  if (pid <= 0)
    return FALSE;
  recent = limen_fuse_pid_cache_check_recent (fs->pids, pid, now, view_app);
  if (recent >= 0)
    return recent;
  if (!identify_caller (fs, pid, now, &host, &app))
    return FALSE;
  if (host)
    return TRUE;
  return view_app != NULL && app != NULL && app[0] != '\0' && strcmp (app, view_app) == 0;
}

gboolean
limen_fuse_caller_known (LimenFuse *fs, pid_t pid)
{
  gint64 now = g_get_monotonic_time ();
  gboolean host = FALSE;
  g_autofree char *app = NULL;
  guint64 token;
  g_autofd int pidfd = -1;

  if (pid <= 0)
    return FALSE;
  if (limen_fuse_pid_cache_check_recent (fs->pids, pid, now, NULL) >= 0)
    return TRUE;
  /* What needs no /proc: a process known by its token, or a plain host one (a new `ls`). */
  if ((pidfd = open_pidfd (pid, &token)) < 0)
    return FALSE;
  if (limen_fuse_pid_cache_lookup (fs->pids, pid, token, now, &host, &app))
    return TRUE;
  if (!pidfd_is_plain_host (fs, pidfd))
    return FALSE;
  limen_fuse_pid_cache_store (fs->pids, pid, token, now, TRUE, NULL);
  return TRUE;
}

gboolean
limen_fuse_node_gate (LimenFuse *fs, fuse_req_t req, Node *node)
{
  if (node->kind == NODE_ROOT || node->kind == NODE_BY_APP)
    return limen_fuse_caller_allowed (fs, req, NULL);
  return limen_fuse_caller_allowed (fs, req, node->app);
}
