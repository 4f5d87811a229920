/* Limen — handing files the user chose to a sandboxed app through the document store.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "app-info.h"

G_BEGIN_DECLS

typedef enum {
  LIMEN_EXPORT_WRITABLE  = 1 << 0,  /* grant write as well as read */
  LIMEN_EXPORT_DIRECTORY = 1 << 1,  /* the URIs are directories: export them whole */
  LIMEN_EXPORT_FOR_SAVE  = 1 << 2,  /* the files may not exist yet: export by parent + name */
  /* A file (for saves: a folder) that does not open, or that the document store refuses
   * (not a regular file, a kernel file, one inside the store), is left out of the result,
   * logged, as the reference's file chooser does; the export fails only when every file is
   * left out, or when the store cannot be reached at all. */
  LIMEN_EXPORT_LEAVE_OUT = 1 << 3,
  /* The URIs name the files where the app's own sandbox mounts the store
   * (limen_document_path_app_mount: /run/flatpak/doc for a Flatpak app), not the host's
   * $XDG_RUNTIME_DIR/doc, as upstream's newest frontend answers Screenshot and Account.
   * OpenURI leaves it off: its URI goes through the host's launcher (flatpak run's file
   * forwarding reads host paths). FileChooser leaves it off too, as the reference does. */
  LIMEN_EXPORT_APP_VIEW  = 1 << 4,
} LimenExportFlags;

/* Make @uris (the backend's host file: URIs) usable by @info: host callers get them as they
 * are; sandboxed callers get document-store URIs granted to their app id only
 * (as-needed-by-app). Non-file URIs pass unchanged. Files go to the store in batches of
 * fds (AddFull) or one AddNamedFull each for saves, a few calls in flight at once. */
void limen_document_export_async (GDBusConnection    *connection,
                                  LimenAppInfo       *info,
                                  const char * const *uris,
                                  LimenExportFlags    flags,
                                  GCancellable       *cancellable,
                                  GAsyncReadyCallback callback,
                                  gpointer            user_data);

/* The URIs the app may use, in the order given (free with g_strfreev), or NULL + @error. */
char **limen_document_export_finish (GAsyncResult *result, GError **error);

/* The host path that @rest below document @doc_id names (see limen_document_path_parse):
 * the document's host file from the store's Info, its folder joined with @rest. */
void limen_document_host_path_async (GDBusConnection    *connection,
                                     const char         *doc_id,
                                     const char         *rest,
                                     GAsyncReadyCallback callback,
                                     gpointer            user_data);

/* The host path, and in @apps (when not NULL) the document's apps and their rights (a{sas});
 * NULL + @error when there is no such document or it has no host path. */
char *limen_document_host_path_finish (GAsyncResult *result, GVariant **apps, GError **error);

G_END_DECLS
