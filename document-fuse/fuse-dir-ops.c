/* limen-documents — FUSE changes to names other than rename: create, mkdir, unlink,
 * rmdir, symlink and link (inside an exported directory), and the refusal of mknod; the
 * helpers rename (fuse-rename.c) shares with them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fuse-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The parent for a change: a writable directory of the caller's view. */
Node *
limen_fuse_writable_parent (LimenFuse *fs, fuse_req_t req, fuse_ino_t ino, const char *name, int *err)
{
  Node *parent = limen_fuse_node_get (fs, ino);

  *err = 0;
  if (parent == NULL)
    *err = ESTALE;
  else if (!limen_fuse_name_is_valid (name))
    *err = EINVAL;
  else if (parent->kind != NODE_DOC_DIR && parent->kind != NODE_FILE)
    *err = EPERM;   /* the root, by-app and an app's directory hold only what we put there */
  else if (!limen_fuse_node_gate (fs, req, parent))
    *err = EACCES;
  else if (!(limen_fuse_node_rights (parent) & LIMEN_DOC_PERM_WRITE) || !limen_fuse_node_within_doc (fs, parent))
    *err = EACCES;
  else if (parent->kind == NODE_DOC_DIR && limen_fuse_node_is_dir_doc (parent))
    *err = EACCES;  /* the exported directory itself cannot be replaced */
  if (*err && parent)
    {
      limen_fuse_node_put (fs, parent);
      parent = NULL;
    }
  return parent;
}

static void
entry_for_new (LimenFuse *fs, Node *parent, int fd_path_only, struct fuse_entry_param *e, Node **out)
{
  struct stat st;

  fstat (fd_path_only, &st);
  *out = limen_fuse_file_node (fs, parent, parent->doc, fd_path_only, &st, FALSE);
  memset (e, 0, sizeof *e);
  limen_fuse_node_stat (fs, *out, &e->attr);
  e->ino = (*out)->ino;
  e->generation = 1;
  e->attr_timeout = limen_fuse_attr_timeout (*out);
  e->entry_timeout = ENTRY_TIMEOUT;
}

/* The document's own file, e.g. one added with AddNamed that does not exist yet: created
 * on the host; *@fd is the open file. The node, or NULL with *@err. */
static Node *
create_doc_file (LimenFuse *fs, Node *parent, int dirfd, const char *name, mode_t mode,
                 struct fuse_file_info *fi, int *fd, int *err)
{
  struct stat st;
  int pfd;

  *fd = openat (dirfd, name, (fi->flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC) & ~O_EXCL, mode & 0777);
  if (*fd < 0)
    {
      *err = errno;
      return NULL;
    }
  pfd = limen_fuse_open_doc_file (fs, parent->doc, &st);
  if (pfd < 0)
    {
      *err = -pfd;
      return NULL;
    }
  return limen_fuse_file_node (fs, parent, parent->doc, pfd, &st, TRUE);
}

/* A temporary file for an atomic save: unnamed on the host until renamed over the
 * document, so a failed save leaves nothing behind. An existing temp of that name is
 * reused (unless O_EXCL). The node with a reference, or NULL with *@err. */
static Node *
create_temp (LimenFuse *fs, Node *parent, int dirfd, const char *name, mode_t mode,
             struct fuse_file_info *fi, int *err)
{
  g_autofree char *key = NULL;
  Node *temp;
  int tfd;

  g_mutex_lock (&fs->lock);
  if (parent->temps == NULL)
    parent->temps = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  temp = g_hash_table_lookup (parent->temps, name);
  if (temp == NULL && g_hash_table_size (parent->temps) >= MAX_TEMPS_PER_DOC)
    *err = ENOSPC;
  else if (temp && (fi->flags & O_EXCL))
    *err = EEXIST;
  else if (temp)
    temp->ref++;
  g_mutex_unlock (&fs->lock);
  if (temp || *err)
    return *err ? NULL : temp;

  tfd = openat (dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, (mode & 0777) | 0600);
  if (tfd < 0)
    {
      *err = errno == EISDIR ? EOPNOTSUPP : errno;
      return NULL;
    }
  key = g_strdup_printf ("t:%s:%s:%s", parent->app ? parent->app : "", limen_doc_get_id (parent->doc), name);
  g_mutex_lock (&fs->lock);
  temp = limen_fuse_node_new_locked (fs, NODE_TEMP, key, parent->app, parent->doc, parent, tfd);
  temp->temp_name = g_strdup (name);
  temp->ref = 2; /* the temps table + this request */
  g_hash_table_insert (parent->temps, g_strdup (name), temp);
  g_mutex_unlock (&fs->lock);
  return temp;
}

/* Create in a single-file document's directory: its file or a temp. */
static Node *
create_in_doc_dir (LimenFuse *fs, Node *parent, const char *name, mode_t mode, struct fuse_file_info *fi,
                   int *fd, int *err)
{
  g_autofree char *docname = NULL;
  g_autofd int dirfd = limen_fuse_open_doc_parent (parent->doc, &docname);
  Node *node;

  if (dirfd < 0)
    {
      *err = ENOENT;
      return NULL;
    }
  if (strcmp (name, docname) == 0)
    return create_doc_file (fs, parent, dirfd, name, mode, fi, fd, err);
  node = create_temp (fs, parent, dirfd, name, mode, fi, err);
  if (node == NULL)
    return NULL;
  if ((fi->flags & O_TRUNC) && ftruncate (node->fd, 0) != 0)
    *err = errno;
  else if ((*fd = limen_fuse_node_reopen (node, fi->flags)) < 0)
    *err = errno;
  return node;
}

/* Create inside an exported directory: a real host file, never following a symlink. */
static Node *
create_in_dir (LimenFuse *fs, Node *parent, const char *name, mode_t mode, struct fuse_file_info *fi,
               int *fd, int *err)
{
  struct stat st;
  Node *node;
  int pfd;

  *fd = openat (parent->fd, name, fi->flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
  if (*fd < 0)
    {
      *err = errno;
      return NULL;
    }
  pfd = openat (parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (pfd < 0)
    {
      *err = errno;
      return NULL;
    }
  fstat (pfd, &st);
  node = limen_fuse_file_node (fs, parent, parent->doc, pfd, &st, FALSE);
  limen_fuse_node_set_name (fs, node, name);
  return node;
}

void
limen_fuse_op_create (fuse_req_t req, fuse_ino_t parent_ino, const char *name, mode_t mode, struct fuse_file_info *fi)
{
  LimenFuse *fs = req_fs (req);
  int err = 0;
  Node *parent = limen_fuse_writable_parent (fs, req, parent_ino, name, &err);
  Node *node = NULL;
  struct fuse_entry_param e;
  int fd = -1;

  if (parent == NULL)
    {
      fuse_reply_err (req, err);
      return;
    }
  if (parent->kind == NODE_DOC_DIR)
    node = create_in_doc_dir (fs, parent, name, mode, fi, &fd, &err);
  else
    node = create_in_dir (fs, parent, name, mode, fi, &fd, &err);
  if (node == NULL || err != 0 || fd < 0)
    {
      if (fd >= 0)
        close (fd);
      limen_fuse_node_put (fs, node);
      limen_fuse_node_put (fs, parent);
      fuse_reply_err (req, err ? err : EIO);
      return;
    }
  memset (&e, 0, sizeof e);
  limen_fuse_node_stat (fs, node, &e.attr);
  e.ino = node->ino;
  e.generation = 1;
  e.attr_timeout = limen_fuse_attr_timeout (node);
  e.entry_timeout = ENTRY_TIMEOUT;
  g_mutex_lock (&fs->lock);
  limen_fuse_node_add_lookup_locked (node);
  node->ref++; /* the handle's */
  g_mutex_unlock (&fs->lock);
  limen_fuse_node_put (fs, parent);
  limen_fuse_finish_open (fs, req, node, fd, fi, &e);
}

/* Answer a request that made @name in @parent (mkdir, symlink, link) with its entry; @flags
 * adds to the O_PATH open that finds it again (O_DIRECTORY for a new folder). */
static void
reply_new_entry (LimenFuse *fs, fuse_req_t req, Node *parent, const char *name, int flags)
{
  struct fuse_entry_param e;
  Node *node;
  int fd = openat (parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC | flags);

  if (fd < 0)
    {
      fuse_reply_err (req, errno);
      return;
    }
  entry_for_new (fs, parent, fd, &e, &node);
  g_mutex_lock (&fs->lock);
  limen_fuse_node_add_lookup_locked (node);
  g_mutex_unlock (&fs->lock);
  fuse_reply_entry (req, &e);
}

void
limen_fuse_op_mkdir (fuse_req_t req, fuse_ino_t parent_ino, const char *name, mode_t mode)
{
  LimenFuse *fs = req_fs (req);
  int err;
  Node *parent = limen_fuse_writable_parent (fs, req, parent_ino, name, &err);

  if (parent == NULL)
    {
      fuse_reply_err (req, err);
      return;
    }
  if (parent->kind != NODE_FILE)
    {
      /* A single-file document's directory holds its file and the temps of saves. */
      limen_fuse_node_put (fs, parent);
      fuse_reply_err (req, EPERM);
      return;
    }
  if (mkdirat (parent->fd, name, mode & 07777) != 0)
    fuse_reply_err (req, errno);
  else
    reply_new_entry (fs, req, parent, name, O_DIRECTORY);
  limen_fuse_node_put (fs, parent);
}

/* The nodes of @doc's file @st, in every view, are (@is_doc_file) or are no longer the
 * document's own file. The kernel keeps a node under the name it has for it: after a rename
 * through the mount, the file's old node goes on under the new name until that name is
 * looked up again. A node left as the document's file would follow the document's path (a
 * new file under the document's name would show under the temp's) and name the document to
 * an Add of an fd opened through it. fs->lock held. */
void
limen_fuse_mark_doc_file_locked (LimenFuse *fs, LimenDoc *doc, const struct stat *st, gboolean is_doc_file)
{
  GPtrArray *nodes = limen_fuse_doc_nodes_locked (fs, doc);
  struct stat now;

  for (guint i = 0; nodes && i < nodes->len; i++)
    {
      Node *n = nodes->pdata[i];

      if (n->kind == NODE_FILE && n->doc == doc && n->is_doc_file != is_doc_file && fstat (n->fd, &now) == 0 &&
          now.st_dev == st->st_dev && now.st_ino == st->st_ino)
        n->is_doc_file = is_doc_file;
    }
}

/* Other views of @dir's document cache its file under @docname: drop those entries. */
void
limen_fuse_inval_other_views (LimenFuse *fs, Node *dir, const char *docname)
{
  GPtrArray *nodes = limen_fuse_doc_nodes_locked (fs, dir->doc);

  for (guint i = 0; nodes && i < nodes->len; i++)
    {
      Node *n = nodes->pdata[i];

      if (n->kind == NODE_DOC_DIR && n->doc == dir->doc && n != dir)
        limen_fuse_queue_inval (fs, n->ino, docname, 0);
    }
}

/* unlink of the document's own file by a caller who may write it: the file goes on the
 * host (the document stays, as one added with AddNamed before its file exists), as the
 * reference does; apps that save by unlink and create rely on it. */
static int
unlink_doc_file (LimenFuse *fs, Node *dir, const char *name)
{
  g_autofree char *docname = NULL;
  g_autofd int dirfd = limen_fuse_open_doc_parent (dir->doc, &docname);
  struct stat st;

  if (dirfd < 0)
    return ENOENT;
  if (strcmp (name, docname) != 0)
    return EPERM;   /* as the reference answers for a name that is not there */
  if (fstatat (dirfd, docname, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno;
  if (unlinkat (dirfd, docname, 0) != 0)
    return errno;
  g_mutex_lock (&fs->lock);
  limen_fuse_mark_doc_file_locked (fs, dir->doc, &st, FALSE);
  limen_fuse_inval_other_views (fs, dir, docname);
  g_mutex_unlock (&fs->lock);
  return 0;
}

/* @temp, taken out of @dir's temps: gone for good. A temp that was the document's file
 * (see move_doc_file_to_temp) also leaves its hidden name on the host; fs->lock held. */
void
limen_fuse_drop_temp_locked (LimenFuse *fs, Node *dir, Node *temp)
{
  if (temp->hidden)
    {
      g_autofd int dirfd = limen_fuse_open_doc_parent (dir->doc, NULL);

      if (dirfd >= 0)
        unlinkat (dirfd, temp->hidden, 0);
      g_clear_pointer (&temp->hidden, g_free);
    }
  limen_fuse_node_unref_locked (fs, temp);
}

static void
remove_entry (fuse_req_t req, fuse_ino_t parent_ino, const char *name, int flags)
{
  LimenFuse *fs = req_fs (req);
  int err;
  Node *parent = limen_fuse_writable_parent (fs, req, parent_ino, name, &err);

  if (parent == NULL)
    {
      fuse_reply_err (req, err);
      return;
    }
  if (parent->kind == NODE_DOC_DIR)
    {
      Node *temp = NULL;

      g_mutex_lock (&fs->lock);
      if (parent->temps && (temp = g_hash_table_lookup (parent->temps, name)))
        g_hash_table_remove (parent->temps, name);
      if (temp)
        limen_fuse_drop_temp_locked (fs, parent, temp);
      g_mutex_unlock (&fs->lock);
      err = temp ? 0 : flags ? ENOTDIR : unlink_doc_file (fs, parent, name);
    }
  else if (unlinkat (parent->fd, name, flags) != 0)
    err = errno;
  limen_fuse_node_put (fs, parent);
  fuse_reply_err (req, err);
}

void
limen_fuse_op_unlink (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  remove_entry (req, parent, name, 0);
}

void
limen_fuse_op_rmdir (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  remove_entry (req, parent, name, AT_REMOVEDIR);
}


/* How deep @parent, a folder inside an exported directory, lies below the document's top
 * folder (0: the top itself), or -1 when it is not below it. */
static int
depth_in_doc (Node *parent)
{
  g_autofree char *root = limen_doc_dup_path (parent->doc);
  g_autofree char *path = limen_doc_fd_path (parent->fd);
  gsize len = root ? strlen (root) : 0;
  int depth = 0;

  if (path == NULL || root == NULL || strncmp (path, root, len) != 0 || (path[len] != '\0' && path[len] != '/'))
    return -1;
  for (const char *p = path + len; *p; p++)
    depth += *p == '/';
  return depth;
}

/* Does the text of a new symlink in a folder @depth below the document's top stay inside the
 * document: relative, and never above the top? */
static gboolean
target_within_doc (const char *target, int depth)
{
  g_auto(GStrv) parts = NULL;

  if (depth < 0 || target[0] == '\0' || target[0] == '/')
    return FALSE;
  parts = g_strsplit (target, "/", -1);
  for (int i = 0; parts[i]; i++)
    {
      if (parts[i][0] == '\0' || strcmp (parts[i], ".") == 0)
        continue;
      if (strcmp (parts[i], "..") != 0)
        depth++;
      else if (--depth < 0)
        return FALSE;
    }
  return TRUE;
}

/* Symlinks inside an exported directory, as the reference allows them, but only ones whose
 * text stays inside the document (relative, never above its top folder): the host follows
 * symlinks, and one pointing out of the document would let an app lead a host program to
 * any file of the user. None in a single-file document's folder. */
void
limen_fuse_op_symlink (fuse_req_t req, const char *link, fuse_ino_t parent_ino, const char *name)
{
  LimenFuse *fs = req_fs (req);
  int err;
  Node *parent = limen_fuse_writable_parent (fs, req, parent_ino, name, &err);

  if (parent == NULL)
    fuse_reply_err (req, err);
  else if (parent->kind != NODE_FILE || !target_within_doc (link, depth_in_doc (parent)))
    fuse_reply_err (req, EPERM);
  else if (symlinkat (link, parent->fd, name) != 0)
    fuse_reply_err (req, errno);
  else
    reply_new_entry (fs, req, parent, name, 0);
  limen_fuse_node_put (fs, parent);
}

/* Hard links inside one exported directory, seen through one view, as the reference allows
 * them: both names are the document's. Nothing else (EPERM). */
void
limen_fuse_op_link (fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
  LimenFuse *fs = req_fs (req);
  int err;
  Node *parent = limen_fuse_writable_parent (fs, req, newparent, newname, &err);
  Node *node = parent ? limen_fuse_node_get (fs, ino) : NULL;
  char proc[64];

  if (parent == NULL)
    err = err ? err : ESTALE;
  else if (node == NULL)
    err = ESTALE;
  else if (parent->kind != NODE_FILE || node->kind != NODE_FILE || node->is_doc_file || node->doc != parent->doc ||
           g_strcmp0 (node->app, parent->app) != 0 || !limen_fuse_node_within_doc (fs, node))
    err = EPERM;
  else
    {
      g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
      err = linkat (AT_FDCWD, proc, parent->fd, newname, AT_SYMLINK_FOLLOW) != 0 ? errno : 0;
    }
  if (err)
    fuse_reply_err (req, err);
  else
    reply_new_entry (fs, req, parent, newname, 0);
  limen_fuse_node_put (fs, node);
  limen_fuse_node_put (fs, parent);
}

void
limen_fuse_op_mknod (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
  /* No device nodes, fifos or sockets in a document; ENOSYS as from the reference. */
  fuse_reply_err (req, ENOSYS);
}
