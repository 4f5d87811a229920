/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal-config.h"

#include <gio/gio.h>
#include <string.h>

#include "limen-config.h"

struct _LimenPortalConfig {
  GPtrArray  *impls;      /* LimenPortalImpl, sorted by source name */
  char      **desktops;   /* XDG_CURRENT_DESKTOP entries */
  GKeyFile   *conf;       /* portals.conf [preferred], or NULL */
  char       *conf_path;
};

static void
impl_free (LimenPortalImpl *impl)
{
  g_free (impl->source);
  g_free (impl->dbus_name);
  g_strfreev (impl->interfaces);
  g_strfreev (impl->use_in);
  g_free (impl);
}

static LimenPortalImpl *
load_portal_file (const char *path, const char *source)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  LimenPortalImpl *impl;
  g_autofree char *name = NULL;
  g_auto(GStrv) interfaces = NULL;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, &error))
    {
      g_warning ("Ignoring %s: %s", path, error->message);
      return NULL;
    }
  name = g_key_file_get_string (kf, "portal", "DBusName", NULL);
  interfaces = g_key_file_get_string_list (kf, "portal", "Interfaces", NULL, NULL);
  if (name == NULL || !g_dbus_is_name (name) || g_dbus_is_unique_name (name) || interfaces == NULL)
    {
      g_warning ("Ignoring %s: it needs a DBusName and Interfaces in [portal]", path);
      return NULL;
    }
  impl = g_new0 (LimenPortalImpl, 1);
  impl->source = g_strdup (source);
  impl->dbus_name = g_steal_pointer (&name);
  impl->interfaces = g_steal_pointer (&interfaces);
  impl->use_in = g_key_file_get_string_list (kf, "portal", "UseIn", NULL, NULL);
  return impl;
}

static int
compare_impls (gconstpointer a, gconstpointer b)
{
  const LimenPortalImpl *ia = *(LimenPortalImpl * const *) a;
  const LimenPortalImpl *ib = *(LimenPortalImpl * const *) b;

  return strcmp (ia->source, ib->source);
}

static void
load_portal_dir (LimenPortalConfig *config, const char *dir, GHashTable *seen)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *entry;

  if (d == NULL)
    return;
  while ((entry = g_dir_read_name (d)))
    {
      g_autofree char *source = NULL;
      g_autofree char *path = NULL;
      LimenPortalImpl *impl;

      if (!g_str_has_suffix (entry, ".portal"))
        continue;
      source = g_strndup (entry, strlen (entry) - strlen (".portal"));
      /* Earlier directories take precedence, as with any XDG search path. */
      if (g_hash_table_contains (seen, source))
        continue;
      path = g_build_filename (dir, entry, NULL);
      impl = load_portal_file (path, source);
      if (impl == NULL)
        continue;
      g_debug ("Backend %s (%s) from %s", impl->source, impl->dbus_name, path);
      g_hash_table_add (seen, g_strdup (source));
      g_ptr_array_add (config->impls, impl);
    }
}

static void
load_conf (LimenPortalConfig *config, const char * const *conf_dirs)
{
  /* <desktop>-portals.conf for each desktop in order, then portals.conf; in each case
   * the first directory that has one wins. */
  for (guint i = 0; config->desktops[i]; i++)
    {
      g_autofree char *lower = g_ascii_strdown (config->desktops[i], -1);
      g_autofree char *name = g_strconcat (lower, "-portals.conf", NULL);

      for (guint j = 0; conf_dirs[j]; j++)
        {
          g_autofree char *path = g_build_filename (conf_dirs[j], name, NULL);
          g_autoptr(GKeyFile) kf = g_key_file_new ();

          if (g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL))
            {
              config->conf = g_steal_pointer (&kf);
              config->conf_path = g_steal_pointer (&path);
              return;
            }
        }
    }
  for (guint j = 0; conf_dirs[j]; j++)
    {
      g_autofree char *path = g_build_filename (conf_dirs[j], "portals.conf", NULL);
      g_autoptr(GKeyFile) kf = g_key_file_new ();

      if (g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL))
        {
          config->conf = g_steal_pointer (&kf);
          config->conf_path = g_steal_pointer (&path);
          return;
        }
    }
}

LimenPortalConfig *
limen_portal_config_load_from (const char * const *portal_dirs,
                               const char * const *conf_dirs,
                               const char * const *desktops)
{
  LimenPortalConfig *config = g_new0 (LimenPortalConfig, 1);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  config->impls = g_ptr_array_new_with_free_func ((GDestroyNotify) impl_free);
  config->desktops = g_strdupv ((char **) desktops);
  for (guint i = 0; portal_dirs[i]; i++)
    load_portal_dir (config, portal_dirs[i], seen);
  g_ptr_array_sort (config->impls, compare_impls);
  load_conf (config, conf_dirs);
  if (config->conf_path)
    g_debug ("Using backend preferences from %s", config->conf_path);
  return config;
}

LimenPortalConfig *
limen_portal_config_load (void)
{
  g_autoptr(GPtrArray) portal_dirs = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) conf_dirs = g_ptr_array_new_with_free_func (g_free);
  const char *override = g_getenv ("XDG_DESKTOP_PORTAL_DIR");
  const char *current = g_getenv ("XDG_CURRENT_DESKTOP");
  g_auto(GStrv) desktops = g_strsplit (current ? current : "", ":", -1);
  const char * const *dirs;

  if (override && *override)
    g_ptr_array_add (portal_dirs, g_strdup (override));
  else
    {
      g_ptr_array_add (portal_dirs, g_build_filename (g_get_user_data_dir (), "xdg-desktop-portal", "portals", NULL));
      for (dirs = g_get_system_data_dirs (); *dirs; dirs++)
        g_ptr_array_add (portal_dirs, g_build_filename (*dirs, "xdg-desktop-portal", "portals", NULL));
      g_ptr_array_add (portal_dirs, g_build_filename (LIMEN_DATADIR, "xdg-desktop-portal", "portals", NULL));
    }
  g_ptr_array_add (portal_dirs, NULL);

  /* The reference's test harnesses put their portals.conf next to their .portal files:
   * that directory, when named, is searched for conf files first. */
  if (override && *override)
    g_ptr_array_add (conf_dirs, g_strdup (override));
  g_ptr_array_add (conf_dirs, g_build_filename (g_get_user_config_dir (), "xdg-desktop-portal", NULL));
  for (dirs = g_get_system_config_dirs (); *dirs; dirs++)
    g_ptr_array_add (conf_dirs, g_build_filename (*dirs, "xdg-desktop-portal", NULL));
  g_ptr_array_add (conf_dirs, g_build_filename (LIMEN_SYSCONFDIR, "xdg-desktop-portal", NULL));
  g_ptr_array_add (conf_dirs, g_build_filename (g_get_user_data_dir (), "xdg-desktop-portal", NULL));
  for (dirs = g_get_system_data_dirs (); *dirs; dirs++)
    g_ptr_array_add (conf_dirs, g_build_filename (*dirs, "xdg-desktop-portal", NULL));
  g_ptr_array_add (conf_dirs, g_build_filename (LIMEN_DATADIR, "xdg-desktop-portal", NULL));
  g_ptr_array_add (conf_dirs, NULL);

  return limen_portal_config_load_from ((const char * const *) portal_dirs->pdata,
                                        (const char * const *) conf_dirs->pdata,
                                        (const char * const *) desktops);
}

void
limen_portal_config_free (LimenPortalConfig *config)
{
  g_ptr_array_unref (config->impls);
  g_strfreev (config->desktops);
  g_clear_pointer (&config->conf, g_key_file_unref);
  g_free (config->conf_path);
  g_free (config);
}

static gboolean
implements (const LimenPortalImpl *impl, const char *interface)
{
  return g_strv_contains ((const char * const *) impl->interfaces, interface);
}

static void
add_unique (GPtrArray *out, const LimenPortalImpl *impl)
{
  if (!g_ptr_array_find (out, impl, NULL))
    g_ptr_array_add (out, (gpointer) impl);
}

static GPtrArray *
find_all (LimenPortalConfig *config, const char *interface, gboolean any_fallback)
{
  GPtrArray *out = g_ptr_array_new ();
  g_auto(GStrv) wanted = NULL;

  if (config->conf)
    {
      wanted = g_key_file_get_string_list (config->conf, "preferred", interface, NULL, NULL);
      if (wanted == NULL)
        wanted = g_key_file_get_string_list (config->conf, "preferred", "default", NULL, NULL);
    }
  if (wanted)
    {
      for (guint i = 0; wanted[i]; i++)
        {
          const char *w = g_strstrip (wanted[i]);

          if (g_str_equal (w, "none"))
            break;
          for (guint j = 0; j < config->impls->len; j++)
            {
              const LimenPortalImpl *impl = g_ptr_array_index (config->impls, j);

              if ((g_str_equal (w, "*") || g_str_equal (w, impl->source)) && implements (impl, interface))
                add_unique (out, impl);
            }
        }
      return out;
    }

  /* No preference: the deprecated UseIn= keys, desktop by desktop. */
  for (guint d = 0; config->desktops[d]; d++)
    for (guint j = 0; j < config->impls->len; j++)
      {
        const LimenPortalImpl *impl = g_ptr_array_index (config->impls, j);

        if (!implements (impl, interface) || impl->use_in == NULL)
          continue;
        for (guint u = 0; impl->use_in[u]; u++)
          if (g_ascii_strcasecmp (impl->use_in[u], config->desktops[d]) == 0)
            add_unique (out, impl);
      }
  if (out->len > 0 || !any_fallback)
    return out;

  /* Nothing is meant for this desktop: any backend that offers the interface. */
  for (guint j = 0; j < config->impls->len; j++)
    {
      const LimenPortalImpl *impl = g_ptr_array_index (config->impls, j);

      if (implements (impl, interface))
        {
          g_debug ("No configured backend for %s; falling back to %s", interface, impl->source);
          add_unique (out, impl);
        }
    }
  return out;
}

GPtrArray *
limen_portal_config_find_all (LimenPortalConfig *config, const char *interface)
{
  return find_all (config, interface, TRUE);
}

GPtrArray *
limen_portal_config_find_all_for_desktop (LimenPortalConfig *config, const char *interface)
{
  return find_all (config, interface, FALSE);
}

const LimenPortalImpl *
limen_portal_config_find (LimenPortalConfig *config, const char *interface)
{
  g_autoptr(GPtrArray) all = limen_portal_config_find_all (config, interface);

  return all->len > 0 ? g_ptr_array_index (all, 0) : NULL;
}

const char *
limen_portal_config_get_conf_path (LimenPortalConfig *config)
{
  return config->conf_path;
}

GPtrArray *
limen_portal_config_get_impls (LimenPortalConfig *config)
{
  return config->impls;
}
