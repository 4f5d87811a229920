/* limen-documents — FUSE directory listings and changes to names: create, mkdir,
 * unlink, rmdir, rename (atomic saves over a single-file document), and the refusals
 * (symlink, link, mknod).
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

typedef struct {
  GArray    *entries;       /* DirEntry; for by-app/APPID built at the first readdir */
  Node      *app_dir;       /* by-app/ or by-app/APPID (a listing the kernel keeps): a reference */
  guint64    gen;           /* the listing generation at opendir */
  gboolean   refill;        /* opened without keep_cache */
  Node      *doc_dir;       /* a document's directory: a reference */
  char      *sig;           /* its names at opendir, joined by '/' */
  gboolean   read_to_end;
} DirHandle;

typedef struct {
  char  *name;
  mode_t mode;
  ino_t  ino;
} DirEntry;

static void
dir_add (GArray *entries, const char *name, mode_t mode, ino_t ino)
{
  DirEntry e = { g_strdup (name), mode, ino };

  g_array_append_val (entries, e);
}

static void
dir_entry_clear (DirEntry *e)
{
  g_free (e->name);
}

/* The entries of the root (host view): by-app and every document. */
static void
list_root (LimenFuse *fs, GArray *entries)
{
  g_autoptr(GPtrArray) docs = limen_doc_model_list (fs->model, NULL);

  dir_add (entries, "by-app", S_IFDIR, 0);
  for (guint i = 0; i < docs->len; i++)
    dir_add (entries, limen_doc_get_id (docs->pdata[i]), S_IFDIR, 0);
}

static void
list_by_app (LimenFuse *fs, GArray *entries)
{
  g_autoptr(GPtrArray) apps = limen_doc_model_list_apps (fs->model);

  for (guint i = 0; i < apps->len; i++)
    dir_add (entries, apps->pdata[i], S_IFDIR, 0);
}

/* by-app/APPID: the documents the app holds a right on. */
static void
list_app_dir (LimenFuse *fs, Node *dir, GArray *entries)
{
  g_autoptr(GPtrArray) docs = limen_doc_model_list (fs->model, dir->app);

  for (guint i = 0; i < docs->len; i++)
    if (limen_doc_get_perms (docs->pdata[i], dir->app))
      dir_add (entries, limen_doc_get_id (docs->pdata[i]), S_IFDIR, 0);
}

/* A document's directory: its file (under its current name) and the temps of saves. */
static void
list_doc_dir (LimenFuse *fs, Node *node, GArray *entries)
{
  g_autofree char *name = NULL;
  g_autofree char *path = NULL;
  g_autofd int file = -1;
  struct stat st;
  GHashTableIter iter;
  gpointer key;
  guint64 dev, ino;
  mode_t want = limen_fuse_node_is_dir_doc (node) ? S_IFDIR : S_IFREG;
  gboolean found;

  if (limen_fuse_node_rights (node) == 0)
    return;
  /* The common case costs one stat: the file is where the model has it (a stat grants
   * nothing, so it may follow symlinks on the way). Otherwise the checked open resolves
   * a moved or replaced file (by its handle) and updates the model, so the listing shows
   * its current name. */
  path = limen_doc_dup_path (node->doc);
  limen_doc_get_file_id (node->doc, &dev, &ino);
  found = fstatat (AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) == want &&
          (guint64) st.st_dev == dev && (guint64) st.st_ino == ino;
  if (!found)
    found = (file = limen_fuse_open_doc_file (fs, node->doc, &st)) >= 0;
  name = limen_doc_dup_name (node->doc);
  if (found)
    dir_add (entries, name, st.st_mode & S_IFMT, 0);
  g_mutex_lock (&fs->lock);
  if (node->temps)
    {
      g_hash_table_iter_init (&iter, node->temps);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        dir_add (entries, key, S_IFREG, 0);
    }
  g_mutex_unlock (&fs->lock);
}

/* A directory inside an exported directory: the host's entries; 0 or an errno. */
static int
list_host_dir (LimenFuse *fs, Node *node, GArray *entries)
{
  int dfd;
  DIR *dir;
  struct dirent *de;

  if (!(limen_fuse_node_rights (node) & LIMEN_DOC_PERM_READ) || !limen_fuse_node_within_doc (fs, node))
    return EACCES;
  dfd = openat (node->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || (dir = fdopendir (dfd)) == NULL)
    {
      int err = errno;

      if (dfd >= 0)
        close (dfd);
      return err;
    }
  while ((de = readdir (dir)))
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      dir_add (entries, de->d_name, DTTOIF (de->d_type), 0);
  closedir (dir);
  return 0;
}

/* The listings of by-app/ and of an app are kept by the kernel across opens (10,001
 * entries are ~120 readdir round trips otherwise, and by-app/ walks every document). An open without keep_cache makes the kernel drop its copy and
 * list through us; the copy counts as current once such an open was read to the end
 * with no change since it was opened (op_releasedir). A change only bumps a counter
 * (on_doc_changed, before its D-Bus reply): no kernel notification, and no window in
 * which a later open sees the old listing. Every opendir still comes here and is
 * gated, and every name in it is still looked up through us. Takes @node's reference. */
static void
open_app_listing (LimenFuse *fs, Node *node, DirHandle *dh, struct fuse_file_info *fi)
{
  g_mutex_lock (&fs->lock);
  dh->gen = node->list_gen + fs->all_gen;
  dh->refill = node->list_cached != dh->gen + 1;
  g_mutex_unlock (&fs->lock);
  fi->cache_readdir = 1;
  fi->keep_cache = !dh->refill;
  dh->app_dir = node;   /* our reference, dropped at releasedir */
}

/* A document's listing (its file and the temps of saves) is kept by the kernel while the
 * names are the ones it holds: they are found at every opendir anyway (one stat), and a
 * listing kept by the kernel saves the READDIR round trips. Any open that refills bumps
 * the generation and forgets the names, so only the last complete fill is recorded
 * (op_releasedir). Takes @node's reference. */
static void
open_doc_listing (LimenFuse *fs, Node *node, DirHandle *dh, struct fuse_file_info *fi)
{
  GString *sig = g_string_new (NULL);
  gboolean keep;

  for (guint i = 2; i < dh->entries->len; i++)
    g_string_append_printf (sig, "%s/", g_array_index (dh->entries, DirEntry, i).name);
  g_mutex_lock (&fs->lock);
  keep = node->list_sig != NULL && strcmp (node->list_sig, sig->str) == 0;
  if (!keep)
    {
      dh->gen = ++node->list_gen;
      g_clear_pointer (&node->list_sig, g_free);
    }
  g_mutex_unlock (&fs->lock);
  fi->cache_readdir = 1;
  fi->keep_cache = keep;
  dh->refill = !keep;
  dh->doc_dir = node;
  dh->sig = g_string_free (sig, FALSE);
}

void
limen_fuse_op_opendir (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  LimenFuse *fs = req_fs (req);
  Node *node = limen_fuse_node_get_or_stale (fs, req, ino);
  g_autoptr(GArray) entries = g_array_new (FALSE, FALSE, sizeof (DirEntry));
  DirHandle *dh;
  int err = 0;

  g_array_set_clear_func (entries, (GDestroyNotify) dir_entry_clear);
  if (node == NULL)
    return;
  if (!limen_fuse_node_gate (fs, req, node))
    err = EACCES;
  else if (node->kind == NODE_TEMP)
    err = ENOTDIR;
  if (err == 0)
    {
      dir_add (entries, ".", S_IFDIR, node->ino);
      dir_add (entries, "..", S_IFDIR, node->parent ? node->parent->ino : node->ino);
    }
  if (err == 0 && node->kind == NODE_ROOT)
    list_root (fs, entries);
  else if (err == 0 && node->kind == NODE_DOC_DIR)
    list_doc_dir (fs, node, entries);
  else if (err == 0 && node->kind == NODE_FILE)
    err = list_host_dir (fs, node, entries);
  if (err)
    {
      limen_fuse_node_put (fs, node);
      fuse_reply_err (req, err);
      return;
    }
  dh = g_new0 (DirHandle, 1);
  if (node->kind == NODE_APP_DIR || node->kind == NODE_BY_APP)
    open_app_listing (fs, node, dh, fi);
  else
    {
      dh->entries = g_steal_pointer (&entries);
      if (node->kind == NODE_DOC_DIR)
        open_doc_listing (fs, node, dh, fi);
      else
        limen_fuse_node_put (fs, node);
    }
  fi->fh = (uintptr_t) dh;
  if (fuse_reply_open (req, fi) != 0)
    {
      limen_fuse_node_put (fs, dh->app_dir);
      limen_fuse_node_put (fs, dh->doc_dir);
      g_clear_pointer (&dh->entries, g_array_unref);
      g_free (dh->sig);
      g_free (dh);
    }
}

void
limen_fuse_op_readdir (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
  DirHandle *dh = (DirHandle *) (uintptr_t) fi->fh;
  g_autofree char *buf = g_malloc (size);
  size_t used = 0;

  if (dh->entries == NULL)
    {
      Node *dir = dh->app_dir;

      dh->entries = g_array_new (FALSE, FALSE, sizeof (DirEntry));
      g_array_set_clear_func (dh->entries, (GDestroyNotify) dir_entry_clear);
      dir_add (dh->entries, ".", S_IFDIR, dir->ino);
      dir_add (dh->entries, "..", S_IFDIR, dir->parent->ino);
      if (dir->kind == NODE_BY_APP)
        list_by_app (req_fs (req), dh->entries);
      else
        list_app_dir (req_fs (req), dir, dh->entries);
    }
  if (off >= (off_t) dh->entries->len)
    dh->read_to_end = TRUE;

  for (off_t i = off; i < (off_t) dh->entries->len; i++)
    {
      DirEntry *e = &g_array_index (dh->entries, DirEntry, i);
      struct stat st = { .st_ino = e->ino ? e->ino : (ino_t) -1, .st_mode = e->mode };
      size_t n = fuse_add_direntry (req, buf + used, size - used, e->name, &st, i + 1);

      if (n > size - used)
        break;
      used += n;
    }
  fuse_reply_buf (req, buf, used);
}

void
limen_fuse_op_releasedir (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  DirHandle *dh = (DirHandle *) (uintptr_t) fi->fh;
  LimenFuse *fs = req_fs (req);

  if (dh->app_dir)
    {
      g_mutex_lock (&fs->lock);
      if (dh->refill && dh->read_to_end && dh->app_dir->list_gen + fs->all_gen == dh->gen)
        dh->app_dir->list_cached = dh->gen + 1;
      g_mutex_unlock (&fs->lock);
      limen_fuse_node_put (fs, dh->app_dir);
    }
  if (dh->doc_dir)
    {
      g_mutex_lock (&fs->lock);
      if (dh->refill && dh->read_to_end && dh->doc_dir->list_gen == dh->gen)
        {
          g_free (dh->doc_dir->list_sig);
          dh->doc_dir->list_sig = g_steal_pointer (&dh->sig);
        }
      g_mutex_unlock (&fs->lock);
      limen_fuse_node_put (fs, dh->doc_dir);
    }
  g_free (dh->sig);
  g_clear_pointer (&dh->entries, g_array_unref);
  g_free (dh);
  fuse_reply_err (req, 0);
}

/* ---- changes to names ---------------------------------------------------------------- */

/* The parent for a change: a writable directory of the caller's view. */
static Node *
writable_parent (LimenFuse *fs, fuse_req_t req, fuse_ino_t ino, const char *name, int *err)
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
  Node *parent = writable_parent (fs, req, parent_ino, name, &err);
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
  Node *parent = writable_parent (fs, req, parent_ino, name, &err);

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
static void
mark_doc_file_locked (LimenFuse *fs, LimenDoc *doc, const struct stat *st, gboolean is_doc_file)
{
  GHashTableIter iter;
  gpointer value;
  struct stat now;

  g_hash_table_iter_init (&iter, fs->inodes);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Node *n = value;

      if (n->kind == NODE_FILE && n->doc == doc && n->is_doc_file != is_doc_file && fstat (n->fd, &now) == 0 &&
          now.st_dev == st->st_dev && now.st_ino == st->st_ino)
        n->is_doc_file = is_doc_file;
    }
}

/* Other views of @dir's document cache its file under @docname: drop those entries. */
static void
inval_other_views (LimenFuse *fs, Node *dir, const char *docname)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, fs->inodes);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Node *n = value;

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
  mark_doc_file_locked (fs, dir->doc, &st, FALSE);
  inval_other_views (fs, dir, docname);
  g_mutex_unlock (&fs->lock);
  return 0;
}

/* @temp, taken out of @dir's temps: gone for good. A temp that was the document's file
 * (see move_doc_file_to_temp) also leaves its hidden name on the host; fs->lock held. */
static void
drop_temp_locked (LimenFuse *fs, Node *dir, Node *temp)
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
  Node *parent = writable_parent (fs, req, parent_ino, name, &err);

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
        drop_temp_locked (fs, parent, temp);
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

/* Replace the document's file with temp @temp (an atomic save). @replaced: the file the
 * save replaces (st_ino 0 when there was none). */
static int
save_temp_over (LimenFuse *fs, Node *dir, Node *temp, const char *docname, unsigned int flags,
                struct stat *replaced)
{
  g_autofd int dirfd = limen_fuse_open_doc_parent (dir->doc, NULL);
  char proc[64], hidden[64];
  guint32 rnd;
  struct stat st;
  int err = 0;
  g_autoptr(GBytes) handle = NULL;
  int type = 0;

  if (dirfd < 0)
    return ENOENT;
  if (fstatat (dirfd, docname, replaced, AT_SYMLINK_NOFOLLOW) != 0)
    memset (replaced, 0, sizeof *replaced);
  else if (flags & RENAME_NOREPLACE)
    return EEXIST;
  if (temp->hidden)
    {
      /* The document's own file moved to a temp earlier: it has a name on the host already. */
      struct stat now;

      if (fstatat (dirfd, temp->hidden, &now, AT_SYMLINK_NOFOLLOW) != 0 || fstat (temp->fd, &st) != 0 ||
          now.st_dev != st.st_dev || now.st_ino != st.st_ino)
        return ENOENT;
      if (renameat (dirfd, temp->hidden, dirfd, docname) != 0)
        return errno;
      g_mutex_lock (&fs->lock);
      g_clear_pointer (&temp->hidden, g_free);
      g_mutex_unlock (&fs->lock);
      goto saved;
    }
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", temp->fd);
  /* Give the unnamed file a hidden name for the instant before the rename: the document's
   * own (limen_fuse_doc_mark_seen removes it after a crash), or a random one while another save of the
   * same document holds that. */
  for (int attempt = 0; ; attempt++)
    {
      if (attempt == 0)
        g_snprintf (hidden, sizeof hidden, ".limen-save-%s", limen_doc_get_id (dir->doc));
      else
        {
          if (getrandom (&rnd, sizeof rnd, 0) != sizeof rnd)
            rnd = g_random_int ();
          g_snprintf (hidden, sizeof hidden, ".limen-save-%08x", rnd);
        }
      if (linkat (AT_FDCWD, proc, dirfd, hidden, AT_SYMLINK_FOLLOW) == 0)
        break;
      if (errno != EEXIST || attempt > 8)
        return errno;
    }
  if (renameat (dirfd, hidden, dirfd, docname) != 0)
    {
      err = errno;
      unlinkat (dirfd, hidden, 0);
      return err;
    }
saved:
  if (fstat (temp->fd, &st) == 0)
    {
      g_autofree char *path = limen_doc_dup_path (dir->doc);
      g_autofd int pfd = openat (dirfd, docname, O_PATH | O_NOFOLLOW | O_CLOEXEC);

      if (pfd >= 0)
        handle = limen_doc_file_handle (pfd, &type);
      limen_doc_model_update_file (fs->model, dir->doc, path, st.st_dev, st.st_ino, type, handle);
    }
  return 0;
}

/* After save_temp_over: the kernel now knows @temp's inode as the document's file, so
 * make the temp node that file's node, and drop the old file from other views' caches.
 * The nodes of the file it replaced (@replaced) are no longer the document's file; those of
 * the saved file are again, when it was the document's file before (renamed to a temp's
 * name and back). */
static void
adopt_saved_temp (LimenFuse *fs, Node *dir, Node *temp, const char *docname, const struct stat *replaced)
{
  struct stat st;
  g_autofd int pfd = -1;
  g_autofd int dirfd = limen_fuse_open_doc_parent (dir->doc, NULL);

  if (dirfd >= 0)
    pfd = openat (dirfd, docname, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  g_mutex_lock (&fs->lock);
  g_hash_table_remove (dir->temps, temp->temp_name);
  limen_fuse_node_unref_locked (fs, temp); /* the temps table's reference */
  if (replaced->st_ino != 0)
    mark_doc_file_locked (fs, dir->doc, replaced, FALSE);
  if (pfd >= 0 && fstat (pfd, &st) == 0)
    {
      mark_doc_file_locked (fs, dir->doc, &st, TRUE);
      if (g_hash_table_lookup (fs->by_key, temp->key) == temp)
        g_hash_table_remove (fs->by_key, temp->key);
      g_free (temp->key);
      temp->key = g_strdup_printf ("f:%s:%s:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT,
                                   dir->app ? dir->app : "", limen_doc_get_id (dir->doc),
                                   (guint64) st.st_dev, (guint64) st.st_ino);
      g_hash_table_replace (fs->by_key, temp->key, temp);
      /* Swap the file behind the fd number in one step: other workers may be using
       * temp->fd right now, and a close() would let the number be reused. */
      if (dup3 (pfd, temp->fd, O_CLOEXEC) < 0)
        g_warning ("Cannot switch the saved file's node: %s", g_strerror (errno));
      temp->kind = NODE_FILE;
      temp->is_doc_file = TRUE;
      g_clear_pointer (&temp->temp_name, g_free);
    }
  /* Other views still cache the old file under this name. */
  inval_other_views (fs, dir, docname);
  g_mutex_unlock (&fs->lock);
}

/* Rename temp @temp to @newname, another temp name; 0 or an errno. */
static int
rename_temp (LimenFuse *fs, Node *dir, Node *temp, const char *newname, unsigned int flags)
{
  Node *old;
  int err = 0;

  g_mutex_lock (&fs->lock);
  if ((old = g_hash_table_lookup (dir->temps, newname)) && (flags & RENAME_NOREPLACE))
    err = EEXIST;
  else
    {
      if (old)
        {
          g_hash_table_remove (dir->temps, newname);
          drop_temp_locked (fs, dir, old);
        }
      g_hash_table_steal (dir->temps, temp->temp_name);
      g_free (temp->temp_name);
      temp->temp_name = g_strdup (newname);
      g_hash_table_insert (dir->temps, g_strdup (newname), temp);
    }
  g_mutex_unlock (&fs->lock);
  return err;
}

/* Rename the document's own file to @newname, a temp name, as the reference does (editors
 * that keep a backup save so: the file to "NAME~", then a new NAME). The host file leaves
 * the document's name for a hidden one beside it (".limen-moved-XXXXXXXX"), where it lives as
 * the temp @newname: gone when the temp is removed, back under the document's name when the
 * temp is renamed over it. After a crash it stays under the hidden name: nothing is lost. */
static int
move_doc_file_to_temp (LimenFuse *fs, Node *dir, const char *docname, const char *newname, unsigned int flags)
{
  g_autofd int dirfd = limen_fuse_open_doc_parent (dir->doc, NULL);
  g_autofree char *key = NULL;
  char hidden[64];
  struct stat st, now;
  Node *old, *temp;
  guint32 rnd;
  int fd, err = 0;

  if (dirfd < 0)
    return ENOENT;
  g_mutex_lock (&fs->lock);
  if (dir->temps == NULL)
    dir->temps = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  old = g_hash_table_lookup (dir->temps, newname);
  if (old && (flags & RENAME_NOREPLACE))
    err = EEXIST;
  else if (old == NULL && g_hash_table_size (dir->temps) >= MAX_TEMPS_PER_DOC)
    err = ENOSPC;
  g_mutex_unlock (&fs->lock);
  if (err)
    return err;
  fd = openat (dirfd, docname, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS || errno == ETXTBSY))
    fd = openat (dirfd, docname, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      return EPERM;
    }
  for (int attempt = 0; ; attempt++)
    {
      if (getrandom (&rnd, sizeof rnd, 0) != sizeof rnd)
        rnd = g_random_int ();
      g_snprintf (hidden, sizeof hidden, ".limen-moved-%08x", rnd);
      if (syscall (SYS_renameat2, dirfd, docname, dirfd, hidden, RENAME_NOREPLACE) == 0)
        break;
      if (errno != EEXIST || attempt > 8)
        {
          err = errno;
          close (fd);
          return err;
        }
    }
  /* The host may have put another file under the name between the open and the rename. */
  if (fstatat (dirfd, hidden, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino)
    {
      syscall (SYS_renameat2, dirfd, hidden, dirfd, docname, RENAME_NOREPLACE);
      close (fd);
      return EBUSY;
    }
  /* The document has no file now (as one added with AddNamed before its file exists): it
   * must not follow its old file to the hidden name. */
  {
    g_autofree char *path = limen_doc_dup_path (dir->doc);

    limen_doc_model_update_file (fs->model, dir->doc, path, 0, 0, 0, NULL);
  }
  key = g_strdup_printf ("t:%s:%s:%s", dir->app ? dir->app : "", limen_doc_get_id (dir->doc), newname);
  g_mutex_lock (&fs->lock);
  if ((old = g_hash_table_lookup (dir->temps, newname)))
    {
      g_hash_table_remove (dir->temps, newname);
      drop_temp_locked (fs, dir, old);
    }
  temp = limen_fuse_node_new_locked (fs, NODE_TEMP, key, dir->app, dir->doc, dir, fd);
  temp->temp_name = g_strdup (newname);
  temp->hidden = g_strdup (hidden);
  temp->ref = 1; /* the temps table */
  g_hash_table_insert (dir->temps, g_strdup (newname), temp);
  /* The kernel keeps the file's node under @newname in this view. */
  mark_doc_file_locked (fs, dir->doc, &st, FALSE);
  inval_other_views (fs, dir, docname);
  g_mutex_unlock (&fs->lock);
  return 0;
}

/* Single-file document directory: temps move, possibly over the document, and the
 * document's own file may become a temp. */
static int
rename_in_doc_dir (LimenFuse *fs, Node *dir, const char *name, const char *newname, unsigned int flags)
{
  g_autofree char *docname = limen_doc_dup_name (dir->doc);
  Node *temp = NULL;
  int err;

  if (flags & RENAME_EXCHANGE)
    return EINVAL;
  g_mutex_lock (&fs->lock);
  if (dir->temps && (temp = g_hash_table_lookup (dir->temps, name)))
    temp->ref++;
  g_mutex_unlock (&fs->lock);
  if (temp == NULL && strcmp (name, docname) != 0)
    return ENOENT;
  if (temp == NULL)
    return strcmp (newname, docname) == 0 ? 0 : move_doc_file_to_temp (fs, dir, docname, newname, flags);
  if (strcmp (newname, docname) == 0)
    {
      struct stat replaced;

      err = save_temp_over (fs, dir, temp, docname, flags, &replaced);
      if (err == 0)
        adopt_saved_temp (fs, dir, temp, docname, &replaced);
    }
  else
    err = rename_temp (fs, dir, temp, newname, flags);
  limen_fuse_node_put (fs, temp);
  return err;
}

void
limen_fuse_op_rename (fuse_req_t req, fuse_ino_t parent_ino, const char *name, fuse_ino_t newparent_ino,
                      const char *newname, unsigned int flags)
{
  LimenFuse *fs = req_fs (req);
  int err;
  Node *parent = writable_parent (fs, req, parent_ino, name, &err);
  Node *newparent = NULL;

  if (parent == NULL)
    {
      fuse_reply_err (req, err);
      return;
    }
  /* Out of the document's folder, or into another view of it, is EXDEV whatever the target
   * folder is (the root, by-app, a read-only document), as the reference answers: a file
   * manager then copies instead. */
  newparent = limen_fuse_node_get (fs, newparent_ino);
  if (newparent && (newparent->doc != parent->doc || g_strcmp0 (newparent->app, parent->app) != 0 ||
                    newparent->kind != parent->kind))
    err = EXDEV;
  else
    {
      limen_fuse_node_put (fs, newparent);
      newparent = writable_parent (fs, req, newparent_ino, newname, &err);
      if (newparent == NULL)
        err = err ? err : ESTALE;
    }
  if (err)
    ;
  else if (parent->kind == NODE_FILE)
    err = syscall (SYS_renameat2, parent->fd, name, newparent->fd, newname, flags) != 0 ? errno : 0;
  else
    err = rename_in_doc_dir (fs, parent, name, newname, flags);
  limen_fuse_node_put (fs, newparent);
  limen_fuse_node_put (fs, parent);
  fuse_reply_err (req, err);
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
  Node *parent = writable_parent (fs, req, parent_ino, name, &err);

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
  Node *parent = writable_parent (fs, req, newparent, newname, &err);
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
