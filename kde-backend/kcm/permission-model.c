/* Limen — the permission store's tables, read and changed through the standard interfaces.
 *
 * The PermissionStore interface cannot list its tables, so the tables are the ones portals
 * write, by the names the reference uses (and GNOME's and Plasma 6's pages read): a person's
 * choice made here counts there and the other way round. Each is one row of
 * limen_perm_tables; the row says how its entries read and which group shows them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "permission-model.h"
#include "grant-words.h"

#include <locale.h>
#include <string.h>

#define GETTEXT_PACKAGE "limen"
#include <glib/gi18n-lib.h>

#define STORE_NAME "org.freedesktop.impl.portal.PermissionStore"
#define STORE_PATH "/org/freedesktop/impl/portal/PermissionStore"
#define DOCS_NAME "org.freedesktop.portal.Documents"
#define DOCS_PATH "/org/freedesktop/portal/documents"
#define CALL_TIMEOUT_MS 10000
#define DOC_FLAG_TRANSIENT 2
#define DOC_FLAG_DIRECTORY 4

const LimenPermTable limen_perm_tables[] = {
  { "documents", NULL, LIMEN_GRANT_DOCUMENT, LIMEN_GROUP_FILES, N_("File or folder") },
  { "screencast", NULL, LIMEN_GRANT_TOKEN, LIMEN_GROUP_SCREEN, N_("Screen sharing it may resume") },
  { "remote-desktop", NULL, LIMEN_GRANT_TOKEN, LIMEN_GROUP_SCREEN, N_("Remote control it may resume") },
  { "input-capture", NULL, LIMEN_GRANT_TOKEN, LIMEN_GROUP_SCREEN, N_("Input capture it may resume") },
  { "screenshot", "screenshot", LIMEN_GRANT_SWITCH, LIMEN_GROUP_SCREEN, N_("Screenshots") },
  { "devices", "camera", LIMEN_GRANT_SWITCH, LIMEN_GROUP_DEVICES, N_("Camera") },
  { "devices", "microphone", LIMEN_GRANT_SWITCH, LIMEN_GROUP_DEVICES, N_("Microphone") },
  { "devices", "speakers", LIMEN_GRANT_SWITCH, LIMEN_GROUP_DEVICES, N_("Speakers") },
  { "location", "location", LIMEN_GRANT_LOCATION, LIMEN_GROUP_DEVICES, N_("Location") },
  { "usb", "usb", LIMEN_GRANT_SWITCH, LIMEN_GROUP_DEVICES, N_("USB devices") },
  { "usb", NULL, LIMEN_GRANT_SWITCH, LIMEN_GROUP_DEVICES, N_("USB device") },
  { "notifications", "notification", LIMEN_GRANT_SWITCH, LIMEN_GROUP_SYSTEM, N_("Notifications") },
  { "background", "background", LIMEN_GRANT_SWITCH, LIMEN_GROUP_SYSTEM, N_("Running in the background and at login") },
  { "wallpaper", "wallpaper", LIMEN_GRANT_SWITCH, LIMEN_GROUP_SYSTEM, N_("Setting the wallpaper") },
  { "gamemode", "gamemode", LIMEN_GRANT_SWITCH, LIMEN_GROUP_SYSTEM, N_("Game mode") },
  { "realtime", "realtime", LIMEN_GRANT_SWITCH, LIMEN_GROUP_SYSTEM, N_("Realtime scheduling") },
  { "inhibit", "inhibit", LIMEN_GRANT_WORDS, LIMEN_GROUP_SYSTEM, N_("Preventing logout, suspend or idle") },
  { "global-shortcuts", NULL, LIMEN_GRANT_SHORTCUTS, LIMEN_GROUP_SYSTEM, N_("Global shortcuts") },
  { "desktop-used-apps", NULL, LIMEN_GRANT_CHOICE, LIMEN_GROUP_OPEN_WITH, N_("Opens with") },
  { NULL }
};

void
limen_perm_model_init_i18n (void)
{
  const char *dir = g_getenv ("LIMEN_LOCALEDIR");

  bindtextdomain (GETTEXT_PACKAGE, dir && *dir ? dir : LIMEN_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
}

const char *
limen_grant_group_title (LimenGrantGroup group)
{
  static const char *titles[LIMEN_N_GROUPS] = {
    N_("Files and folders"), N_("Screen"), N_("Devices and location"), N_("System"), N_("Open with"),
  };

  return group < LIMEN_N_GROUPS ? _(titles[group]) : "";
}

void
limen_grant_free (LimenGrant *grant)
{
  g_free (grant->table);
  g_free (grant->id);
  g_strfreev (grant->perms);
  g_clear_pointer (&grant->data, g_variant_unref);
  g_free (grant->title);
  g_free (grant->detail);
  g_free (grant);
}

/* The row describing (@table, @id), or NULL for a table the module does not know. */
static const LimenPermTable *
find_desc (const char *table, const char *id)
{
  for (const LimenPermTable *t = limen_perm_tables; t->table; t++)
    if (g_str_equal (t->table, table) && (t->id == NULL || g_strcmp0 (t->id, id) == 0))
      return t;
  return NULL;
}

static GVariant *
store_call (GDBusConnection *bus, const char *method, GVariant *args, const char *reply_type,
            GError **error)
{
  return g_dbus_connection_call_sync (bus, STORE_NAME, STORE_PATH, STORE_NAME, method, args,
                                      reply_type ? G_VARIANT_TYPE (reply_type) : NULL,
                                      G_DBUS_CALL_FLAGS_NONE, CALL_TIMEOUT_MS, NULL, error);
}

/* The ids of @table; an unknown table is empty (as the store answers for it). */
static GStrv
list_ids (GDBusConnection *bus, const char *table, GError **error)
{
  g_autoptr(GVariant) reply = store_call (bus, "List", g_variant_new ("(s)", table), "(as)", error);
  GStrv ids = NULL;

  if (reply)
    g_variant_get (reply, "(^as)", &ids);
  return ids;
}

/* (perms a{sas}, data) of (@table, @id); FALSE when the entry is gone (not an error: it may
 * have been deleted between List and Lookup). */
static gboolean
lookup (GDBusConnection *bus, const char *table, const char *id, GVariant **perms, GVariant **data,
        GError **error)
{
  g_autoptr(GError) local = NULL;
  g_autoptr(GVariant) reply = store_call (bus, "Lookup", g_variant_new ("(ss)", table, id), "(a{sas}v)", &local);

  if (reply == NULL)
    {
      if (g_dbus_error_is_remote_error (local)
          && g_str_has_suffix (g_dbus_error_get_remote_error (local), ".NotFound"))
        return FALSE;
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  g_variant_get (reply, "(@a{sas}v)", perms, data);
  return TRUE;
}

/* Call @fn on every (table, id) entry of the known tables; stops at the first error. */
typedef gboolean (*EntryFunc) (GDBusConnection *bus, const char *table, const char *id,
                               GVariant *perms, GVariant *data, gpointer user_data, GError **error);

static gboolean
for_each_entry (GDBusConnection *bus, const char *only_table, EntryFunc fn, gpointer user_data,
                GError **error)
{
  for (const LimenPermTable *t = limen_perm_tables; t->table; t++)
    {
      g_auto(GStrv) ids = NULL;

      /* A table has several rows (devices, usb): visit it once, at its first row. */
      if (t != limen_perm_tables && g_str_equal (t[-1].table, t->table))
        continue;
      if (only_table && !g_str_equal (only_table, t->table))
        continue;
      ids = list_ids (bus, t->table, error);
      if (ids == NULL)
        return FALSE;
      for (guint i = 0; ids[i]; i++)
        {
          g_autoptr(GVariant) perms = NULL;
          g_autoptr(GVariant) data = NULL;
          g_autoptr(GError) local = NULL;

          if (!lookup (bus, t->table, ids[i], &perms, &data, &local))
            {
              if (local == NULL)
                continue;
              g_propagate_error (error, g_steal_pointer (&local));
              return FALSE;
            }
          if (!fn (bus, t->table, ids[i], perms, data, user_data, error))
            return FALSE;
        }
    }
  return TRUE;
}

static gboolean
collect_app (GDBusConnection *bus, const char *table, const char *id, GVariant *perms,
             GVariant *data, gpointer user_data, GError **error)
{
  GHashTable *apps = user_data;
  GVariantIter iter;
  const char *app;

  g_variant_iter_init (&iter, perms);
  while (g_variant_iter_next (&iter, "{&s@as}", &app, NULL))
    g_hash_table_add (apps, g_strdup (app));
  return TRUE;
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char **) a, *(const char **) b);
}

GPtrArray *
limen_perm_model_list_apps (GDBusConnection *bus, GError **error)
{
  g_autoptr(GHashTable) apps = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GPtrArray *out;
  GHashTableIter iter;
  char *app;

  if (!for_each_entry (bus, NULL, collect_app, apps, error))
    return NULL;
  out = g_ptr_array_new_with_free_func (g_free);
  g_hash_table_iter_init (&iter, apps);
  while (g_hash_table_iter_next (&iter, (gpointer *) &app, NULL))
    {
      g_hash_table_iter_steal (&iter);
      g_ptr_array_add (out, app);
    }
  g_ptr_array_sort (out, compare_strings);
  return out;
}

typedef struct {
  const char *app_id;
  GPtrArray  *grants;
} ShowData;

static gboolean
collect_grant (GDBusConnection *bus, const char *table, const char *id, GVariant *perms,
               GVariant *data, gpointer user_data, GError **error)
{
  ShowData *show = user_data;
  g_autofree const char **words = NULL;
  const LimenPermTable *desc = find_desc (table, id);
  LimenGrant *grant;

  if (desc == NULL || !g_variant_lookup (perms, show->app_id, "^a&s", &words))
    return TRUE;
  grant = g_new0 (LimenGrant, 1);
  grant->desc = desc;
  grant->table = g_strdup (table);
  grant->id = g_strdup (id);
  grant->perms = g_strdupv ((char **) words);
  grant->data = g_variant_ref (data);
  limen_grant_describe (grant);
  g_ptr_array_add (show->grants, grant);
  return TRUE;
}

/* Group order first, then the order of the table rows, then by what the person reads. */
static int
compare_grants (gconstpointer a, gconstpointer b)
{
  const LimenGrant *x = *(const LimenGrant **) a, *y = *(const LimenGrant **) b;

  if (x->desc->group != y->desc->group)
    return (int) x->desc->group - (int) y->desc->group;
  if (x->desc != y->desc)
    return x->desc < y->desc ? -1 : 1;
  return g_utf8_collate (x->detail, y->detail);
}

GPtrArray *
limen_perm_model_show_app (GDBusConnection *bus, const char *app_id, GError **error)
{
  ShowData show = { app_id, g_ptr_array_new_with_free_func ((GDestroyNotify) limen_grant_free) };

  if (!for_each_entry (bus, NULL, collect_grant, &show, error))
    {
      g_ptr_array_unref (show.grants);
      return NULL;
    }
  g_ptr_array_sort (show.grants, compare_grants);
  return show.grants;
}

gboolean
limen_grant_is_switch (const LimenGrant *grant)
{
  return grant->desc->kind == LIMEN_GRANT_SWITCH || grant->desc->kind == LIMEN_GRANT_LOCATION;
}

const char *
limen_grant_value (const LimenGrant *grant)
{
  const char *first = grant->perms[0] ? grant->perms[0] : "";

  if (grant->desc->kind == LIMEN_GRANT_LOCATION)
    return g_str_equal (first, "NONE") ? "no" : "yes";
  if (grant->desc->kind != LIMEN_GRANT_SWITCH)
    return "";
  if (g_str_equal (first, "yes") || g_str_equal (first, "no") || g_str_equal (first, "ask"))
    return first;
  return "";
}

gboolean
limen_perm_model_set (GDBusConnection *bus, const char *app_id, const char *table, const char *id,
                      const char *value, GError **error)
{
  const LimenPermTable *desc = find_desc (table, id);
  g_autoptr(GStrvBuilder) words = g_strv_builder_new ();
  g_auto(GStrv) perms = NULL;
  g_autoptr(GVariant) reply = NULL;

  if (desc == NULL || (desc->kind != LIMEN_GRANT_SWITCH && desc->kind != LIMEN_GRANT_LOCATION)
      || !(g_str_equal (value, "yes") || g_str_equal (value, "no") || g_str_equal (value, "ask"))
      || (desc->kind == LIMEN_GRANT_LOCATION && g_str_equal (value, "ask")))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, _("%s %s cannot be set to “%s”"),
                   table, id, value);
      return FALSE;
    }
  if (desc->kind == LIMEN_GRANT_LOCATION)
    {
      g_autoptr(GVariant) old = store_call (bus, "GetPermission", g_variant_new ("(sss)", table, id, app_id),
                                            "(as)", NULL);
      g_autofree const char **old_words = NULL;

      /* The words the reference writes: an accuracy, then the time of the grant (kept). */
      g_strv_builder_add (words, g_str_equal (value, "no") ? "NONE" : "EXACT");
      if (old)
        g_variant_get (old, "(^a&s)", &old_words);
      if (old_words && old_words[0] && old_words[1])
        g_strv_builder_add (words, old_words[1]);
      else
        {
          g_autofree char *now = g_strdup_printf ("%" G_GINT64_FORMAT, g_get_monotonic_time ());

          g_strv_builder_add (words, now);
        }
    }
  else
    g_strv_builder_add (words, value);
  perms = g_strv_builder_end (words);
  reply = store_call (bus, "SetPermission", g_variant_new ("(sbss^as)", table, TRUE, id, app_id, perms), NULL, error);
  return reply != NULL;
}

/* Take @app_id's row out of (@table, @id). */
static gboolean
revoke_entry (GDBusConnection *bus, const char *app_id, const char *table, const char *id, GError **error)
{
  g_autoptr(GVariant) reply = NULL;

  if (g_str_equal (table, "documents"))
    {
      static const char *const all[] = { "read", "write", "grant-permissions", "delete", NULL };
      g_autoptr(GError) local = NULL;

      reply = g_dbus_connection_call_sync (bus, DOCS_NAME, DOCS_PATH, DOCS_NAME, "RevokePermissions",
                                           g_variant_new ("(ss^as)", id, app_id, all), NULL,
                                           G_DBUS_CALL_FLAGS_NONE, CALL_TIMEOUT_MS, NULL, &local);
      if (reply)
        return TRUE;
      /* No document portal running: the store's entry is all there is. */
      if (!g_error_matches (local, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN)
          && !g_error_matches (local, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
    }
  reply = store_call (bus, "DeletePermission", g_variant_new ("(sss)", table, id, app_id), NULL, error);
  return reply != NULL;
}

typedef struct {
  const char *app_id;
  const char *id;
  guint       n_revoked;
} RevokeData;

static gboolean
revoke_one (GDBusConnection *bus, const char *table, const char *id, GVariant *perms,
            GVariant *data, gpointer user_data, GError **error)
{
  RevokeData *revoke = user_data;
  g_autoptr(GVariant) row = g_variant_lookup_value (perms, revoke->app_id, G_VARIANT_TYPE_STRING_ARRAY);

  if (row == NULL || (revoke->id && !g_str_equal (revoke->id, id)))
    return TRUE;
  if (!revoke_entry (bus, revoke->app_id, table, id, error))
    return FALSE;
  revoke->n_revoked++;
  return TRUE;
}

gboolean
limen_perm_model_revoke (GDBusConnection *bus, const char *app_id, const char *table,
                         const char *id, guint *n_revoked, GError **error)
{
  RevokeData revoke = { app_id, id, 0 };
  gboolean ok;

  if (find_desc (table, id) == NULL && find_desc (table, NULL) == NULL)
    {
      gboolean known = FALSE;

      for (const LimenPermTable *t = limen_perm_tables; t->table; t++)
        known |= g_str_equal (t->table, table);
      if (!known)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("Unknown table “%s”"), table);
          return FALSE;
        }
    }
  ok = for_each_entry (bus, table, revoke_one, &revoke, error);
  if (n_revoked)
    *n_revoked = revoke.n_revoked;
  return ok;
}

gboolean
limen_perm_model_reset (GDBusConnection *bus, const char *app_id, guint *n_revoked, GError **error)
{
  RevokeData revoke = { app_id, NULL, 0 };
  gboolean ok = for_each_entry (bus, NULL, revoke_one, &revoke, error);

  if (n_revoked)
    *n_revoked = revoke.n_revoked;
  return ok;
}
