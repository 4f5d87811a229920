/* limen-documents — FUSE rename: atomic saves over a single-file document (a temporary
 * file renamed over the document's name), a document's file renamed away and back, and
 * renames inside an exported directory.
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
    limen_fuse_mark_doc_file_locked (fs, dir->doc, replaced, FALSE);
  if (pfd >= 0 && fstat (pfd, &st) == 0)
    {
      limen_fuse_mark_doc_file_locked (fs, dir->doc, &st, TRUE);
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
  limen_fuse_inval_other_views (fs, dir, docname);
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
          limen_fuse_drop_temp_locked (fs, dir, old);
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
      limen_fuse_drop_temp_locked (fs, dir, old);
    }
  temp = limen_fuse_node_new_locked (fs, NODE_TEMP, key, dir->app, dir->doc, dir, fd);
  temp->temp_name = g_strdup (newname);
  temp->hidden = g_strdup (hidden);
  temp->ref = 1; /* the temps table */
  g_hash_table_insert (dir->temps, g_strdup (newname), temp);
  /* The kernel keeps the file's node under @newname in this view. */
  limen_fuse_mark_doc_file_locked (fs, dir->doc, &st, FALSE);
  limen_fuse_inval_other_views (fs, dir, docname);
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
  Node *parent = limen_fuse_writable_parent (fs, req, parent_ino, name, &err);
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
      newparent = limen_fuse_writable_parent (fs, req, newparent_ino, newname, &err);
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
