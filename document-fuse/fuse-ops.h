/* limen-documents — the FUSE filesystem at $XDG_RUNTIME_DIR/doc (libfuse3 low level).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "doc-model.h"

G_BEGIN_DECLS

typedef struct _LimenFuse LimenFuse;

/* Prepare the filesystem for @mountpoint (nothing is mounted yet). */
LimenFuse *limen_fuse_new (LimenDocModel *model, const char *mountpoint);
/* Clean a stale mount, mount, and start the worker threads; never waits on the channel. */
gboolean limen_fuse_start (LimenFuse *fs, GError **error);
/* Unmount (lazily, so open files cannot hold us), abort the connection, stop the
 * threads, free. Bounded in time even with files open. */
void limen_fuse_stop (LimenFuse *fs);
/* Called on the main thread when the mount was taken away under us (an unmount ended
 * the FUSE loop without limen_fuse_stop). */
typedef void (*LimenFuseLostFunc) (gpointer user_data);
void limen_fuse_set_lost_func (LimenFuse *fs, LimenFuseLostFunc func, gpointer user_data);
/* The mount point. */
const char *limen_fuse_get_mountpoint (LimenFuse *fs);
/* Something (a predecessor's filesystem, live or dead) is mounted at the mount point. */
gboolean limen_fuse_mountpoint_in_use (LimenFuse *fs);
/* TRUE when @fd lies on our mount or a bind mount of it (found without a request to the
 * filesystem; @mnt_id, @dev and @ino are @fd's from statx, @mnt_id -1 when the kernel's
 * statx cannot tell); then
 * *@doc / *@app tell which document's folder (DOCID or by-app/APP/DOCID) it lies directly
 * in, NULL doc when none, and *@is_doc_entry whether it is the document's own entry there:
 * the file of a file document, the directory of a directory document. */
gboolean limen_fuse_identify_fd (LimenFuse *fs, int fd, int mnt_id, dev_t dev, guint64 ino, LimenDoc **doc,
                                 char **app, gboolean *is_doc_entry);
/* For a file or folder of our mount that lies below the top of a directory document, by
 * the inode number the kernel reports for it (@fd's statx, without a request to us): a new
 * O_PATH fd of the host file behind it, with its document and the view it was reached
 * through (*@view NULL: the host's). -1 when @ino is no such node. */
int limen_fuse_dup_inner_node (LimenFuse *fs, guint64 ino, LimenDoc **doc, char **view);

G_END_DECLS
