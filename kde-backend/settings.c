/* Limen — org.freedesktop.impl.portal.Settings from kdeglobals.
 *
 * Publishes org.freedesktop.appearance (derived by the kdeglobals reader, which needs
 * no Qt) and every kdeglobals group as org.kde.kdeglobals.GROUP with string
 * values. A snapshot is kept; when a kdeglobals file of the cascade changes, a new
 * snapshot is taken and SettingChanged is emitted for every value that differs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <string.h>

#include "errors.h"
#include "kdeglobals.h"

#define APPEARANCE "org.freedesktop.appearance"
#define KDEGLOBALS_PREFIX "org.kde.kdeglobals."
#define MAX_NAMESPACES 64
#define MAX_NAME 1024
#define RELOAD_DELAY_MS 100

typedef struct {
  LimenDbusImplPortalSettings *skeleton;
  GHashTable *snapshot;        /* namespace → (key → GVariant) */
  GPtrArray  *monitors;        /* GFileMonitor */
  guint       reload_id;
} Settings;

static Settings *settings;

static GHashTable *
new_namespace_table (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_variant_unref);
}

static GHashTable *
get_namespace (GHashTable *snapshot, const char *ns)
{
  GHashTable *t = g_hash_table_lookup (snapshot, ns);

  if (!t)
    {
      t = new_namespace_table ();
      g_hash_table_insert (snapshot, g_strdup (ns), t);
    }
  return t;
}

static void
add_entry (const char *group, const char *key, const char *value, gpointer user_data)
{
  GHashTable *snapshot = user_data;
  g_autofree char *ns = NULL;

  /* A file with broken encoding must not put invalid UTF-8 on the bus. */
  if (!g_utf8_validate (group, -1, NULL) || !g_utf8_validate (key, -1, NULL) ||
      !g_utf8_validate (value, -1, NULL))
    return;
  ns = g_strconcat (KDEGLOBALS_PREFIX, group, NULL);
  g_hash_table_insert (get_namespace (snapshot, ns), g_strdup (key),
                       g_variant_ref_sink (g_variant_new_string (value)));
}

static GHashTable *
take_snapshot (void)
{
  GHashTable *snapshot = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                (GDestroyNotify) g_hash_table_unref);
  GHashTable *appearance = get_namespace (snapshot, APPEARANCE);
  LimenAppearance a;

  limen_kdeglobals_read_appearance (&a);
  g_hash_table_insert (appearance, g_strdup ("color-scheme"),
                       g_variant_ref_sink (g_variant_new_uint32 (a.color_scheme)));
  g_hash_table_insert (appearance, g_strdup ("contrast"),
                       g_variant_ref_sink (g_variant_new_uint32 (a.high_contrast ? 1 : 0)));
  g_hash_table_insert (appearance, g_strdup ("reduced-motion"),
                       g_variant_ref_sink (g_variant_new_uint32 (a.reduced_motion ? 1 : 0)));
  /* Out-of-range components mean "no accent colour" in the specification. */
  g_hash_table_insert (appearance, g_strdup ("accent-color"),
                       g_variant_ref_sink (a.has_accent
                                             ? g_variant_new ("(ddd)", a.accent_r, a.accent_g, a.accent_b)
                                             : g_variant_new ("(ddd)", -1.0, -1.0, -1.0)));
  limen_kdeglobals_foreach (add_entry, snapshot);
  return snapshot;
}

/* A namespace pattern matches exactly, or by prefix when it ends in '*'. */
static gboolean
namespace_matches (const char *ns, const char *const *patterns)
{
  if (!patterns || !patterns[0])
    return TRUE;
  for (const char *const *p = patterns; *p; p++)
    {
      gsize len = strlen (*p);

      if (len == 0)
        return TRUE;
      if ((*p)[len - 1] == '*' ? strncmp (ns, *p, len - 1) == 0 : g_str_equal (ns, *p))
        return TRUE;
    }
  return FALSE;
}

static gboolean
on_read_all (LimenDbusImplPortalSettings *skeleton,
             GDBusMethodInvocation       *invocation,
             const char *const           *namespaces,
             gpointer                     user_data)
{
  GVariantBuilder b;
  GHashTableIter iter;
  gpointer ns, table;
  guint n = 0;

  for (; namespaces[n]; n++)
    if (strlen (namespaces[n]) > MAX_NAME || !g_utf8_validate (namespaces[n], -1, NULL))
      {
        g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                       "Invalid namespace: too long or not UTF-8");
        return G_DBUS_METHOD_INVOCATION_HANDLED;
      }
  if (n > MAX_NAMESPACES)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid namespaces: too many patterns");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sa{sv}}"));
  g_hash_table_iter_init (&iter, settings->snapshot);
  while (g_hash_table_iter_next (&iter, &ns, &table))
    {
      GHashTableIter kiter;
      gpointer key, value;

      if (!namespace_matches (ns, namespaces))
        continue;
      g_variant_builder_open (&b, G_VARIANT_TYPE ("{sa{sv}}"));
      g_variant_builder_add (&b, "s", ns);
      g_variant_builder_open (&b, G_VARIANT_TYPE ("a{sv}"));
      g_hash_table_iter_init (&kiter, table);
      while (g_hash_table_iter_next (&kiter, &key, &value))
        g_variant_builder_add (&b, "{sv}", key, value);
      g_variant_builder_close (&b);
      g_variant_builder_close (&b);
    }
  limen_dbus_impl_portal_settings_complete_read_all (skeleton, invocation, g_variant_builder_end (&b));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_read (LimenDbusImplPortalSettings *skeleton,
         GDBusMethodInvocation       *invocation,
         const char                  *ns,
         const char                  *key,
         gpointer                     user_data)
{
  GHashTable *table = g_hash_table_lookup (settings->snapshot, ns);
  GVariant *value = table ? g_hash_table_lookup (table, key) : NULL;

  if (!value)
    {
      /* The name is not echoed: it may be long or hostile. */
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                     "Requested setting not found");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_dbus_impl_portal_settings_complete_read (skeleton, invocation, g_variant_new_variant (value));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
emit_changes (GHashTable *old, GHashTable *new)
{
  GHashTableIter iter;
  gpointer ns, table;

  g_hash_table_iter_init (&iter, new);
  while (g_hash_table_iter_next (&iter, &ns, &table))
    {
      GHashTable *old_table = g_hash_table_lookup (old, ns);
      GHashTableIter kiter;
      gpointer key, value;

      g_hash_table_iter_init (&kiter, table);
      while (g_hash_table_iter_next (&kiter, &key, &value))
        {
          GVariant *before = old_table ? g_hash_table_lookup (old_table, key) : NULL;

          if (before && g_variant_equal (before, value))
            continue;
          g_debug ("Setting %s %s changed", (char *) ns, (char *) key);
          limen_dbus_impl_portal_settings_emit_setting_changed (settings->skeleton, ns, key,
                                                                g_variant_new_variant (value));
        }
    }
}

static gboolean
reload (gpointer user_data)
{
  GHashTable *old = settings->snapshot;

  settings->reload_id = 0;
  settings->snapshot = take_snapshot ();
  emit_changes (old, settings->snapshot);
  g_hash_table_unref (old);
  return G_SOURCE_REMOVE;
}

/* KConfig saves by renaming a new file over the old one, which arrives as several
 * events: coalesce them. */
static void
on_file_changed (GFileMonitor *monitor, GFile *file, GFile *other, GFileMonitorEvent event,
                 gpointer user_data)
{
  if (event == G_FILE_MONITOR_EVENT_ATTRIBUTE_CHANGED)
    return;
  if (settings->reload_id)
    g_source_remove (settings->reload_id);
  settings->reload_id = g_timeout_add (RELOAD_DELAY_MS, reload, NULL);
}

static void
watch_files (void)
{
  settings->monitors = limen_kdeglobals_watch (G_CALLBACK (on_file_changed), NULL);
}

GDBusInterfaceSkeleton *
limen_kde_settings_new (void)
{
  settings = g_new0 (Settings, 1);
  settings->skeleton = limen_dbus_impl_portal_settings_skeleton_new ();
  limen_dbus_impl_portal_settings_set_version (settings->skeleton, 1);
  settings->snapshot = take_snapshot ();
  g_signal_connect (settings->skeleton, "handle-read-all", G_CALLBACK (on_read_all), NULL);
  g_signal_connect (settings->skeleton, "handle-read", G_CALLBACK (on_read), NULL);
  watch_files ();
  return G_DBUS_INTERFACE_SKELETON (settings->skeleton);
}
