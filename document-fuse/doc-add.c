/* limen-documents — Documents.Add, AddNamed, AddFull and AddNamedFull: their arguments
 * checked in the order the methods always checked them, the exports in one transaction,
 * and the rights AddFull grants.
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

#define ADD_FULL_MAX_FDS 16384

static GVariant *
extra_out (LimenDocPortal *portal)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "mountpoint",
                         g_variant_new_bytestring (limen_fuse_get_mountpoint (portal->fs)));
  return g_variant_builder_end (&b);
}

/* Check AddFull's @app_id / @permissions; a sandboxed caller may only pass on @held. */
static gboolean
check_grant (LimenAppInfo *info, const char *app_id, guint perms, guint held, GError **error)
{
  if (app_id[0] == '\0')
    return TRUE;
  if (!limen_app_id_is_valid (app_id))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid app_id");
      return FALSE;
    }
  if (!limen_app_info_is_host (info) && (perms & ~held) != 0)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "A sandboxed application can only grant permissions it holds");
      return FALSE;
    }
  return TRUE;
}

#define KNOWN_FLAGS (LIMEN_DOC_EXPORT_REUSE | LIMEN_DOC_EXPORT_PERSISTENT | LIMEN_DOC_EXPORT_AS_NEEDED | \
                     LIMEN_DOC_EXPORT_DIRECTORY)

/* AddFull's and AddNamedFull's @flags, @app_id and @permissions (into *@perms). */
static gboolean
add_full_check (const char *name, guint flags, const char *app_id, const char * const *permissions, guint *perms,
                GError **error)
{
  if (flags & ~KNOWN_FLAGS)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid flags: unknown bits");
      return FALSE;
    }
  if (name && (flags & LIMEN_DOC_EXPORT_DIRECTORY))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid flags: export-directory does not apply to AddNamedFull");
      return FALSE;
    }
  if (!limen_doc_perms_from_strv (permissions, "permissions", perms, error))
    return FALSE;
  if (app_id[0] != '\0' && !limen_app_id_is_valid (app_id))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid app_id");
      return FALSE;
    }
  return TRUE;
}

/* Shared by AddFull and AddNamedFull: @n fds (or one parent fd with @name). */
static GPtrArray *
add_full (LimenDocPortal *portal, LimenAppInfo *info, int *fds, guint n, const char *name, guint flags,
          const char *app_id, const char * const *permissions, GError **error)
{
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) docs = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_doc_unref);
  g_autoptr(GPtrArray) created_docs = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_doc_unref);
  gboolean host = limen_app_info_is_host (info);
  g_autoptr(LimenAppAccessRules) reach = NULL;
  LimenAppAccess need;
  guint perms, for_self = 0;

  if (!add_full_check (name, flags, app_id, permissions, &perms, error))
    return NULL;

  /* as-needed-by-app from the host (a frontend exporting for @app_id): what the app's
   * installed permissions let it reach needs no document. A sandboxed caller naming another
   * app always gets documents: the answer would tell it about that app's permissions. */
  if ((flags & LIMEN_DOC_EXPORT_AS_NEEDED) && host && app_id[0] != '\0')
    reach = limen_app_access_rules_load (app_id);
  need = (perms & (LIMEN_DOC_PERM_WRITE | LIMEN_DOC_PERM_DELETE)) ? LIMEN_APP_ACCESS_WRITE : LIMEN_APP_ACCESS_READ;
  if (!host && app_id[0] != '\0' && g_strcmp0 (app_id, limen_app_info_get_id (info)) == 0)
    for_self = EXPORT_FOR_SELF;

  /* All files in one transaction: all are exported, or none is. */
  if (!limen_doc_model_begin (portal->model, error))
    return NULL;
  for (guint i = 0; i < n; i++)
    {
      LimenDoc *doc;
      guint rights;
      gboolean created, reached = FALSE;

      if ((flags & LIMEN_DOC_EXPORT_AS_NEEDED) && !host && g_strcmp0 (app_id, limen_app_info_get_id (info)) == 0)
        {
          /* The fd proves the caller reaches the file itself: no document needed. */
          g_auto(LimenFdInfo) fdinfo = { 0 };
          LimenFdFlags check = LIMEN_FD_ALLOW_O_PATH |
            (name || (flags & LIMEN_DOC_EXPORT_DIRECTORY) ? LIMEN_FD_ALLOW_DIRECTORY : LIMEN_FD_ALLOW_REGULAR);

          if (!limen_fd_check (info, fds[i], check, &fdinfo, error))
            goto fail;
          g_ptr_array_add (ids, g_strdup (""));
          continue;
        }
      doc = limen_doc_portal_export_fd_full (portal, info, fds[i], name,
                                             (flags & ~LIMEN_DOC_EXPORT_AS_NEEDED) | for_self, &rights,
                                             &created, reach, need, &reached, error);
      if (doc == NULL && reached)
        {
          g_ptr_array_add (ids, g_strdup (""));
          continue;
        }
      if (doc == NULL)
        goto fail;
      g_ptr_array_add (docs, doc);
      if (created)
        g_ptr_array_add (created_docs, limen_doc_ref (doc));
      g_ptr_array_add (ids, g_strdup (limen_doc_get_id (doc)));
      if (!check_grant (info, app_id, perms, rights, error))
        goto fail;
      if (app_id[0] != '\0' &&
          !limen_doc_model_set_perms (portal->model, doc, app_id, limen_doc_get_perms (doc, app_id) | perms, error))
        goto fail;
    }
  if (!limen_doc_model_commit (portal->model, error))
    goto fail_committed;
  g_ptr_array_add (ids, NULL);
  return g_steal_pointer (&ids);

fail:
  limen_doc_model_rollback (portal->model);
fail_committed:
  /* The database is back to before the call; drop the documents it made in memory
   * (rights granted on reused ones stay in memory only until the next restart). */
  for (guint i = 0; i < created_docs->len; i++)
    limen_doc_model_delete (portal->model, created_docs->pdata[i], NULL);
  return NULL;
}

/* The arguments of one call of the Add family, checked in the order the methods always
 * checked them: the fds (and the name) before the caller's identity. */
typedef struct {
  gboolean full;          /* AddFull / AddNamedFull: (as a{sv}) or (s a{sv}) answers */
  int     *fds;          /* borrowed from the call's message */
  gsize    n;
  char    *name;          /* AddNamed / AddNamedFull */
  guint    flags;
  const char *app_id;     /* borrowed from the parameters */
  const char **permissions;
} AddCall;

static void
add_call_clear (AddCall *call)
{
  g_clear_pointer (&call->fds, g_free);
  g_clear_pointer (&call->name, g_free);
  g_clear_pointer (&call->permissions, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (AddCall, add_call_clear)

/* The fd of @dcall for @handle into @call: borrowed, the call's message keeps it open. */
static gboolean
add_call_take_fd (AddCall *call, LimenDocsCall *dcall, gint32 handle, const char *key, GError **error)
{
  int fd = limen_docs_call_peek_fd (dcall, handle, key, error);

  if (fd < 0)
    return FALSE;
  call->fds[call->n++] = fd;
  return TRUE;
}

static gboolean
add_call_parse (AddCall *call, LimenDocsCall *dcall, GError **error)
{
  const char *method = limen_docs_call_get_method (dcall);
  GVariant *params = limen_docs_call_get_parameters (dcall);
  gboolean named = strcmp (method, "AddNamed") == 0 || strcmp (method, "AddNamedFull") == 0;
  gboolean reuse, persistent;
  g_autoptr(GVariant) handles = NULL;
  gint32 handle;

  memset (call, 0, sizeof *call);
  call->full = g_str_has_suffix (method, "Full");
  if (strcmp (method, "AddFull") == 0)
    {
      g_variant_get (params, "(@ahu&s^a&s)", &handles, &call->flags, &call->app_id, &call->permissions);
      if (g_variant_n_children (handles) > ADD_FULL_MAX_FDS)
        {
          g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid o_path_fds: too many");
          return FALSE;
        }
      call->fds = g_new (int, g_variant_n_children (handles) + 1);
      for (gsize i = 0; i < g_variant_n_children (handles); i++)
        {
          g_variant_get_child (handles, i, "h", &handle);
          if (!add_call_take_fd (call, dcall, handle, "o_path_fds", error))
            return FALSE;
        }
      return TRUE;
    }
  call->fds = g_new (int, 1);
  if (call->full)
    g_variant_get (params, "(h@ayu&s^a&s)", &handle, NULL, &call->flags, &call->app_id, &call->permissions);
  else
    {
      if (named)
        g_variant_get (params, "(h@aybb)", &handle, NULL, &reuse, &persistent);
      else
        g_variant_get (params, "(hbb)", &handle, &reuse, &persistent);
      call->flags = (reuse ? LIMEN_DOC_EXPORT_REUSE : 0) | (persistent ? LIMEN_DOC_EXPORT_PERSISTENT : 0);
    }
  if (!add_call_take_fd (call, dcall, handle, named ? (call->full ? "o_path_fd" : "o_path_parent_fd") : "o_path_fd",
                         error))
    return FALSE;
  if (named && !(call->name = limen_doc_portal_bytestring (params, 1, "filename", error)))
    return FALSE;
  return TRUE;
}

/* The answer to @call from @info's caller: its reply's body, or NULL and @error. */
static GVariant *
add_call_run (LimenDocPortal *portal, LimenAppInfo *info, AddCall *call, GError **error)
{
  g_autoptr(GPtrArray) ids = NULL;
  g_autoptr(LimenDoc) doc = NULL;
  guint rights;

  /* A file to be named in a folder is the host's to ask for, as in the reference: from a
   * sandbox the answer would tell which names exist in any folder it holds an fd of (also
   * where only this daemon may look). Sandboxed apps save through FileChooser. */
  if (call->name && !limen_app_info_is_host (info))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Not available to sandboxed applications");
      return NULL;
    }
  if (!call->full)
    {
      doc = limen_doc_portal_export_fd (portal, info, call->fds[0], call->name, call->flags, &rights, error);
      return doc ? g_variant_new ("(s)", limen_doc_get_id (doc)) : NULL;
    }
  ids = add_full (portal, info, call->fds, call->n, call->name, call->flags, call->app_id, call->permissions,
                  error);
  if (ids == NULL)
    return NULL;
  if (call->name)
    return g_variant_new ("(s@a{sv})", ids->pdata[0], extra_out (portal));
  return g_variant_new ("(^as@a{sv})", ids->pdata, extra_out (portal));
}

/* Add, AddNamed, AddFull and AddNamedFull. */
void
limen_doc_portal_handle_add (LimenDocsCall *dcall, gpointer user_data)
{
  LimenDocPortal *portal = user_data;
  g_autoptr(LimenAppInfo) info = NULL;
  g_auto(AddCall) call = { 0 };
  GError *error = NULL;
  GVariant *reply;

  if (!add_call_parse (&call, dcall, &error))
    {
      limen_doc_portal_return_error (dcall, error);
      return;
    }
  if (!(info = limen_docs_call_get_app_info (dcall)))
    return;
  reply = add_call_run (portal, info, &call, &error);
  if (reply == NULL)
    limen_doc_portal_return_error (dcall, error);
  else
    limen_docs_call_return_value (dcall, reply);
}

