/* Limen — the host path behind a file descriptor an app passed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gunixfdlist.h>

#include "fd-check.h"

G_BEGIN_DECLS

/* The path, as this process sees it, of the file behind fd @index of @fd_list sent by @info:
 * the fd must pass limen_fd_check with @flags (errors name @key), and the path must still be
 * that very file (same device and inode), else NotAllowed. @out (may be NULL) gets the
 * check's findings; clear it with limen_fd_info_clear. */
char *limen_fd_host_path (LimenAppInfo *info,
                          GUnixFDList  *fd_list,
                          gint32        index,
                          const char   *key,
                          LimenFdFlags  flags,
                          LimenFdInfo  *out,
                          GError      **error);

G_END_DECLS
