/* limen-documents — org.freedesktop.impl.portal.PermissionStore on D-Bus: who may read
 * and write, each method, and the "documents" table served from the document store.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "perm-store-private.h"

#include <string.h>

#include "app-info.h"
#include "import.h"
#include "errors.h"

/* Identify the caller; FALSE when the invocation was answered already. Writes are for
 * host callers only. *@out_app is the caller's app id for a sandboxed reader. */
static gboolean
caller_check (GDBusMethodInvocation *invocation, gboolean write, char **out_app)
{
  g_autoptr(LimenAppInfo) info = NULL;

#ifdef LIMEN_TEST_HOOKS
  /* Harnesses set the identity hook for the frontend and start the permission store with
   * the same environment; the reference's store checks no caller, so here the hook does not
   * make every caller the sandboxed app (the test's own writes would be refused). */
  if (g_getenv ("XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND"))
    {
      if (out_app)
        *out_app = NULL;
      return TRUE;
    }
#endif
  info = limen_app_info_get_for_invocation (invocation);
  if (info == NULL)
    return FALSE;
  if (limen_app_info_is_host (info))
    {
      if (out_app)
        *out_app = NULL;
      return TRUE;
    }
  if (write)
    {
      g_dbus_method_invocation_return_error (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                             "Only host applications may change the permission store");
      return FALSE;
    }
  if (out_app)
    *out_app = g_strdup (limen_app_info_get_id (info));
  return TRUE;
}

static gboolean
return_error (GDBusMethodInvocation *invocation, GError *error)
{
  limen_invocation_return_gerror (invocation, error);
  g_error_free (error);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- the documents table ------------------------------------------------------------
 *
 * Served by the document store: what the flatpak CLI lists, shows and resets there
 * (permission-show, permission-remove, permission-reset, and uninstall --delete-data)
 * takes effect on the documents at once. A document's data is the document store's own:
 * SetValue is refused, and so are a Set that would change it and a SetPermission or Set
 * that would make a document. */

static gboolean
is_documents (LimenPermStore *store, const char *table)
{
  return store->docs != NULL && strcmp (table, DOCUMENTS_TABLE) == 0;
}

static GError *
no_document (const char *id)
{
  return g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No entry for %s in table " DOCUMENTS_TABLE, id);
}

/* A sandboxed reader's view of @perms: only its own row, if any. */
static GVariant *
own_row (GVariant *perms, const char *app)
{
  g_autofree const char **mine = NULL;
  GVariantBuilder b;

  if (!g_variant_lookup (perms, app, "^a&s", &mine))
    return NULL;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sas}"));
  g_variant_builder_add (&b, "{s^as}", app, mine);
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static gboolean
documents_lookup (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
                  LimenPermStore *store, const char *id, const char *app)
{
  g_autoptr(GVariant) perms = NULL;
  g_autoptr(GVariant) value = NULL;

  if (!store->docs->lookup (store->docs_data, id, &perms, &value))
    return return_error (invocation, no_document (id));
  if (app)
    {
      /* As for every table: a sandboxed reader sees its own row and none of the data. */
      g_autoptr(GVariant) mine = own_row (perms, app);

      if (mine == NULL)
        return return_error (invocation, no_document (id));
      g_clear_pointer (&perms, g_variant_unref);
      g_clear_pointer (&value, g_variant_unref);
      perms = g_steal_pointer (&mine);
      value = limen_perm_empty_data ();
    }
  limen_dbus_impl_portal_permission_store_complete_lookup (object, invocation, perms,
                                                           g_variant_new_variant (value));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
no_document_made (const char *id, gboolean create, GError **error)
{
  if (create)
    g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                 "No document %s: documents are made through org.freedesktop.portal.Documents", id);
  else
    g_propagate_error (error, no_document (id));
  return FALSE;
}

static void
documents_changed (LimenPermStore *store, const char *id)
{
  GVariant *perms, *value;

  if (store->skeleton && store->docs->lookup (store->docs_data, id, &perms, &value))
    limen_perm_store_emit_changed_values (store, DOCUMENTS_TABLE, id, FALSE, value, perms);
}

/* Set (@apps, with the data Lookup gave: how the flatpak CLI resets an app) gives the
 * document exactly those rights; its data stays the document store's, and SetValue
 * (@apps NULL) has nothing to change. */
static gboolean
documents_set (LimenPermStore *store, const char *id, gboolean create, GVariant *apps, GVariant *data,
               GError **error)
{
  g_autoptr(GVariant) perms = NULL;
  g_autoptr(GVariant) value = NULL;

  if (!store->docs->lookup (store->docs_data, id, &perms, &value))
    return no_document_made (id, create, error);
  if (apps == NULL || !g_variant_equal (data, value))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "A document's data (its file) is the document store's: it cannot be set");
      return FALSE;
    }
  if (!store->docs->set_all (store->docs_data, id, apps, error))
    return FALSE;
  documents_changed (store, id);
  return TRUE;
}

/* @app's rights on document @id become @perms (NULL: none); Changed follows. */
static gboolean
documents_set_perms (LimenPermStore *store, const char *id, gboolean create, const char *app,
                     const char * const *perms, GError **error)
{
  g_autoptr(GVariant) old_perms = NULL;
  g_autoptr(GVariant) value = NULL;

  if (!store->docs->lookup (store->docs_data, id, &old_perms, &value))
    return no_document_made (id, create, error);
  if (!store->docs->set_perms (store->docs_data, id, app, perms, error))
    return FALSE;
  documents_changed (store, id);
  return TRUE;
}

static gboolean
handle_lookup (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
               const char *table, const char *id, LimenPermStore *store)
{
  g_autofree char *app = NULL;
  GError *error = NULL;
  g_autoptr(PermEntry) entry = NULL;

  if (!limen_perm_check_table_id (table, id, &error))
    return return_error (invocation, error);
  if (!caller_check (invocation, FALSE, &app))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (is_documents (store, table))
    return documents_lookup (object, invocation, store, id, app);
  entry = limen_perm_store_entry (store, table, id);
  if (entry && app)
    {
      /* A sandboxed reader sees only its own row, never the shared data. */
      const char * const *mine = g_hash_table_lookup (limen_perm_entry_apps (entry), app);
      GVariantBuilder b;

      if (mine == NULL)
        g_clear_pointer (&entry, limen_perm_entry_free);
      else
        {
          g_autoptr(GVariant) data = limen_perm_empty_data ();

          g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sas}"));
          g_variant_builder_add (&b, "{s^as}", app, mine);
          limen_dbus_impl_portal_permission_store_complete_lookup (object, invocation,
                                                                   g_variant_builder_end (&b),
                                                                   g_variant_new_variant (data));
          return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
    }
  if (entry == NULL)
    return return_error (invocation, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                  "No entry for %s in table %s", id, table));
  limen_dbus_impl_portal_permission_store_complete_lookup (object, invocation, limen_perm_entry_get_perms (entry),
                                                           g_variant_new_variant (entry->data));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Set and SetValue: checks, then the write. FALSE: the invocation has been answered with
 * an error; TRUE: written, the caller sends its own reply. */
static gboolean
set_checked (GDBusMethodInvocation *invocation, const char *table, gboolean create, const char *id,
             GVariant *app_permissions, GVariant *data, LimenPermStore *store)
{
  GError *error = NULL;

  if (!limen_perm_check_table_id (table, id, &error))
    {
      return_error (invocation, error);
      return FALSE;
    }
  if (!caller_check (invocation, TRUE, NULL))
    return FALSE;
  g_autoptr(GVariant) inner = g_variant_get_variant (data);
  if (is_documents (store, table))
    {
      if (!documents_set (store, id, create, app_permissions, inner, &error))
        {
          return_error (invocation, error);
          return FALSE;
        }
      return TRUE;
    }
  if (!limen_perm_store_set (store, table, id, create, inner, app_permissions, &error))
    {
      return_error (invocation, error);
      return FALSE;
    }
  return TRUE;
}

static gboolean
handle_set (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
            const char *table, gboolean create, const char *id, GVariant *app_permissions,
            GVariant *data, LimenPermStore *store)
{
  if (set_checked (invocation, table, create, id, app_permissions, data, store))
    limen_dbus_impl_portal_permission_store_complete_set (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_set_value (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
                  const char *table, gboolean create, const char *id, GVariant *data, LimenPermStore *store)
{
  if (set_checked (invocation, table, create, id, NULL, data, store))
    limen_dbus_impl_portal_permission_store_complete_set_value (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_set_permission (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
                       const char *table, gboolean create, const char *id, const char *app,
                       const char * const *permissions, LimenPermStore *store)
{
  GError *error = NULL;

  if (!limen_perm_check_table_id (table, id, &error))
    return return_error (invocation, error);
  if (!caller_check (invocation, TRUE, NULL))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (is_documents (store, table) ? !documents_set_perms (store, id, create, app, permissions, &error)
                                  : !limen_perm_store_set_permission (store, table, id, create, app, permissions,
                                                                      &error))
    return return_error (invocation, error);
  limen_dbus_impl_portal_permission_store_complete_set_permission (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_delete_permission (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
                          const char *table, const char *id, const char *app, LimenPermStore *store)
{
  GError *error = NULL;
  g_autoptr(PermEntry) entry = NULL;

  if (!limen_perm_check_table_id (table, id, &error))
    return return_error (invocation, error);
  if (!caller_check (invocation, TRUE, NULL))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (is_documents (store, table))
    {
      if (!documents_set_perms (store, id, FALSE, app, NULL, &error))
        return return_error (invocation, error);
      limen_dbus_impl_portal_permission_store_complete_delete_permission (object, invocation);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  entry = limen_perm_store_entry (store, table, id);
  if (entry == NULL)
    return return_error (invocation, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                  "No entry for %s in table %s", id, table));
  if (g_hash_table_contains (limen_perm_entry_apps (entry), app))
    {
      g_autoptr(GVariant) all = limen_perm_perms_variant_with (limen_perm_entry_apps (entry), app, NULL);

      if (!limen_db_begin (store->db, &error))
        return return_error (invocation, error);
      limen_db_perm_put_entry (store->db, table, id, entry->data, all, NULL);
      if (!limen_db_commit (store->db, &error))
        return return_error (invocation, error);
      g_hash_table_remove (limen_perm_entry_apps (entry), app);
      g_clear_pointer (&entry->perms_cache, g_variant_unref);
      entry->perms_cache = g_steal_pointer (&all);
      limen_db_perm_keep_entry (store->db, table, id, entry->data, entry->perms_cache);
      limen_perm_store_emit_changed (store, table, id, FALSE, entry, NULL);
    }
  limen_dbus_impl_portal_permission_store_complete_delete_permission (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_permission (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
                       const char *table, const char *id, const char *app, LimenPermStore *store)
{
  g_autofree char *caller_app = NULL;
  static const char * const none[] = { NULL };
  GError *error = NULL;
  const char * const *perms;
  g_autoptr(PermEntry) entry = NULL;

  if (!limen_perm_check_table_id (table, id, &error))
    return return_error (invocation, error);
  if (!caller_check (invocation, FALSE, &caller_app))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (caller_app && strcmp (caller_app, app) != 0)
    return return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                          "A sandboxed application may only read its own permissions"));
  if (is_documents (store, table))
    {
      g_autoptr(GVariant) all = NULL;
      g_autoptr(GVariant) value = NULL;
      g_autofree const char **mine = NULL;

      if (!store->docs->lookup (store->docs_data, id, &all, &value))
        return return_error (invocation, no_document (id));
      g_variant_lookup (all, app, "^a&s", &mine);
      limen_dbus_impl_portal_permission_store_complete_get_permission (object, invocation, mine ? mine : none);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  entry = limen_perm_store_entry (store, table, id);
  if (entry == NULL)
    return return_error (invocation, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                  "No entry for %s in table %s", id, table));
  perms = g_hash_table_lookup (limen_perm_entry_apps (entry), app);
  limen_dbus_impl_portal_permission_store_complete_get_permission (object, invocation, perms ? perms : none);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_delete (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
               const char *table, const char *id, LimenPermStore *store)
{
  GError *error = NULL;
  g_autoptr(PermEntry) entry = NULL;

  if (!limen_perm_check_table_id (table, id, &error))
    return return_error (invocation, error);
  if (!caller_check (invocation, TRUE, NULL))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (is_documents (store, table))
    {
      g_autoptr(GVariant) perms = NULL;
      g_autoptr(GVariant) value = NULL;

      if (!store->docs->lookup (store->docs_data, id, &perms, &value))
        return return_error (invocation, no_document (id));
      if (!store->docs->remove (store->docs_data, id, &error))
        return return_error (invocation, error);
      limen_perm_store_emit_changed (store, table, id, TRUE, NULL, NULL);
      limen_dbus_impl_portal_permission_store_complete_delete (object, invocation);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  entry = limen_perm_store_read (store, table, id, FALSE);
  if (entry == NULL)
    return return_error (invocation, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                  "No entry for %s in table %s", id, table));
  if (!limen_db_begin (store->db, &error))
    return return_error (invocation, error);
  limen_db_perm_delete_entry (store->db, table, id, NULL);
  if (!limen_db_commit (store->db, &error))
    return return_error (invocation, error);
  limen_perm_store_emit_changed (store, table, id, TRUE, NULL, NULL);
  limen_dbus_impl_portal_permission_store_complete_delete (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

typedef struct {
  GPtrArray  *ids;
  const char *app;    /* a sandboxed reader: only the entries it has a row in */
} ListIds;

static void
list_id (const char *table, const char *id, GVariant *data, GVariant *perms, gpointer user_data)
{
  ListIds *list = user_data;
  g_autoptr(GVariant) row = NULL;

  if (list->app && !(row = g_variant_lookup_value (perms, list->app, G_VARIANT_TYPE_STRING_ARRAY)))
    return;
  g_ptr_array_add (list->ids, g_strdup (id));
}

static gboolean
handle_list (LimenDbusImplPortalPermissionStore *object, GDBusMethodInvocation *invocation,
             const char *table, LimenPermStore *store)
{
  g_autofree char *app = NULL;
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  GError *error = NULL;
  ListIds list = { ids, NULL };

  if (!limen_perm_check_table_id (table, NULL, &error))
    return return_error (invocation, error);
  if (!caller_check (invocation, FALSE, &app))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (is_documents (store, table))
    {
      g_auto(GStrv) doc_ids = store->docs->list (store->docs_data, app);

      limen_dbus_impl_portal_permission_store_complete_list (object, invocation, (const char * const *) doc_ids);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  list.app = app;
  /* A listing during the one-time import waits for the rest of its table. */
  if (store->import)
    limen_import_job_ensure (store->import, table, NULL, NULL);
  if (!limen_db_perm_list (store->db, table, app != NULL, list_id, &list, &error))
    return return_error (invocation, error);
  g_ptr_array_add (ids, NULL);
  limen_dbus_impl_portal_permission_store_complete_list (object, invocation, (const char * const *) ids->pdata);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

void
limen_perm_store_set_documents (LimenPermStore *store, const LimenPermDocuments *docs, gpointer data)
{
  store->docs = docs;
  store->docs_data = data;
}

gboolean
limen_perm_store_export (LimenPermStore *store, GDBusConnection *connection, GError **error)
{
  if (store->docs)
    limen_perm_publish_table (DOCUMENTS_TABLE);     /* where the flatpak CLI looks for tables */
  store->skeleton = limen_dbus_impl_portal_permission_store_skeleton_new ();
  limen_dbus_impl_portal_permission_store_set_version (store->skeleton, 2);
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (store->skeleton));
  g_signal_connect (store->skeleton, "handle-lookup", G_CALLBACK (handle_lookup), store);
  g_signal_connect (store->skeleton, "handle-set", G_CALLBACK (handle_set), store);
  g_signal_connect (store->skeleton, "handle-set-value", G_CALLBACK (handle_set_value), store);
  g_signal_connect (store->skeleton, "handle-set-permission", G_CALLBACK (handle_set_permission), store);
  g_signal_connect (store->skeleton, "handle-delete-permission", G_CALLBACK (handle_delete_permission), store);
  g_signal_connect (store->skeleton, "handle-get-permission", G_CALLBACK (handle_get_permission), store);
  g_signal_connect (store->skeleton, "handle-delete", G_CALLBACK (handle_delete), store);
  g_signal_connect (store->skeleton, "handle-list", G_CALLBACK (handle_list), store);
  return g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (store->skeleton), connection,
                                           "/org/freedesktop/impl/portal/PermissionStore", error);
}
