/* limen-documents — the FUSE operations on extended attributes. The host file's xattrs
 * show through, with user.document-portal.host-path added; a single-file document's file
 * and its temporary files take no changes (EPERM), files inside an exported directory take
 * user.* ones with write access.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fuse-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

static gboolean
xattr_node_ok (LimenFuse *fs, fuse_req_t req, Node *node, guint need)
{
  return (node->kind == NODE_FILE || node->kind == NODE_TEMP) && limen_fuse_node_gate (fs, req, node) &&
         (limen_fuse_node_rights (node) & need) == need;
}

static void
reply_xattr_value (fuse_req_t req, size_t size, const void *value, ssize_t len)
{
  if (len < 0)
    fuse_reply_err (req, errno);
  else if (size == 0)
    fuse_reply_xattr (req, len);
  else if ((size_t) len > size)
    fuse_reply_err (req, ERANGE);
  else
    fuse_reply_buf (req, value, len);
}

void
limen_fuse_op_getxattr (fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
  LimenFuse *fs = req_fs (req);
  Node *node = limen_fuse_node_get_or_stale (fs, req, ino);
  char proc[64];
  g_autofree char *buf = NULL;
  ssize_t len;

  if (node == NULL)
    return;
  if (!xattr_node_ok (fs, req, node, LIMEN_DOC_PERM_READ))
    {
      limen_fuse_node_put (fs, node);
      fuse_reply_err (req, node->kind == NODE_FILE || node->kind == NODE_TEMP ? EACCES : ENODATA);
      return;
    }
  if (strcmp (name, HOST_PATH_XATTR) == 0)
    {
      g_autofree char *path = node->kind == NODE_FILE ? limen_doc_fd_path (node->fd) : NULL;

      limen_fuse_node_put (fs, node);
      if (path == NULL)
        {
          fuse_reply_err (req, ENODATA);
          return;
        }
      reply_xattr_value (req, size, path, strlen (path));
      return;
    }
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
  buf = g_malloc (size ? size : 1);
  len = node->kind == NODE_TEMP ? fgetxattr (node->fd, name, buf, size) : getxattr (proc, name, buf, size);
  limen_fuse_node_put (fs, node);
  reply_xattr_value (req, size, buf, len);
}

void
limen_fuse_op_listxattr (fuse_req_t req, fuse_ino_t ino, size_t size)
{
  LimenFuse *fs = req_fs (req);
  Node *node = limen_fuse_node_get_or_stale (fs, req, ino);
  char proc[64];
  char buf[65536];
  ssize_t len = 0;

  if (node == NULL)
    return;
  if (node->kind == NODE_ROOT || node->kind == NODE_BY_APP || node->kind == NODE_APP_DIR)
    {
      limen_fuse_node_put (fs, node);
      fuse_reply_err (req, ENOTSUP);   /* as the reference: no xattrs on the fixed directories */
      return;
    }
  if (!xattr_node_ok (fs, req, node, LIMEN_DOC_PERM_READ))
    {
      /* A document's directory, or a file the view may not read: an empty list. */
      limen_fuse_node_put (fs, node);
      reply_xattr_value (req, size, "", 0);
      return;
    }
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
  len = node->kind == NODE_TEMP ? flistxattr (node->fd, buf, sizeof buf - sizeof HOST_PATH_XATTR)
                                : listxattr (proc, buf, sizeof buf - sizeof HOST_PATH_XATTR);
  if (len < 0)
    len = 0;
  if (node->kind == NODE_FILE)
    {
      memcpy (buf + len, HOST_PATH_XATTR, sizeof HOST_PATH_XATTR);
      len += sizeof HOST_PATH_XATTR;
    }
  limen_fuse_node_put (fs, node);
  reply_xattr_value (req, size, buf, len);
}

/* The node of @ino when the caller may change its user xattr @name; NULL after replying. */
static Node *
xattr_node_for_change (LimenFuse *fs, fuse_req_t req, fuse_ino_t ino, const char *name)
{
  Node *node = limen_fuse_node_get_or_stale (fs, req, ino);

  int err = 0;

  if (node == NULL)
    return NULL;
  /* Only the user xattrs of a file inside an exported directory, never the host path we
   * show (EPERM as the kernel answers for a namespace that is not allowed); as in the
   * reference, a single-file document's file and its temporary files keep theirs (EPERM);
   * a view without write access: EACCES. */
  if ((node->kind != NODE_FILE && node->kind != NODE_TEMP) || !limen_fuse_node_is_dir_doc (node) ||
      !g_str_has_prefix (name, "user.") || strcmp (name, HOST_PATH_XATTR) == 0)
    err = EPERM;
  else if (!xattr_node_ok (fs, req, node, LIMEN_DOC_PERM_WRITE))
    err = EACCES;
  if (err)
    {
      limen_fuse_node_put (fs, node);
      fuse_reply_err (req, err);
      return NULL;
    }
  return node;
}

void
limen_fuse_op_setxattr (fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size, int flags)
{
  LimenFuse *fs = req_fs (req);
  Node *node = xattr_node_for_change (fs, req, ino, name);
  char proc[64];
  int r;

  if (node == NULL)
    return;
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
  r = node->kind == NODE_TEMP ? fsetxattr (node->fd, name, value, size, flags)
                              : setxattr (proc, name, value, size, flags);
  limen_fuse_node_put (fs, node);
  fuse_reply_err (req, r == 0 ? 0 : errno);
}

void
limen_fuse_op_removexattr (fuse_req_t req, fuse_ino_t ino, const char *name)
{
  LimenFuse *fs = req_fs (req);
  Node *node = xattr_node_for_change (fs, req, ino, name);
  char proc[64];
  int r;

  if (node == NULL)
    return;
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
  r = node->kind == NODE_TEMP ? fremovexattr (node->fd, name) : removexattr (proc, name);
  limen_fuse_node_put (fs, node);
  fuse_reply_err (req, r == 0 ? 0 : errno);
}
