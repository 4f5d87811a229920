/* Limen — what a passed file descriptor really grants its caller.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "app-info.h"

G_BEGIN_DECLS

typedef enum {
  LIMEN_FD_ALLOW_REGULAR   = 1 << 0,  /* a regular file is acceptable */
  LIMEN_FD_ALLOW_DIRECTORY = 1 << 1,  /* a directory is acceptable */
  LIMEN_FD_ALLOW_O_PATH    = 1 << 2,  /* an O_PATH fd is acceptable */
  LIMEN_FD_NEED_READ       = 1 << 3,  /* the caller must be able to read it */
  LIMEN_FD_NEED_WRITE      = 1 << 4,  /* the caller must be able to write it */
  LIMEN_FD_NEED_DELETE     = 1 << 5,  /* the caller must be able to unlink it where it sees it */
  LIMEN_FD_RIGHTS_FROM_VIEW = 1 << 6, /* a read-only fd counts like an O_PATH one: what the caller
                                         may do with the file where it sees it (libportal's
                                         TrashFile sends O_RDONLY when built without O_PATH) */
} LimenFdFlags;

typedef struct {
  char    *path;        /* the file's path as the caller sees it (== host path for host callers) */
  dev_t    dev;
  ino_t    ino;
  gboolean is_dir;
  gboolean readable;    /* what the caller may read through it */
  gboolean writable;    /* what the caller may write through it */
} LimenFdInfo;

/* Check @fd, received from the caller @info, against @flags; fill @out.
 * Fails with INVALID_ARGUMENT (wrong type/mode) or NOT_ALLOWED (a file the caller
 * cannot reach itself, or lacks the rights asked for). */
gboolean limen_fd_check (LimenAppInfo *info, int fd, LimenFdFlags flags,
                         LimenFdInfo *out, GError **error);

/* Free the strings of @fdinfo. */
void limen_fd_info_clear (LimenFdInfo *fdinfo);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (LimenFdInfo, limen_fd_info_clear)

/* Take the fd at @index from @fd_list with bounds checking: -1 and INVALID_ARGUMENT
 * naming @key when there is no such fd. The result is a dup the caller owns. */
int limen_fd_list_get (GUnixFDList *fd_list, gint32 index, const char *key, GError **error);

G_END_DECLS
