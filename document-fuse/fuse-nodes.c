/* limen-documents — the nodes of the FUSE filesystem and the host files behind them.
 *
 * Every node that reaches a host object holds an O_PATH fd, and everything below it is
 * reached with *at() calls relative to those fds and O_NOFOLLOW, so no name, symlink or
 * rename can lead outside a document. Nodes are per view (host, or one app), so rights,
 * mode bits and revocation are per app. The tables are under fs->lock.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fuse-private.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ---- nodes ------------------------------------------------------------------------ */

Node *
limen_fuse_node_new_locked (LimenFuse *fs, NodeKind kind, const char *key, const char *app, LimenDoc *doc,
                            Node *parent, int fd)
{
  Node *node = g_new0 (Node, 1);

  node->ino = fs->next_ino++;
  node->kind = kind;
  node->key = g_strdup (key);
  node->app = g_strdup (app);
  node->doc = doc ? limen_doc_ref (doc) : NULL;
  node->parent = parent;
  if (parent)
    parent->ref++;
  node->fd = fd;
  g_hash_table_insert (fs->inodes, GSIZE_TO_POINTER (node->ino), node);
  if (node->key)
    g_hash_table_replace (fs->by_key, node->key, node);
  if (doc)
    {
      GPtrArray *nodes = g_hash_table_lookup (fs->by_doc, limen_doc_get_id (doc));

      if (nodes == NULL)
        {
          nodes = g_ptr_array_new ();
          g_hash_table_insert (fs->by_doc, g_strdup (limen_doc_get_id (doc)), nodes);
        }
      g_ptr_array_add (nodes, node);
    }
  if (kind == NODE_APP_DIR)
    g_ptr_array_add (fs->app_dirs, node);
  return node;
}

GPtrArray *
limen_fuse_doc_nodes_locked (LimenFuse *fs, LimenDoc *doc)
{
  return g_hash_table_lookup (fs->by_doc, limen_doc_get_id (doc));
}

/* Take @node out of the indexes of node_new_locked. */
static void
node_unindex_locked (LimenFuse *fs, Node *node)
{
  if (node->doc)
    {
      GPtrArray *nodes = g_hash_table_lookup (fs->by_doc, limen_doc_get_id (node->doc));

      if (nodes && g_ptr_array_remove_fast (nodes, node) && nodes->len == 0)
        g_hash_table_remove (fs->by_doc, limen_doc_get_id (node->doc));
    }
  if (node->kind == NODE_APP_DIR)
    g_ptr_array_remove_fast (fs->app_dirs, node);
}

static void
node_free_locked (LimenFuse *fs, Node *node)
{
  g_hash_table_remove (fs->inodes, GSIZE_TO_POINTER (node->ino));
  node_unindex_locked (fs, node);
  if (node->key && g_hash_table_lookup (fs->by_key, node->key) == node)
    g_hash_table_remove (fs->by_key, node->key);
  if (node->temps)
    {
      GHashTableIter iter;
      gpointer value;

      g_hash_table_iter_init (&iter, node->temps);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        {
          g_hash_table_iter_steal (&iter);
          limen_fuse_node_unref_locked (fs, value);
        }
      g_hash_table_unref (node->temps);
    }
  if (node->fd >= 0)
    close (node->fd);
  if (node->doc)
    limen_doc_unref (node->doc);
  if (node->parent)
    limen_fuse_node_unref_locked (fs, node->parent);
  g_free (node->key);
  g_free (node->app);
  g_free (node->temp_name);
  g_free (node->hidden);
  g_free (node->list_sig);
  g_free (node->name);
  g_free (node);
}

gboolean
limen_fuse_node_still_open (LimenFuse *fs, Node *node)
{
  gint64 deadline = g_get_monotonic_time () + 5 * G_TIME_SPAN_MILLISECOND;
  gboolean open;

  g_mutex_lock (&fs->lock);
  while (node->n_open > 0 && g_cond_wait_until (&fs->release_cond, &fs->lock, deadline))
    ;
  open = node->n_open > 0;
  g_mutex_unlock (&fs->lock);
  return open;
}

void
limen_fuse_node_unref_locked (LimenFuse *fs, Node *node)
{
  if (--node->ref == 0 && node->kind != NODE_ROOT && node->kind != NODE_BY_APP)
    node_free_locked (fs, node);
}

/* The node for @ino with a reference, or NULL. */
Node *
limen_fuse_node_get (LimenFuse *fs, fuse_ino_t ino)
{
  Node *node;

  g_mutex_lock (&fs->lock);
  node = g_hash_table_lookup (fs->inodes, GSIZE_TO_POINTER (ino));
  if (node)
    node->ref++;
  g_mutex_unlock (&fs->lock);
  return node;
}

/* limen_fuse_node_get for an operation on @ino: NULL (and ESTALE answered) when it is gone. */
Node *
limen_fuse_node_get_or_stale (LimenFuse *fs, fuse_req_t req, fuse_ino_t ino)
{
  Node *node = limen_fuse_node_get (fs, ino);

  if (node == NULL)
    fuse_reply_err (req, ESTALE);
  return node;
}

void
limen_fuse_node_put (LimenFuse *fs, Node *node)
{
  if (node == NULL)
    return;
  g_mutex_lock (&fs->lock);
  limen_fuse_node_unref_locked (fs, node);
  g_mutex_unlock (&fs->lock);
}

/* One kernel lookup more on @node (the caller holds a reference it hands over). */
void
limen_fuse_node_add_lookup_locked (Node *node)
{
  if (node->nlookup++ > 0)
    node->ref--; /* the kernel's single reference exists already */
}

guint
limen_fuse_node_rights (Node *node)
{
  if (node->doc == NULL)
    return LIMEN_DOC_PERM_READ;
  return limen_doc_get_perms (node->doc, node->app);
}

gboolean
limen_fuse_node_is_dir_doc (Node *node)
{
  return node->doc && (limen_doc_get_flags (node->doc) & LIMEN_DOC_FLAG_DIRECTORY);
}

int
limen_fuse_node_stat (LimenFuse *fs, Node *node, struct stat *st)
{
  guint rights;

  /* The daemon's own ids never change: two system calls less on every lookup. */
  static uid_t uid;
  static gid_t gid;
  static gsize ids_read;

  if (g_once_init_enter (&ids_read))
    {
      uid = getuid ();
      gid = getgid ();
      g_once_init_leave (&ids_read, 1);
    }
  memset (st, 0, sizeof *st);
  st->st_uid = uid;
  st->st_gid = gid;
  st->st_nlink = 2;
  switch (node->kind)
    {
    case NODE_ROOT:
    case NODE_BY_APP:
      st->st_mode = S_IFDIR | 0500;   /* as the reference's: only the user's own processes */
      break;
    case NODE_APP_DIR:
      st->st_mode = S_IFDIR | 0500;
      break;
    case NODE_DOC_DIR:
      rights = limen_fuse_node_rights (node);
      if (rights == 0)
        return ENOENT;
      st->st_mode = S_IFDIR | 0500;
      /* Writable single-file documents need a writable directory for atomic saves. */
      if ((rights & LIMEN_DOC_PERM_WRITE) && !limen_fuse_node_is_dir_doc (node))
        st->st_mode |= 0200;
      break;
    case NODE_FILE:
    case NODE_TEMP:
      if (fstatat (node->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
        return errno;
      /* A temp is unnamed on the host, but it has its name in the document's folder: a
       * link count of 0 would tell apps (and the kernel, which then answers link() with
       * ENOENT) that it is deleted. */
      if (node->kind == NODE_TEMP && st->st_nlink == 0)
        st->st_nlink = 1;
      return limen_fuse_node_stat_file (fs, node, st);
    }
  st->st_ino = node->ino;
  return 0;
}

int
limen_fuse_node_stat_file (LimenFuse *fs, Node *node, struct stat *st)
{
  guint rights = limen_fuse_node_rights (node);

  if (rights == 0)
    return ENOENT;
  if (!(rights & LIMEN_DOC_PERM_READ))
    st->st_mode &= ~0444;
  if (!(rights & LIMEN_DOC_PERM_WRITE))
    st->st_mode &= ~0222;
  st->st_ino = node->ino;
  return 0;
}

void
limen_fuse_reply_entry (LimenFuse *fs, fuse_req_t req, Node *node, double timeout)
{
  struct fuse_entry_param e = { 0 };
  int err = limen_fuse_node_stat (fs, node, &e.attr);

  if (err)
    {
      limen_fuse_node_put (fs, node);
      fuse_reply_err (req, err);
      return;
    }
  e.ino = node->ino;
  e.generation = 1;
  e.attr_timeout = timeout > 0 ? limen_fuse_attr_timeout (node) : 0;
  e.entry_timeout = timeout;
  g_mutex_lock (&fs->lock);
  limen_fuse_node_add_lookup_locked (node);
  g_mutex_unlock (&fs->lock);
  if (fuse_reply_entry (req, &e) != 0)
    {
      /* The kernel will never forget what it never got. */
      g_mutex_lock (&fs->lock);
      if (--node->nlookup == 0)
        limen_fuse_node_unref_locked (fs, node);
      g_mutex_unlock (&fs->lock);
    }
}

/* Find or make the node with @key; returns it with a reference. Takes @fd either way. */
Node *
limen_fuse_node_ensure (LimenFuse *fs, NodeKind kind, const char *key, const char *app, LimenDoc *doc,
                        Node *parent, int fd)
{
  Node *node;

  g_mutex_lock (&fs->lock);
  node = g_hash_table_lookup (fs->by_key, key);
  if (node)
    {
      node->ref++;
      if (fd >= 0)
        close (fd);
    }
  else
    {
      node = limen_fuse_node_new_locked (fs, kind, key, app, doc, parent, fd);
      node->ref = 1;
    }
  g_mutex_unlock (&fs->lock);
  return node;
}

/* ---- host files ------------------------------------------------------------------- */

gboolean
limen_fuse_name_is_valid (const char *name)
{
  return name[0] != '\0' && strcmp (name, ".") != 0 && strcmp (name, "..") != 0 &&
         strchr (name, '/') == NULL && strlen (name) <= NAME_MAX;
}

/* Open the directory holding the document's NAME, refusing symlinks anywhere on the
 * stored path: it was canonical when exported, so a symlink there now is a swap. */
int
limen_fuse_open_doc_parent (LimenDoc *doc, char **name_out)
{
  g_autofree char *path = limen_doc_dup_path (doc);
  g_autofree char *dir = g_path_get_dirname (path);
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  int fd = syscall (SYS_openat2, AT_FDCWD, dir, &how, sizeof how);

  if (name_out)
    *name_out = g_path_get_basename (path);
  return fd;
}

/* After the document's file moved on the host: find it again by its file handle on the
 * mount of its device (needs CAP_DAC_READ_SEARCH; without it the document stays lost). */
static int
reopen_by_handle (LimenFuse *fs, LimenDoc *doc)
{
  g_autofree char *mountinfo = NULL;
  g_auto(GStrv) lines = NULL;
  guint64 dev, ino;
  int type = 0;
  g_autoptr(GBytes) stored = limen_doc_dup_handle (doc, &type);

  /* A document without a handle (a name added before its file existed, and not there
   * now) is looked up often and found never: no need to read every mount for it. */
  if (stored == NULL || g_bytes_get_size (stored) > MAX_HANDLE_SZ)
    {
      g_debug ("Document %s has no file handle", limen_doc_get_id (doc));
      return -1;
    }
  limen_doc_get_file_id (doc, &dev, &ino);
  if (!g_file_get_contents ("/proc/self/mountinfo", &mountinfo, NULL, NULL))
    return -1;
  lines = g_strsplit (mountinfo, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], " ", 6);
      unsigned maj, min;

      if (g_strv_length (f) < 5 || sscanf (f[2], "%u:%u", &maj, &min) != 2 || makedev (maj, min) != dev)
        continue;
      {
        /* open_by_handle_at() refuses an O_PATH mount fd. */
        g_autofd int mfd = open (f[4], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct { struct file_handle fh; unsigned char data[MAX_HANDLE_SZ]; } h;
        int fd;
        struct stat st;

        if (mfd < 0)
          continue;
        h.fh.handle_bytes = g_bytes_get_size (stored);
        h.fh.handle_type = type;
        memcpy (h.fh.f_handle, g_bytes_get_data (stored, NULL), h.fh.handle_bytes);
        fd = open_by_handle_at (mfd, &h.fh, O_PATH | O_CLOEXEC);
        if (fd < 0)
          {
            g_debug ("Document %s: its file handle no longer opens: %s", limen_doc_get_id (doc),
                     g_strerror (errno));
            return -1;
          }
        if (fstat (fd, &st) != 0 || st.st_ino != ino)
          {
            close (fd);
            return -1;
          }
        return fd;
      }
    }
  return -1;
}

/* Open the document's NAME (O_PATH, not following a final symlink) and keep the
 * model's idea of the file current. */
int
limen_fuse_open_doc_file (LimenFuse *fs, LimenDoc *doc, struct stat *st)
{
  g_autofree char *name = NULL;
  g_autofd int parent = limen_fuse_open_doc_parent (doc, &name);
  int fd = -1;
  gboolean dir_doc = (limen_doc_get_flags (doc) & LIMEN_DOC_FLAG_DIRECTORY) != 0;
  guint64 dev, ino;

  if (parent >= 0)
    fd = openat (parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      fd = reopen_by_handle (fs, doc);
      /* A file removed while something (one of our nodes) still holds it is found by its
       * handle too: it is gone, not moved. */
      if (fd >= 0 && (fstat (fd, st) != 0 || st->st_nlink == 0))
        {
          close (fd);
          return -ENOENT;
        }
      if (fd >= 0)
        {
          g_autofree char *moved = limen_doc_fd_path (fd);

          if (moved && moved[0] == '/')
            {
              g_autoptr(GBytes) handle = NULL;
              int type = 0;

              g_debug ("Document %s moved to %s", limen_doc_get_id (doc), moved);
              fstat (fd, st);
              handle = limen_doc_file_handle (fd, &type);
              limen_doc_model_update_file (fs->model, doc, moved, st->st_dev, st->st_ino, type, handle);
            }
        }
      if (fd < 0)
        return -ENOENT;
    }
  if (fstat (fd, st) != 0 || (dir_doc ? !S_ISDIR (st->st_mode) : !S_ISREG (st->st_mode)))
    {
      close (fd);
      return dir_doc ? -ENOTDIR : -EACCES;
    }
  limen_doc_get_file_id (doc, &dev, &ino);
  if (dev != (guint64) st->st_dev || ino != (guint64) st->st_ino)
    {
      /* Replaced at the same path (an atomic save on the host): same document. */
      g_autofree char *path = limen_doc_dup_path (doc);
      g_autoptr(GBytes) handle = NULL;
      int type = 0;

      handle = limen_doc_file_handle (fd, &type);
      limen_doc_model_update_file (fs->model, doc, path, st->st_dev, st->st_ino, type, handle);
    }
  return fd;
}

/* Is @node (inside an exported directory) still below the document's directory? A
 * directory moved out of the tree on the host must not stay reachable through a node
 * the kernel still caches. */
gboolean
limen_fuse_node_within_doc (LimenFuse *fs, Node *node)
{
  g_autofree char *path = NULL;
  g_autofree char *root = NULL;

  if (node->kind != NODE_FILE || !limen_fuse_node_is_dir_doc (node))
    return TRUE;
  path = limen_doc_fd_path (node->fd);
  for (int attempt = 0; attempt < 2 && path; attempt++)
    {
      gsize len;

      g_free (root);
      root = limen_doc_dup_path (node->doc);
      len = strlen (root);
      if (strncmp (path, root, len) == 0 && (path[len] == '\0' || path[len] == '/'))
        return TRUE;
      if (attempt == 0)
        {
          /* The exported directory itself may have moved: find it again, then recheck. */
          struct stat st;
          int fd = limen_fuse_open_doc_file (fs, node->doc, &st);

          if (fd < 0)
            break;
          close (fd);
        }
    }
  g_debug ("%s left document %s; refusing access", path ? path : "(unknown)", limen_doc_get_id (node->doc));
  return FALSE;
}

Node *
limen_fuse_file_node (LimenFuse *fs, Node *parent, LimenDoc *doc, int fd, const struct stat *st, gboolean is_doc_file)
{
  g_autofree char *key = g_strdup_printf ("f:%s:%s:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT,
                                          parent->app ? parent->app : "", limen_doc_get_id (doc),
                                          (guint64) st->st_dev, (guint64) st->st_ino);
  Node *node = limen_fuse_node_ensure (fs, NODE_FILE, key, parent->app, doc, parent, fd);

  if (is_doc_file)
    {
      g_mutex_lock (&fs->lock);
      node->is_doc_file = TRUE;
      g_mutex_unlock (&fs->lock);
    }
  return node;
}


void
limen_fuse_doc_mark_seen (LimenFuse *fs, LimenDoc *doc)
{
  if (limen_doc_was_seen (doc))
    return;
  g_mutex_lock (&fs->seen_lock);
  if (!limen_doc_was_seen (doc))
    {
      if (!(limen_doc_get_flags (doc) & LIMEN_DOC_FLAG_DIRECTORY))
        {
          g_autofd int dirfd = limen_fuse_open_doc_parent (doc, NULL);
          g_autofree char *hidden = g_strdup_printf (".limen-save-%s", limen_doc_get_id (doc));

          if (dirfd >= 0)
            unlinkat (dirfd, hidden, 0);
        }
      limen_doc_mark_seen (doc);
    }
  g_mutex_unlock (&fs->seen_lock);
}

int
limen_fuse_node_reopen (Node *node, int flags)
{
  char proc[64];

  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
  return open (proc, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY)) | O_CLOEXEC);
}


gboolean
limen_fuse_node_follow_doc (LimenFuse *fs, Node *node, struct stat *st)
{
  g_autofree char *path = NULL;
  struct stat now;
  int fd;

  if (node->kind != NODE_FILE || !node->is_doc_file || limen_fuse_node_is_dir_doc (node))
    return FALSE;
  /* A plain stat of the stored path is enough to see that nothing changed (the common
   * case, one syscall); it grants nothing, so following symlinks here is harmless. Only
   * a different file there is opened, through the checked path. */
  path = limen_doc_dup_path (node->doc);
  if (fstatat (AT_FDCWD, path, &now, AT_SYMLINK_NOFOLLOW) != 0 ||
      (now.st_dev == st->st_dev && now.st_ino == st->st_ino))
    return FALSE;
  /* Someone holds the old file open: it keeps being that file for them (its size bounds
   * their reads), as on the host. The path's entry is dropped instead, once per new file,
   * so the next walk finds a node for the new one. */
  if (limen_fuse_node_still_open (fs, node))
    {
      g_mutex_lock (&fs->lock);
      if (node->replaced_by != now.st_ino && node->parent)
        {
          g_autofree char *name = limen_doc_dup_name (node->doc);

          node->replaced_by = now.st_ino;
          limen_fuse_queue_expire (fs, node->parent->ino, name);
        }
      g_mutex_unlock (&fs->lock);
      return FALSE;
    }
  fd = limen_fuse_open_doc_file (fs, node->doc, &now);
  if (fd < 0)
    return FALSE;
  g_mutex_lock (&fs->lock);
  if (g_hash_table_lookup (fs->by_key, node->key) == node)
    g_hash_table_remove (fs->by_key, node->key);
  g_free (node->key);
  node->key = g_strdup_printf ("f:%s:%s:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT, node->app ? node->app : "",
                               limen_doc_get_id (node->doc), (guint64) now.st_dev, (guint64) now.st_ino);
  g_hash_table_replace (fs->by_key, node->key, node);
  /* One step, as for a save through the mount: other workers may be using node->fd. */
  if (dup3 (fd, node->fd, O_CLOEXEC) < 0)
    g_warning ("Cannot switch document %s to its new file: %s", limen_doc_get_id (node->doc), g_strerror (errno));
  /* The kernel's pages and attributes are of the old file: never keep them. */
  node->cached_size = -1;
  g_mutex_unlock (&fs->lock);
  close (fd);
  g_debug ("Document %s: %s was replaced on the host", limen_doc_get_id (node->doc), path);
  *st = now;
  return TRUE;
}

gboolean
limen_fuse_node_deleted (LimenFuse *fs, Node *node, const struct stat *st)
{
  g_autofree char *name = NULL;
  Node *parent = node->parent;

  if (node->kind != NODE_FILE || st->st_nlink != 0 || parent == NULL)
    return FALSE;
  if (node->is_doc_file)
    name = limen_doc_dup_name (node->doc);
  g_mutex_lock (&fs->lock);
  if (name == NULL)
    name = g_strdup (node->name);
  if (!node->gone_told && name)
    {
      node->gone_told = TRUE;
      limen_fuse_queue_expire (fs, parent->ino, name);
    }
  g_mutex_unlock (&fs->lock);
  return TRUE;
}

gboolean
limen_fuse_node_left_behind (LimenFuse *fs, Node *node, struct stat *st)
{
  if (node->is_doc_file)
    {
      limen_fuse_node_follow_doc (fs, node, st);
      return limen_fuse_node_deleted (fs, node, st);
    }
  return limen_fuse_node_was_replaced (fs, node, st) || limen_fuse_node_deleted (fs, node, st);
}

void
limen_fuse_node_set_name (LimenFuse *fs, Node *node, const char *name)
{
  if (node->parent == NULL || node->parent->kind != NODE_FILE)
    return;
  g_mutex_lock (&fs->lock);
  if (g_strcmp0 (node->name, name) != 0)
    {
      g_free (node->name);
      node->name = g_strdup (name);
    }
  g_mutex_unlock (&fs->lock);
}

gboolean
limen_fuse_node_was_replaced (LimenFuse *fs, Node *node, const struct stat *st)
{
  g_autofree char *name = NULL;
  struct stat now;
  gboolean first = FALSE;

  if (node->kind != NODE_FILE || node->parent == NULL || node->parent->kind != NODE_FILE)
    return FALSE;
  g_mutex_lock (&fs->lock);
  name = g_strdup (node->name);
  g_mutex_unlock (&fs->lock);
  /* Gone or renamed (also through the mount): nothing else to open under that name. */
  if (name == NULL || fstatat (node->parent->fd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 ||
      (now.st_dev == st->st_dev && now.st_ino == st->st_ino))
    return FALSE;
  g_mutex_lock (&fs->lock);
  if (node->replaced_by != now.st_ino)
    {
      /* Once per new file: a path walk retried after ESTALE comes back through a fresh
       * lookup; an open of this very node again (through an fd, not a path) gets the
       * file it names, as it would on the host. */
      node->replaced_by = now.st_ino;
      first = TRUE;
      limen_fuse_queue_expire (fs, node->parent->ino, name);
    }
  g_mutex_unlock (&fs->lock);
  if (first)
    g_debug ("%s was replaced on the host; the path is walked again", name);
  return first;
}
