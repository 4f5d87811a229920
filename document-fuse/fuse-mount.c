/* limen-documents — the mount's life: mount, the FUSE loop, unmount, stale mounts, and
 * recognising files of our own mount without a request to it.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fuse-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

LimenFuse *
limen_fuse_new (LimenDocModel *model, const char *mountpoint)
{
  LimenFuse *fs = g_new0 (LimenFuse, 1);

  fs->model = model;
  fs->mountpoint = g_strdup (mountpoint);
  g_mutex_init (&fs->lock);
  g_mutex_init (&fs->seen_lock);
  g_mutex_init (&fs->done_lock);
  g_cond_init (&fs->done_cond);
  g_cond_init (&fs->release_cond);
  fs->inodes = g_hash_table_new (g_direct_hash, g_direct_equal);
  fs->by_key = g_hash_table_new (g_str_hash, g_str_equal);
  fs->by_doc = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_ptr_array_unref);
  fs->app_dirs = g_ptr_array_new ();
  fs->pids = limen_fuse_pid_cache_new ();
  fs->next_ino = FUSE_ROOT_ID;
  g_mutex_lock (&fs->lock);
  fs->root = limen_fuse_node_new_locked (fs, NODE_ROOT, NULL, NULL, NULL, NULL, -1);
  fs->root->ref = 1;
  fs->by_app = limen_fuse_node_new_locked (fs, NODE_BY_APP, NULL, NULL, NULL, fs->root, -1);
  fs->by_app->ref = 1;
  g_mutex_unlock (&fs->lock);
  fs->inval_queue = g_async_queue_new ();
#ifdef LIMEN_TEST_HOOKS
  fs->status_file = g_strdup (g_getenv ("TEST_DOCUMENT_PORTAL_FUSE_STATUS"));
  if (fs->status_file && fs->status_file[0] == '\0')
    g_clear_pointer (&fs->status_file, g_free);
#endif
  limen_doc_model_set_changed_func (model, limen_fuse_on_doc_changed, fs);
  return fs;
}

void
limen_fuse_set_lost_func (LimenFuse *fs, LimenFuseLostFunc func, gpointer user_data)
{
  fs->lost_func = func;
  fs->lost_data = user_data;
}

const char *
limen_fuse_get_mountpoint (LimenFuse *fs)
{
  return fs->mountpoint;
}

/* The device of whatever is mounted exactly at @path, from mountinfo (no stat, which
 * could wait on a dead FUSE server); 0 when nothing is. */
static dev_t
mounted_dev_full (const char *path, gboolean *is_fuse, int *mnt_id)
{
  g_autofree char *mountinfo = NULL;
  g_auto(GStrv) lines = NULL;
  dev_t dev = 0;

  if (is_fuse)
    *is_fuse = FALSE;
  if (!g_file_get_contents ("/proc/self/mountinfo", &mountinfo, NULL, NULL))
    return 0;
  lines = g_strsplit (mountinfo, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], " ", -1);
      unsigned maj, min;
      guint n = g_strv_length (f);

      if (n < 7 || sscanf (f[2], "%u:%u", &maj, &min) != 2)
        continue;
      {
        g_autofree char *mp = g_strcompress (f[4]);

        /* mountinfo escapes spaces as \040: g_strcompress undoes octal escapes. */
        if (strcmp (mp, path) != 0)
          continue;
      }
      dev = makedev (maj, min);
      if (mnt_id)
        *mnt_id = atoi (f[0]);
      if (is_fuse)
        for (guint j = 6; j + 1 < n; j++)
          if (strcmp (f[j], "-") == 0)
            *is_fuse = g_str_has_prefix (f[j + 1], "fuse");
    }
  return dev;
}

static dev_t
mounted_dev (const char *path, gboolean *is_fuse)
{
  return mounted_dev_full (path, is_fuse, NULL);
}

gboolean
limen_fuse_mountpoint_in_use (LimenFuse *fs)
{
  return mounted_dev (fs->mountpoint, NULL) != 0;
}

/* Test harnesses (the reference's among them) wait for the FUSE loop's end status in
 * the file named by TEST_DOCUMENT_PORTAL_FUSE_STATUS: "ok", or what went wrong. */
static void
write_loop_status (LimenFuse *fs, int res)
{
#ifdef LIMEN_TEST_HOOKS
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  if (fs->status_file == NULL)
    return;
  text = res == 0 ? g_strdup ("ok") : g_strdup_printf ("FUSE loop ended with an error: %s", g_strerror (ABS (res)));
  if (!g_file_set_contents (fs->status_file, text, -1, &error))
    g_warning ("Cannot write the FUSE status: %s", error->message);
#endif
}

/* Main thread: the loop ended without limen_fuse_stop (the mount was taken away). */
static gboolean
report_lost (gpointer user_data)
{
  LimenFuse *fs = user_data;

  g_message ("The document filesystem at %s was unmounted", fs->mountpoint);
  fs->mounted = FALSE;
  if (fs->lost_func)
    fs->lost_func (fs->lost_data);
  return G_SOURCE_REMOVE;
}

static gpointer
loop_thread_func (gpointer user_data)
{
  LimenFuse *fs = user_data;
  gboolean stopping;
  int res;

  /* Ends when we exit the session, or when the kernel ends the connection: an unmount
   * (fusermount3 -u) or an abort through /sys/fs/fuse/connections. */
  res = limen_fuse_loop_run (fs);
  write_loop_status (fs, res);
  g_mutex_lock (&fs->done_lock);
  fs->loop_done = TRUE;
  stopping = fs->stopping;
  g_cond_signal (&fs->done_cond);
  g_mutex_unlock (&fs->done_lock);
  if (!stopping)
    g_main_context_invoke (NULL, report_lost, fs);
  return NULL;
}

static void
unmount_stale (const char *mountpoint)
{
  gboolean is_fuse = FALSE;

  while (mounted_dev (mountpoint, &is_fuse) != 0 && is_fuse)
    {
      g_autoptr(GError) error = NULL;
      const char *argv[] = { "fusermount3", "-u", "-z", mountpoint, NULL };
      int status = 0;

      g_message ("Unmounting a stale filesystem at %s", mountpoint);
      if (umount2 (mountpoint, MNT_DETACH) == 0)
        continue;
      if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                         NULL, NULL, NULL, NULL, &status, &error) || !g_spawn_check_wait_status (status, NULL))
        {
          g_warning ("Could not unmount %s: %s", mountpoint, error ? error->message : "fusermount3 failed");
          return;
        }
    }
}

gboolean
limen_fuse_start (LimenFuse *fs, GError **error)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  struct fuse_args args;

  unmount_stale (fs->mountpoint);
  if (g_mkdir_with_parents (fs->mountpoint, 0700) != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "Cannot create %s: %s",
                   fs->mountpoint, g_strerror (errno));
      return FALSE;
    }

  g_ptr_array_add (argv, (char *) "limen-documents");
  g_ptr_array_add (argv, (char *) "-o");
  /* Root's mount would otherwise be closed to sandboxes in their own user namespace. */
  g_ptr_array_add (argv, (char *) (geteuid () == 0 ? "fsname=portal,subtype=limen,allow_other"
                                                   : "fsname=portal,subtype=limen"));
  g_ptr_array_add (argv, NULL);
  args.argc = argv->len - 1;
  args.argv = (char **) argv->pdata;
  args.allocated = 0;

  fs->se = fuse_session_new (&args, &limen_fuse_lowlevel_ops, sizeof limen_fuse_lowlevel_ops, fs);
  fuse_opt_free_args (&args);
  if (fs->se == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "Cannot create the FUSE session");
      return FALSE;
    }
  if (fuse_session_mount (fs->se, fs->mountpoint) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "Cannot mount the document filesystem at %s",
                   fs->mountpoint);
      fuse_session_destroy (fs->se);
      fs->se = NULL;
      return FALSE;
    }
  fs->mounted = TRUE;
  fs->dev = mounted_dev_full (fs->mountpoint, NULL, &fs->mnt_id);
  limen_fuse_inval_start (fs);
  fs->loop_thread = g_thread_new ("limen-fuse", loop_thread_func, fs);
  g_debug ("Document filesystem mounted at %s (dev %u:%u)", fs->mountpoint, major (fs->dev), minor (fs->dev));
  return TRUE;
}

void
limen_fuse_stop (LimenFuse *fs)
{
  gint64 deadline;
  gboolean done;

  limen_doc_model_set_changed_func (fs->model, NULL, NULL);
  /* Workers waiting for the import to bring a document in answer at once: the main thread,
   * here, serves them no more. */
  limen_doc_model_stop_waiting (fs->model);
  g_mutex_lock (&fs->done_lock);
  fs->stopping = TRUE;
  g_mutex_unlock (&fs->done_lock);
  if (fs->se)
    {
      char abort_path[64];

      fuse_session_exit (fs->se);
      /* Abort the connection first: open files then fail at once instead of keeping the
       * filesystem (and our worker threads) busy; then detach the mount. */
      g_snprintf (abort_path, sizeof abort_path, "/sys/fs/fuse/connections/%u/abort", minor (fs->dev));
      if (fs->dev)
        g_file_set_contents (abort_path, "1", 1, NULL);
      /* Lazy for root, fusermount3 -u -z otherwise; but only while the mount there is
       * still ours: after --replace the successor has mounted its own in its place. */
      if (mounted_dev (fs->mountpoint, NULL) == fs->dev)
        fuse_session_unmount (fs->se);
      else
        g_debug ("%s is no longer our mount; leaving it alone", fs->mountpoint);
      fs->mounted = FALSE;
    }
  limen_fuse_inval_stop (fs);

  /* Bounded wait: a worker stuck in the kernel must not keep the daemon alive. */
  deadline = g_get_monotonic_time () + 400 * G_TIME_SPAN_MILLISECOND;
  g_mutex_lock (&fs->done_lock);
  while (fs->loop_thread && !fs->loop_done)
    if (!g_cond_wait_until (&fs->done_cond, &fs->done_lock, deadline))
      break;
  done = fs->loop_done || fs->loop_thread == NULL;
  g_mutex_unlock (&fs->done_lock);
  if (done)
    {
      if (fs->loop_thread)
        g_thread_join (fs->loop_thread);
      if (fs->inval_thread)
        g_thread_join (fs->inval_thread);
      if (fs->se)
        fuse_session_destroy (fs->se);
      /* Nodes and the rest die with the process; nothing else refers to them now. */
    }
  else
    g_warning ("FUSE workers did not stop in time; leaving them to the exit");
}

/* @fd's node, found by the inode number the kernel reports (@ino): for a file reached
 * through a bind mount of ours (a sandbox's /run/user/UID/doc), whose path says nothing.
 * Sets the same as limen_fuse_identify_fd for a document's folder or own entry. */
static void
identify_by_node (LimenFuse *fs, guint64 ino, LimenDoc **doc, char **app, gboolean *is_doc_entry)
{
  Node *node = limen_fuse_node_get (fs, (fuse_ino_t) ino);

  if (node && node->doc && (node->kind == NODE_DOC_DIR || (node->kind == NODE_FILE && node->is_doc_file) ||
                            node->kind == NODE_TEMP))
    {
      *doc = limen_doc_ref (node->doc);
      *app = g_strdup (node->app);
      *is_doc_entry = node->kind == NODE_FILE && node->is_doc_file;
    }
  limen_fuse_node_put (fs, node);
}

gboolean
limen_fuse_identify_fd (LimenFuse *fs, int fd, int mnt_id, dev_t dev, guint64 ino, LimenDoc **doc, char **app,
                        gboolean *is_doc_entry)
{
  char proc[64];
  g_autofree char *info = NULL;
  g_autofree char *path = NULL;
  g_auto(GStrv) parts = NULL;
  const char *p;
  const char *id, *name;
  gsize len = strlen (fs->mountpoint);

  *doc = NULL;
  *app = NULL;
  *is_doc_entry = FALSE;
  if (!fs->mounted)
    return FALSE;
  /* The mount id (the caller's statx, or fdinfo on kernels before 5.8, whose statx leaves
   * it out) and the fd's path come from the kernel's own tables: nothing here sends a
   * request to our filesystem, so the D-Bus thread never waits on it. */
  if (mnt_id < 0)
    {
      g_snprintf (proc, sizeof proc, "/proc/self/fdinfo/%d", fd);
      if (!g_file_get_contents (proc, &info, NULL, NULL))
        return FALSE;
      p = strstr (info, "mnt_id:");
      if (p)
        mnt_id = atoi (p + 7);
    }
  /* Our own mount, or a bind mount of it (what Flatpak gives an app): the same device. */
  if (mnt_id != fs->mnt_id && (dev == 0 || dev != fs->dev))
    return FALSE;
  /* Where there is a path it is the test: a node keeps counting as the document's file
   * after the host deleted, replaced or renamed that file under an open fd, while the
   * path stops naming the document once the kernel drops its entry (README: Over D-Bus). */
  path = mnt_id == fs->mnt_id ? limen_doc_fd_path (fd) : NULL;
  if (path == NULL || strncmp (path, fs->mountpoint, len) != 0 || (path[len] != '/' && path[len] != '\0'))
    {
      identify_by_node (fs, ino, doc, app, is_doc_entry);
      return TRUE;
    }
  parts = g_strsplit (path + len + (path[len] == '/'), "/", -1);
  if (parts[0] && strcmp (parts[0], "by-app") == 0 && parts[1] && parts[2] && parts[3] && !parts[4])
    {
      *app = g_strdup (parts[1]);
      id = parts[2];
      name = parts[3];
    }
  else if (parts[0] && parts[1] && !parts[2])
    {
      id = parts[0];
      name = parts[1];
    }
  else
    return TRUE;
  if (limen_doc_id_is_valid (id) && (*doc = limen_doc_model_lookup (fs->model, id)))
    {
      g_autofree char *docname = limen_doc_dup_name (*doc);

      *is_doc_entry = strcmp (docname, name) == 0;
    }
  return TRUE;
}

int
limen_fuse_dup_inner_node (LimenFuse *fs, guint64 ino, LimenDoc **doc, char **view)
{
  Node *node = limen_fuse_node_get (fs, (fuse_ino_t) ino);
  int fd = -1;

  *doc = NULL;
  *view = NULL;
  /* As for every open through the mount: a node whose host file has left the document's
   * directory on the host is not the document's any more. */
  if (node && node->kind == NODE_FILE && !node->is_doc_file && limen_fuse_node_is_dir_doc (node) &&
      node->fd >= 0 && limen_fuse_node_within_doc (fs, node) && (fd = fcntl (node->fd, F_DUPFD_CLOEXEC, 3)) >= 0)
    {
      *doc = limen_doc_ref (node->doc);
      *view = g_strdup (node->app);
    }
  limen_fuse_node_put (fs, node);
  return fd;
}
