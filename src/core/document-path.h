/* Limen — where a sandboxed app sees the document store, and what a path there names.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

#include "app-info.h"

G_BEGIN_DECLS

/* Split @path, a path in an app's view of the document store, into the document id and the
 * path below the document (@doc_id and @rest: new strings). Both mount locations count:
 * /run/user/@uid/doc (the store itself) and /run/flatpak/doc (where Flatpak mounts it in the
 * sandbox). FALSE when @path is elsewhere, names no file inside a document, or climbs out
 * with "..". */
gboolean limen_document_path_parse (const char *path, guint uid, char **doc_id, char **rest);

/* Split @path, a path in the host's view of the document store mounted at @mountpoint
 * (what a file's /proc/self/fd link says: MOUNTPOINT/ID/... or MOUNTPOINT/by-app/APP/ID/...),
 * into the document id and the path below it, as limen_document_path_parse does. */
gboolean limen_document_store_path_parse (const char *path, const char *mountpoint, char **doc_id, char **rest);

/* The host path that @rest below a document names, given the document's host file
 * @host_path (the store's Info answer): the document's folder joined with @rest. */
char *limen_document_path_to_host (const char *host_path, const char *rest);

/* Where an app of @kind sees the document store that the host mounts at @store_mountpoint:
 * /run/flatpak/doc inside a Flatpak sandbox, the host's mount point for any other kind. */
const char *limen_document_path_app_mount (LimenAppKind kind, const char *store_mountpoint);

G_END_DECLS
