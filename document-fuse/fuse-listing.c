/* limen-documents — FUSE directory listings: opendir, readdir, releasedir. The
 * kernel keeps the listings of by-app/ and by-app/APPID (a generation tells when to refill
 * them); a document's directory is listed afresh, with a signature of its names.
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
