/* limen-documents — org.freedesktop.portal.Documents (version 5).
 *
 * Callers are identified by the core's app-info; a sandboxed caller can only export
 * what its fd proves it reaches in its own namespace (fd-check), gets only the rights
 * the fd proves, can only pass on rights it holds, and never reaches the host-only
 * methods (Lookup, Info, List).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "doc-portal-private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "app-access.h"
#include "app-info.h"
#include "compat.h"
#include "errors.h"
#include "fd-check.h"
#include "docs-bus.h"

static void
return_not_allowed (LimenDocsCall *call, const char *what)
{
  limen_doc_portal_return_error (call, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "%s", what));
}

static void
return_mount_point (LimenDocPortal *portal, LimenDocsCall *call)
{
  limen_docs_call_return_value (call, g_variant_new ("(^ay)", limen_fuse_get_mountpoint (portal->fs)));
}

/* The daemon mounts at the first call on Documents or FileTransfer, and only once it owns
 * the Documents name, so GetMountPoint can come before the mount is up; clients (flatpak
 * run) bind by-app/APP into the sandbox right after the answer, so GetMountPoint answers
 * once the mount is there. */
#define MOUNT_WAIT_MS 5000

static void
answer_mount_waiters (LimenDocPortal *portal)
{
  g_autoptr(GPtrArray) waiters = g_steal_pointer (&portal->mount_waiters);

  for (guint i = 0; waiters && i < waiters->len; i++)
    return_mount_point (portal, g_ptr_array_index (waiters, i));
}

static gboolean
on_mount_wait_timeout (gpointer user_data)
{
  LimenDocPortal *portal = user_data;

  portal->mount_timeout = 0;
  g_message ("The document filesystem is not up after %d ms; telling its place anyway", MOUNT_WAIT_MS);
  answer_mount_waiters (portal);
  return G_SOURCE_REMOVE;
}

void
limen_doc_portal_set_mount_func (LimenDocPortal *portal, void (*func) (gpointer user_data), gpointer user_data)
{
  portal->want_mount = func;
  portal->want_mount_data = user_data;
}

void
limen_doc_portal_want_mount (LimenDocPortal *portal)
{
  if (portal->want_mount)
    portal->want_mount (portal->want_mount_data);
}

void
limen_doc_portal_mount_settled (LimenDocPortal *portal)
{
  portal->mount_settled = TRUE;
  g_clear_handle_id (&portal->mount_timeout, g_source_remove);
  answer_mount_waiters (portal);
}

static void
handle_get_mount_point (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;

  if (!portal->mount_settled)
    {
      if (portal->mount_waiters == NULL)
        portal->mount_waiters = g_ptr_array_new ();
      g_ptr_array_add (portal->mount_waiters, call);
      if (portal->mount_timeout == 0)
        portal->mount_timeout = g_timeout_add (MOUNT_WAIT_MS, on_mount_wait_timeout, portal);
      return;
    }
  return_mount_point (portal, call);
}

/* Argument @index of @params as a byte string: with or without the customary trailing
 * NUL (GDBus's bytestring getter turns one without it into ""), never with another. */
char *
limen_doc_portal_bytestring (GVariant *params, gsize index, const char *key, GError **error)
{
  g_autoptr(GVariant) v = g_variant_get_child_value (params, index);
  gsize len;
  const char *data = g_variant_get_fixed_array (v, &len, 1);

  if (len > 0 && data[len - 1] == '\0')
    len--;
  if (len == 0 || memchr (data, '\0', len) != NULL || len > PATH_MAX)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid %s", key);
      return NULL;
    }
  return g_strndup (data, len);
}

static char *
bytestring_arg (LimenDocsCall *call, gsize index, const char *key, GError **error)
{
  return limen_doc_portal_bytestring (limen_docs_call_get_parameters (call), index, key, error);
}

static LimenDoc *
doc_for_change (LimenDocPortal *portal, LimenDocsCall *call, const char *doc_id, guint need,
                LimenAppInfo **info_out)
{
  g_autoptr(LimenAppInfo) info = NULL;
  LimenDoc *doc;

  if (!limen_doc_id_is_valid (doc_id))
    {
      limen_doc_portal_return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                                "Invalid doc_id"));
      return NULL;
    }
  if (!(info = limen_docs_call_get_app_info (call)))
    return NULL;
  doc = limen_doc_model_lookup (portal->model, doc_id);
  /* A sandbox learns nothing about documents it has no rights on: NotFound either way. */
  if (doc == NULL || (!limen_app_info_is_host (info) &&
                      limen_doc_get_perms (doc, limen_app_info_get_id (info)) == 0))
    {
      g_clear_pointer (&doc, limen_doc_unref);
      limen_doc_portal_return_error (call, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                        "No document %s", doc_id));
      return NULL;
    }
  if (!limen_app_info_is_host (info) && (limen_doc_get_perms (doc, limen_app_info_get_id (info)) & need) != need)
    {
      limen_doc_unref (doc);
      return_not_allowed (call, "The application lacks the permission for this document");
      return NULL;
    }
  *info_out = g_steal_pointer (&info);
  return doc;
}

/* GrantPermissions and RevokePermissions. */
static void
handle_change_perms (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  gboolean grant = strcmp (limen_docs_call_get_method (call), "GrantPermissions") == 0;
  g_autoptr(LimenAppInfo) info = NULL;
  g_autoptr(LimenDoc) doc = NULL;
  g_autofree const char **permissions = NULL;
  const char *doc_id, *app_id;
  GError *error = NULL;
  guint perms, held, current;

  g_variant_get (limen_docs_call_get_parameters (call), "(&s&s^a&s)", &doc_id, &app_id, &permissions);
  if (!limen_doc_perms_from_strv (permissions, "permissions", &perms, &error))
    {
      limen_doc_portal_return_error (call, error);
      return;
    }
  if (!limen_app_id_is_valid (app_id))
    {
      limen_doc_portal_return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                                "Invalid app_id"));
      return;
    }
  doc = doc_for_change (portal, call, doc_id, LIMEN_DOC_PERM_GRANT, &info);
  if (doc == NULL)
    return;
  held = limen_app_info_is_host (info) ? LIMEN_DOC_PERM_ALL : limen_doc_get_perms (doc, limen_app_info_get_id (info));
  if ((perms & ~held) != 0)
    {
      return_not_allowed (call, grant ? "A sandboxed application can only grant permissions it holds"
                                     : "A sandboxed application can only revoke permissions it holds");
      return;
    }
  current = limen_doc_get_perms (doc, app_id);
  if (!limen_doc_model_set_perms (portal->model, doc, app_id, grant ? (current | perms) : (current & ~perms), &error))
    {
      limen_doc_portal_return_error (call, error);
      return;
    }
  limen_docs_call_return_value (call, NULL);
}

static void
handle_delete (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  g_autoptr(LimenAppInfo) info = NULL;
  g_autoptr(LimenDoc) doc = NULL;
  const char *doc_id;
  GError *error = NULL;

  g_variant_get (limen_docs_call_get_parameters (call), "(&s)", &doc_id);
  if (!(doc = doc_for_change (portal, call, doc_id, LIMEN_DOC_PERM_DELETE, &info)))
    return;
  if (!limen_doc_model_delete (portal->model, doc, &error))
    {
      limen_doc_portal_return_error (call, error);
      return;
    }
  limen_docs_call_return_value (call, NULL);
}

/* Host-only methods: FALSE after answering a sandboxed caller. */
static gboolean
host_only (LimenDocsCall *call)
{
  g_autoptr(LimenAppInfo) info = limen_docs_call_get_app_info (call);

  if (info == NULL)
    return FALSE;
  if (!limen_app_info_is_host (info))
    {
      return_not_allowed (call, "Not available to sandboxed applications");
      return FALSE;
    }
  return TRUE;
}

/* Lookup opens the path as the caller named it (symlinks followed), on a thread: a path on
 * our own mount is a request to our own filesystem, which the D-Bus thread never waits for,
 * and a path elsewhere may sit on a slow one. What the fd is decides, as in the reference:
 * a document's own entry on the mount (DOCID/NAME, by-app/APP/DOCID/NAME, or a directory
 * document's directory) names it, anything else on the mount names nothing, and a file
 * elsewhere names the document exported from its path. A path that does not open is
 * NotFound. */
typedef struct {
  LimenDocPortal *portal;      /* NULL once the portal is gone */
  LimenDocsCall  *call;
} LookupCall;

static void
lookup_open (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const char *filename = g_object_get_data (G_OBJECT (task), "filename");
  int fd = open (filename, O_PATH | O_CLOEXEC);

  if (fd < 0)
    {
      int saved = errno;

      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "%s", g_strerror (saved));
      return;
    }
  g_task_return_int (task, fd);
}

static void
lookup_opened (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LookupCall *lookup = user_data;
  LimenDocPortal *portal = lookup->portal;
  GError *error = NULL;
  g_autoptr(LimenDoc) doc = NULL;
  g_autofree char *node_app = NULL;
  g_autofd int fd = (int) g_task_propagate_int (G_TASK (result), &error);
  gboolean is_doc_entry = FALSE;
  struct statx stx;

  if (portal == NULL)
    {
      g_clear_error (&error);
      g_free (lookup);         /* answered when the portal went away */
      return;
    }
  portal->lookups = g_list_remove (portal->lookups, lookup);
  if (fd < 0)
    {
      limen_doc_portal_return_error (lookup->call, error);
      g_free (lookup);
      return;
    }
  /* Told not to sync, statx asks no filesystem (see limen_doc_portal_export_fd_full). */
  if (statx (fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID | STATX_INO, &stx) != 0)
    memset (&stx, 0, sizeof stx);
  if (limen_fuse_identify_fd (portal->fs, fd, (stx.stx_mask & STATX_MNT_ID) ? (int) stx.stx_mnt_id : -1,
                              makedev (stx.stx_dev_major, stx.stx_dev_minor), stx.stx_ino,
                              &doc, &node_app, &is_doc_entry))
    {
      if (!is_doc_entry)
        g_clear_pointer (&doc, limen_doc_unref);
    }
  else
    {
      /* The fd's path is what Add stores: canonical, symlinks resolved. */
      g_autofree char *path = limen_doc_fd_path (fd);

      if (path && path[0] == '/')
        doc = limen_doc_model_find_by_path (portal->model, path);
    }
  limen_docs_call_return_value (lookup->call, g_variant_new ("(s)", doc ? limen_doc_get_id (doc) : ""));
  g_free (lookup);
}

static void
handle_lookup (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  g_autofree char *arg = NULL;
  g_autoptr(GTask) task = NULL;
  GError *error = NULL;
  LookupCall *lookup;

  if (!host_only (call))
    return;
  if (!(arg = bytestring_arg (call, 0, "filename", &error)))
    {
      limen_doc_portal_return_error (call, error);
      return;
    }
  if (arg[0] != '/')
    {
      limen_doc_portal_return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                                "Invalid filename: not an absolute path"));
      return;
    }
  lookup = g_new0 (LookupCall, 1);
  lookup->portal = portal;
  lookup->call = call;
  portal->lookups = g_list_prepend (portal->lookups, lookup);
  task = g_task_new (NULL, NULL, lookup_opened, lookup);
  g_task_set_source_tag (task, handle_lookup);
  g_object_set_data_full (G_OBJECT (task), "filename", g_steal_pointer (&arg), g_free);
  g_task_run_in_thread (task, lookup_open);
}

static void
handle_info (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  g_autoptr(LimenDoc) doc = NULL;
  g_autofree char *path = NULL;
  const char *doc_id;

  g_variant_get (limen_docs_call_get_parameters (call), "(&s)", &doc_id);
  if (!host_only (call))
    return;
  if (!limen_doc_id_is_valid (doc_id) || !(doc = limen_doc_model_lookup (portal->model, doc_id)))
    {
      limen_doc_portal_return_error (call, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                        "No document %s", doc_id));
      return;
    }
  path = limen_doc_dup_path (doc);
  limen_docs_call_return_value (call, g_variant_new ("(^ay@a{sas})", path, limen_doc_perms_to_variant (doc)));
}

static void
handle_list (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  g_autoptr(GPtrArray) docs = NULL;
  const char *app_id;
  GVariantBuilder b;

  g_variant_get (limen_docs_call_get_parameters (call), "(&s)", &app_id);
  if (!host_only (call))
    return;
  if (app_id[0] != '\0' && !limen_app_id_is_valid (app_id))
    {
      limen_doc_portal_return_error (call, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                                "Invalid app_id"));
      return;
    }
  docs = limen_doc_model_list (portal->model, app_id[0] ? app_id : NULL);
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{say}"));
  for (guint i = 0; i < docs->len; i++)
    {
      g_autofree char *path = limen_doc_dup_path (docs->pdata[i]);
      g_variant_builder_add (&b, "{s@ay}", limen_doc_get_id (docs->pdata[i]), g_variant_new_bytestring (path));
    }
  limen_docs_call_return_value (call, g_variant_new ("(a{say})", &b));
}

static void
handle_get_host_paths (LimenDocsCall *call, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  g_autoptr(LimenAppInfo) info = NULL;
  g_autofree const char **doc_ids = NULL;
  GVariantBuilder b;

  g_variant_get (limen_docs_call_get_parameters (call), "(^a&s)", &doc_ids);
  if (!(info = limen_docs_call_get_app_info (call)))
    return;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{say}"));
  for (guint i = 0; doc_ids[i]; i++)
    {
      g_autoptr(LimenDoc) doc = NULL;
      g_autofree char *path = NULL;

      if (!limen_doc_id_is_valid (doc_ids[i]) || !(doc = limen_doc_model_lookup (portal->model, doc_ids[i])))
        continue;
      if (!limen_app_info_is_host (info) && limen_doc_get_perms (doc, limen_app_info_get_id (info)) == 0)
        continue;
      path = limen_doc_dup_path (doc);
      g_variant_builder_add (&b, "{s@ay}", doc_ids[i], g_variant_new_bytestring (path));
    }
  limen_docs_call_return_value (call, g_variant_new ("(a{say})", &b));
}

LimenDocPortal *
limen_doc_portal_new (LimenDocModel *model, LimenFuse *fs)
{
  LimenDocPortal *portal = g_new0 (LimenDocPortal, 1);

  portal->model = model;
  portal->fs = fs;
  return portal;
}

static void
want_mount (gpointer user_data)
{
  limen_doc_portal_want_mount (user_data);
}

void
limen_doc_portal_export (LimenDocPortal *portal, LimenDocsBus *bus)
{
  static const struct {
    const char *method;
    LimenDocsMethodFunc func;
  } methods[] = {
    { "GetMountPoint", handle_get_mount_point },
    { "Add", limen_doc_portal_handle_add },
    { "AddNamed", limen_doc_portal_handle_add },
    { "AddFull", limen_doc_portal_handle_add },
    { "AddNamedFull", limen_doc_portal_handle_add },
    { "GrantPermissions", handle_change_perms },
    { "RevokePermissions", handle_change_perms },
    { "Delete", handle_delete },
    { "Lookup", handle_lookup },
    { "Info", handle_info },
    { "List", handle_list },
    { "GetHostPaths", handle_get_host_paths },
  };

  /* Every call on the object, Documents or FileTransfer, asks for the mount first, before
   * its caller is identified. */
  limen_docs_bus_set_before_call (bus, want_mount, portal);
  for (gsize i = 0; i < G_N_ELEMENTS (methods); i++)
    limen_docs_bus_add_method (bus, LIMEN_DOCS_IFACE, methods[i].method, methods[i].func, portal);
}

