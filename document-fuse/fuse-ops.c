/* limen-documents — the FUSE operations on files and attributes (libfuse3 low level),
 * and the operations table. Listings are in fuse-listing.c, changes to names in
 * fuse-dir-ops.c and fuse-rename.c, extended attributes in fuse-xattr.c.
 *
 * Layout:  /                      host only: by-app + one DOCID dir per document
 *          /by-app/APPID/         that app (or the host): the documents it was granted
 *          .../DOCID/NAME         the file (or, for export-directory, the directory)
 *
 * Requests run on libfuse's worker threads. Every operation that reaches a document
 * checks the caller's view (fuse-caller.c) and the view's rights at that moment.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fuse-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "app-info.h"

static void
op_init (void *userdata, struct fuse_conn_info *conn)
{
  /* Large requests: fewer round trips for sequential I/O. */
  conn->max_write = 1024 * 1024;
  conn->max_readahead = 1024 * 1024;
  if (conn->capable & FUSE_CAP_SPLICE_WRITE)
    conn->want |= FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
  if (conn->capable & FUSE_CAP_SPLICE_READ)
    conn->want |= FUSE_CAP_SPLICE_READ;
  /* We revoke through explicit invalidation; writes go straight to the host file so a
   * revoked handle can never flush data later. */
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  /* Host-side changes are caught at open (keep_cache only while the file is unchanged);
   * automatic invalidation would add a GETATTR to reads of a cached file. */
  conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
}

/* Document @id for a lookup of its folder. While the one-time import runs, one it has not
 * reached is brought in by the main thread, which this worker waits for: an app opens
 * DOCID/NAME right after the switch from the reference. Not for the main thread's own
 * requests (the import opens the paths the reference recorded): it would wait for itself. */
static LimenDoc *
lookup_doc (LimenFuse *fs, fuse_req_t req, const char *id)
{
  if (fuse_req_ctx (req)->pid == getpid ())
    return limen_doc_model_lookup (fs->model, id);
  return limen_doc_model_lookup_waiting (fs->model, id);
}

/* Lookups, one per kind of parent. Each returns the node with a reference, or NULL with
 * *@err set; a gate entry sets *@timeout to GATE_TIMEOUT so the kernel never keeps it. */

static Node *
lookup_in_root (LimenFuse *fs, fuse_req_t req, Node *parent, const char *name, double *timeout)
{
  g_autoptr(LimenDoc) doc = NULL;
  g_autofree char *key = NULL;
  Node *node;

  if (strcmp (name, "by-app") == 0)
    {
      g_mutex_lock (&fs->lock);
      node = fs->by_app;
      node->ref++;
      g_mutex_unlock (&fs->lock);
      return node;
    }
  if (!limen_fuse_caller_allowed (fs, req, NULL) || !(doc = lookup_doc (fs, req, name)))
    return NULL;
  key = g_strdup_printf ("d::%s", name);
  limen_fuse_doc_mark_seen (fs, doc);
  *timeout = GATE_TIMEOUT;
  return limen_fuse_node_ensure (fs, NODE_DOC_DIR, key, NULL, doc, parent, -1);
}

static Node *
lookup_in_by_app (LimenFuse *fs, fuse_req_t req, Node *parent, const char *name, double *timeout)
{
  g_autofree char *key = NULL;

  if (!limen_app_id_is_valid (name) || !limen_fuse_caller_allowed (fs, req, name))
    return NULL;
  key = g_strdup_printf ("a:%s", name);
  *timeout = GATE_TIMEOUT;
  return limen_fuse_node_ensure (fs, NODE_APP_DIR, key, name, NULL, parent, -1);
}

static Node *
lookup_in_app_dir (LimenFuse *fs, fuse_req_t req, Node *parent, const char *name)
{
  g_autoptr(LimenDoc) doc = lookup_doc (fs, req, name);
  g_autofree char *key = NULL;

  if (doc == NULL || limen_doc_get_perms (doc, parent->app) == 0)
    return NULL;
  key = g_strdup_printf ("d:%s:%s", parent->app, name);
  limen_fuse_doc_mark_seen (fs, doc);
  return limen_fuse_node_ensure (fs, NODE_DOC_DIR, key, parent->app, doc, parent, -1);
}

/* In a document's directory: its file, or a temporary file of a save in progress. */
static Node *
lookup_in_doc_dir (LimenFuse *fs, Node *parent, const char *name, int *err)
{
  g_autofree char *docname = limen_doc_dup_name (parent->doc);
  Node *node = NULL;

  if (limen_fuse_node_rights (parent) == 0)
    return NULL;
  if (strcmp (name, docname) == 0)
    {
      struct stat st;
      int fd = limen_fuse_open_doc_file (fs, parent->doc, &st);

      if (fd < 0)
        {
          *err = -fd;
          return NULL;
        }
      return limen_fuse_file_node (fs, parent, parent->doc, fd, &st, TRUE);
    }
  g_mutex_lock (&fs->lock);
  if (parent->temps && (node = g_hash_table_lookup (parent->temps, name)))
    node->ref++;
  g_mutex_unlock (&fs->lock);
  return node;
}

/* Below an exported directory: the host entry, never following a symlink. */
static Node *
lookup_in_dir (LimenFuse *fs, Node *parent, const char *name, int *err)
{
  struct stat st;
  Node *node;
  int fd;

  if (limen_fuse_node_rights (parent) == 0 || !limen_fuse_node_within_doc (fs, parent))
    return NULL;
  fd = openat (parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) != 0)
    {
      *err = errno;
      if (fd >= 0)
        close (fd);
      return NULL;
    }
  node = limen_fuse_file_node (fs, parent, parent->doc, fd, &st, FALSE);
  limen_fuse_node_set_name (fs, node, name);
  return node;
}

static void
op_lookup (fuse_req_t req, fuse_ino_t parent_ino, const char *name)
{
  LimenFuse *fs = req_fs (req);
  Node *parent = limen_fuse_node_get_or_stale (fs, req, parent_ino);
  Node *node = NULL;
  double timeout = ENTRY_TIMEOUT;
  int err = ENOENT;

  if (parent == NULL)
    return;
  if (limen_fuse_name_is_valid (name))
    switch (parent->kind)
      {
      case NODE_ROOT:
        node = lookup_in_root (fs, req, parent, name, &timeout);
        break;
      case NODE_BY_APP:
        node = lookup_in_by_app (fs, req, parent, name, &timeout);
        break;
      case NODE_APP_DIR:
        node = lookup_in_app_dir (fs, req, parent, name);
        timeout = DOC_ENTRY_TIMEOUT;
        break;
      case NODE_DOC_DIR:
        node = lookup_in_doc_dir (fs, parent, name, &err);
        break;
      case NODE_FILE:
        node = lookup_in_dir (fs, parent, name, &err);
        break;
      case NODE_TEMP:
        err = ENOTDIR;
        break;
      }
  limen_fuse_node_put (fs, parent);
  if (node)
    limen_fuse_reply_entry (fs, req, node, timeout);
  else
    fuse_reply_err (req, err);
}

static void
do_forget (LimenFuse *fs, fuse_ino_t ino, uint64_t nlookup)
{
  Node *node;

  g_mutex_lock (&fs->lock);
  node = g_hash_table_lookup (fs->inodes, GSIZE_TO_POINTER (ino));
  if (node && node->nlookup > 0)
    {
      node->nlookup = nlookup >= node->nlookup ? 0 : node->nlookup - nlookup;
      if (node->nlookup == 0)
        limen_fuse_node_unref_locked (fs, node);
    }
  g_mutex_unlock (&fs->lock);
}

static void
op_forget (fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
  do_forget (req_fs (req), ino, nlookup);
  fuse_reply_none (req);
}

static void
op_forget_multi (fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
  for (size_t i = 0; i < count; i++)
    do_forget (req_fs (req), forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none (req);
}

static void
op_getattr (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  LimenFuse *fs = req_fs (req);
  Node *node = limen_fuse_node_get_or_stale (fs, req, ino);
  struct stat st;
  int err;

  if (node == NULL)
    return;
  /* A host file's attributes are never kept, so every stat by path comes here: the moment
   * to notice that a host program replaced the file (stat then shows the new one) or
   * deleted it. A stat by path of a deleted file gets ESTALE, and the kernel walks the path
   * again (LOOKUP_REVAL), which finds nothing there; an fstat() can only come from a holder
   * of an open handle (the kernel does not tell which), and gets the file's attributes, as
   * on the host. The kernel does name the handle when it asks for one (a read past the
   * cached size, a seek to the end): then the handle's own file answers, without waiting
   * for releases in flight (5 ms each time a held file was replaced or deleted). */
  if (node->kind == NODE_FILE && fi != NULL)
    err = fstat (((Handle *) (uintptr_t) fi->fh)->fd, &st) == 0 ? limen_fuse_node_stat_file (fs, node, &st)
                                                                : errno;
  else if (node->kind == NODE_FILE && fstat (node->fd, &st) == 0)
    {
      if (limen_fuse_node_left_behind (fs, node, &st))
        {
          if (!limen_fuse_node_still_open (fs, node))
            {
              limen_fuse_node_put (fs, node);
              fuse_reply_err (req, ESTALE);
              return;
            }
        }
      err = limen_fuse_node_stat_file (fs, node, &st);
    }
  else
    err = limen_fuse_node_stat (fs, node, &st);
  if (err)
    fuse_reply_err (req, err);
  else
    fuse_reply_attr (req, &st, limen_fuse_attr_timeout (node));
  limen_fuse_node_put (fs, node);
}

/* Ownership never changes through the mount; a chown to the owner the file has (cp -p,
 * rsync, editors keeping attributes) is the no-op it is on the host. */
static gboolean
owner_unchanged (Node *node, const struct stat *attr, int to_set)
{
  struct stat st;

  if (fstatat (node->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
    return FALSE;
  return (!(to_set & FUSE_SET_ATTR_UID) || attr->st_uid == st.st_uid) &&
         (!(to_set & FUSE_SET_ATTR_GID) || attr->st_gid == st.st_gid);
}

static void
op_setattr (fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
  LimenFuse *fs = req_fs (req);
  Node *node = limen_fuse_node_get_or_stale (fs, req, ino);
  int err = 0;
  char proc[64];

  if (node == NULL)
    return;
  /* The directories are ours, not the host's: nothing about them can be set. */
  if (node->kind != NODE_FILE && node->kind != NODE_TEMP)
    {
      err = EPERM;
      goto out;
    }
  if (!limen_fuse_node_gate (fs, req, node) || !(limen_fuse_node_rights (node) & LIMEN_DOC_PERM_WRITE))
    {
      err = EACCES;
      goto out;
    }
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
  if ((to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) && !owner_unchanged (node, attr, to_set))
    {
      err = EPERM;
      goto out;
    }
  if (to_set & FUSE_SET_ATTR_MODE)
    {
      if (chmod (proc, attr->st_mode & 07777) != 0)
        {
          err = errno;
          goto out;
        }
    }
  if (to_set & FUSE_SET_ATTR_SIZE)
    {
      int fd = fi ? ((Handle *) (uintptr_t) fi->fh)->fd : -1;
      g_autofd int own = -1;

      if (fd < 0)
        fd = own = limen_fuse_node_reopen (node, O_WRONLY);
      if (fd < 0 || ftruncate (fd, attr->st_size) != 0)
        {
          err = errno;
          goto out;
        }
    }
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))
    {
      struct timespec tv[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT } };

      if (to_set & FUSE_SET_ATTR_ATIME_NOW)
        tv[0].tv_nsec = UTIME_NOW;
      else if (to_set & FUSE_SET_ATTR_ATIME)
        tv[0] = attr->st_atim;
      if (to_set & FUSE_SET_ATTR_MTIME_NOW)
        tv[1].tv_nsec = UTIME_NOW;
      else if (to_set & FUSE_SET_ATTR_MTIME)
        tv[1] = attr->st_mtim;
      if (utimensat (AT_FDCWD, proc, tv, 0) != 0)
        {
          err = errno;
          goto out;
        }
    }
out:
  if (err)
    fuse_reply_err (req, err);
  else
    {
      struct stat st;

      err = limen_fuse_node_stat (fs, node, &st);
      if (err)
        fuse_reply_err (req, err);
      else
        fuse_reply_attr (req, &st, limen_fuse_attr_timeout (node));
    }
  limen_fuse_node_put (fs, node);
}

static void
op_readlink (fuse_req_t req, fuse_ino_t ino)
{
  LimenFuse *fs = req_fs (req);
  Node *node = limen_fuse_node_get_or_stale (fs, req, ino);
  char buf[PATH_MAX + 1];
  ssize_t n;

  if (node == NULL)
    return;
  if (node->kind != NODE_FILE || !(limen_fuse_node_rights (node) & LIMEN_DOC_PERM_READ) || !limen_fuse_node_gate (fs, req, node))
    {
      limen_fuse_node_put (fs, node);
      fuse_reply_err (req, EACCES);
      return;
    }
  n = readlinkat (node->fd, "", buf, PATH_MAX);
  if (n < 0)
    fuse_reply_err (req, errno);
  else
    {
      buf[n] = '\0';
      fuse_reply_readlink (req, buf);
    }
  limen_fuse_node_put (fs, node);
}

/* Open-time check that is also the revocation point: the rights @flags need. */
static gboolean
rights_allow (guint rights, int flags)
{
  int acc = flags & O_ACCMODE;

  if ((acc == O_RDONLY || acc == O_RDWR) && !(rights & LIMEN_DOC_PERM_READ))
    return FALSE;
  if ((acc == O_WRONLY || acc == O_RDWR || (flags & O_TRUNC)) && !(rights & LIMEN_DOC_PERM_WRITE))
    return FALSE;
  return TRUE;
}

static void
handle_free (LimenFuse *fs, Handle *h)
{
  close (h->fd);
  g_mutex_lock (&fs->lock);
  h->node->n_open--;
  g_cond_broadcast (&fs->release_cond);
  g_mutex_unlock (&fs->lock);
  limen_fuse_node_put (fs, h->node);
  g_free (h);
}

void
limen_fuse_finish_open (LimenFuse *fs, fuse_req_t req, Node *node, int fd, struct fuse_file_info *fi,
                        const struct fuse_entry_param *entry)
{
  Handle *h = g_new0 (Handle, 1);
  struct stat st;

  h->node = node; /* keeps the caller's reference */
  h->fd = fd;
  fi->fh = (uintptr_t) h;
  g_mutex_lock (&fs->lock);
  node->n_open++;
  g_mutex_unlock (&fs->lock);
  /* A write-only handle bypasses the kernel's page cache. Its writes then skip the copy
   * into the cache and the kernel's per-write GETXATTR of security.capability (asked
   * on the cached path to decide whether to clear privileges), and still reach
   * op_write one by one, where the rights are checked. It can neither be read nor
   * mmapped, so nothing that needs the cache is lost; the kernel drops cached pages of
   * the range each direct write covers, so readers never see stale data. */
  if ((fi->flags & O_ACCMODE) == O_WRONLY)
    fi->direct_io = 1;
  /* Keep the page cache only while the file is unchanged since the last open. */
  if (fstat (fd, &st) == 0)
    {
      g_mutex_lock (&fs->lock);
      fi->keep_cache = (st.st_mtim.tv_sec == node->cached_mtime.tv_sec &&
                        st.st_mtim.tv_nsec == node->cached_mtime.tv_nsec &&
                        st.st_size == node->cached_size);
      node->cached_mtime = st.st_mtim;
      node->cached_size = st.st_size;
      g_mutex_unlock (&fs->lock);
    }
  /* The pages go (no keep_cache), but the kernel may still hold the old size for up to
   * ATTR_TIMEOUT, and a read stops there. Drop the attributes (offset -1: attributes
   * only) before the open returns, so the first read asks for them again. Safe from a
   * worker: the kernel takes no lock here that an opening task holds. */
  if (!fi->keep_cache && entry == NULL && fs->se)
    fuse_lowlevel_notify_inval_inode (fs->se, node->ino, -1, 0);
  if (entry)
    {
      if (fuse_reply_create (req, entry, fi) != 0)
        handle_free (fs, h);
    }
  else if (fuse_reply_open (req, fi) != 0)
    handle_free (fs, h);
}

static void
op_open (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  LimenFuse *fs = req_fs (req);
  Node *node = limen_fuse_node_get_or_stale (fs, req, ino);
  struct stat st;
  int fd;

  if (node == NULL)
    return;
  if ((node->kind != NODE_FILE && node->kind != NODE_TEMP) || !limen_fuse_node_gate (fs, req, node) ||
      !rights_allow (limen_fuse_node_rights (node), fi->flags) || !limen_fuse_node_within_doc (fs, node))
    {
      limen_fuse_node_put (fs, node);
      fuse_reply_err (req, EACCES);
      return;
    }
  if (fstatat (node->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
    st.st_mode = 0;   /* refused below, not read uninitialised */
  else if (node->kind == NODE_FILE && limen_fuse_node_left_behind (fs, node, &st))
    {
      /* The kernel walks the path again (LOOKUP_REVAL) and opens the new file, or finds
       * none where the host deleted it. */
      limen_fuse_node_put (fs, node);
      fuse_reply_err (req, ESTALE);
      return;
    }
  if (!S_ISREG (st.st_mode))
    {
      limen_fuse_node_put (fs, node);
      fuse_reply_err (req, S_ISDIR (st.st_mode) ? EISDIR : EACCES);
      return;
    }
  fd = limen_fuse_node_reopen (node, fi->flags);
  if (fd < 0)
    {
      int err = errno;

      limen_fuse_node_put (fs, node);
      fuse_reply_err (req, err);
      return;
    }
  limen_fuse_finish_open (fs, req, node, fd, fi, NULL);
}

static Handle *
handle_checked (fuse_req_t req, struct fuse_file_info *fi, guint need)
{
  Handle *h = (Handle *) (uintptr_t) fi->fh;

  if ((limen_fuse_node_rights (h->node) & need) != need)
    {
      fuse_reply_err (req, EACCES);
      return NULL;
    }
  return h;
}

static void
op_read (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
  Handle *h = handle_checked (req, fi, LIMEN_DOC_PERM_READ);
  struct fuse_bufvec buf = FUSE_BUFVEC_INIT (size);

  if (h == NULL)
    return;
  buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
  buf.buf[0].fd = h->fd;
  buf.buf[0].pos = off;
  fuse_reply_data (req, &buf, FUSE_BUF_SPLICE_MOVE);
}

static void
op_write (fuse_req_t req, fuse_ino_t ino, const char *data, size_t size, off_t off, struct fuse_file_info *fi)
{
  Handle *h = handle_checked (req, fi, LIMEN_DOC_PERM_WRITE);
  ssize_t n;

  if (h == NULL)
    return;
  n = pwrite (h->fd, data, size, off);
  if (n < 0)
    fuse_reply_err (req, errno);
  else
    fuse_reply_write (req, n);
}

/* Writes spliced from the channel into the host file when the kernel allows it. */
static void
op_write_buf (fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in_buf, off_t off, struct fuse_file_info *fi)
{
  Handle *h = handle_checked (req, fi, LIMEN_DOC_PERM_WRITE);
  struct fuse_bufvec out = FUSE_BUFVEC_INIT (fuse_buf_size (in_buf));
  ssize_t n;

  if (h == NULL)
    return;
  out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
  out.buf[0].fd = h->fd;
  out.buf[0].pos = off;
  n = fuse_buf_copy (&out, in_buf, 0);
  if (n < 0)
    fuse_reply_err (req, -n);
  else
    fuse_reply_write (req, n);
}

static void
op_release (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  LimenFuse *fs = req_fs (req);
  handle_free (fs, (Handle *) (uintptr_t) fi->fh);
  fuse_reply_err (req, 0);
}

static void
op_fsync (fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
  Handle *h = (Handle *) (uintptr_t) fi->fh;
  int r = datasync ? fdatasync (h->fd) : fsync (h->fd);

  fuse_reply_err (req, r == 0 ? 0 : errno);
}

static void
op_statfs (fuse_req_t req, fuse_ino_t ino)
{
  LimenFuse *fs = req_fs (req);
  Node *node = limen_fuse_node_get (fs, ino);
  struct statvfs sv = { .f_bsize = 4096, .f_frsize = 4096, .f_namemax = NAME_MAX };

  if (node && node->fd >= 0)
    fstatvfs (node->fd, &sv);
  limen_fuse_node_put (fs, node);
  fuse_reply_statfs (req, &sv);
}

static void
op_access (fuse_req_t req, fuse_ino_t ino, int mask)
{
  LimenFuse *fs = req_fs (req);
  Node *node = limen_fuse_node_get_or_stale (fs, req, ino);
  struct stat st;
  int err = 0;

  if (node == NULL)
    return;
  if (!limen_fuse_node_gate (fs, req, node))
    err = EACCES;
  else if ((err = limen_fuse_node_stat (fs, node, &st)) == 0 && mask != F_OK)
    {
      if (((mask & R_OK) && !(st.st_mode & 0444)) || ((mask & W_OK) && !(st.st_mode & 0222)) ||
          ((mask & X_OK) && !(st.st_mode & 0111)))
        err = EACCES;
    }
  limen_fuse_node_put (fs, node);
  fuse_reply_err (req, err);
}

const struct fuse_lowlevel_ops limen_fuse_lowlevel_ops = {
  .init = op_init,
  .lookup = op_lookup,
  .forget = op_forget,
  .forget_multi = op_forget_multi,
  .getattr = op_getattr,
  .setattr = op_setattr,
  .readlink = op_readlink,
  .mknod = limen_fuse_op_mknod,
  .mkdir = limen_fuse_op_mkdir,
  .unlink = limen_fuse_op_unlink,
  .rmdir = limen_fuse_op_rmdir,
  .symlink = limen_fuse_op_symlink,
  .rename = limen_fuse_op_rename,
  .link = limen_fuse_op_link,
  .open = op_open,
  .read = op_read,
  .write = op_write,
  .write_buf = op_write_buf,
  .release = op_release,
  .fsync = op_fsync,
  .opendir = limen_fuse_op_opendir,
  .readdir = limen_fuse_op_readdir,
  .releasedir = limen_fuse_op_releasedir,
  .statfs = op_statfs,
  .setxattr = limen_fuse_op_setxattr,
  .getxattr = limen_fuse_op_getxattr,
  .listxattr = limen_fuse_op_listxattr,
  .removexattr = limen_fuse_op_removexattr,
  .access = op_access,
  .create = limen_fuse_op_create,
};


