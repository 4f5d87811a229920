/* limen-permissions — what apps hold in the portal permission store, and taking it back.
 *
 *   limen-permissions list                  every app that holds something
 *   limen-permissions show APP              what APP holds, in words
 *   limen-permissions set APP TABLE ID VALUE  answer yes, no or ask for APP at (TABLE, ID)
 *   limen-permissions revoke APP TABLE [ID] take back APP's rights in TABLE (or one entry)
 *   limen-permissions reset APP             take back everything APP holds
 *
 * APP "" (or "-") is the entry of apps that could not be identified. It talks to the
 * session bus's PermissionStore and Documents services, Limen's or the reference's.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "permission-model.h"

#define GETTEXT_PACKAGE "limen"
#include <glib/gi18n-lib.h>

static const char *
app_arg (const char *arg)
{
  return g_str_equal (arg, "-") ? "" : arg;
}

static int
cmd_list (GDBusConnection *bus, GError **error)
{
  g_autoptr(GPtrArray) apps = limen_perm_model_list_apps (bus, error);

  if (apps == NULL)
    return 1;
  for (guint i = 0; i < apps->len; i++)
    {
      const char *app = g_ptr_array_index (apps, i);

      if (*app)
        g_print ("%s\n", app);
      else
        /* TRANSLATORS: the list entry of apps without an app id; "-" is what to type for it */
        g_print ("- (%s)\n", _("Apps that could not be identified"));
    }
  return 0;
}

static int
cmd_show (GDBusConnection *bus, const char *app_id, GError **error)
{
  g_autoptr(GPtrArray) grants = limen_perm_model_show_app (bus, app_id, error);
  int group = -1;

  if (grants == NULL)
    return 1;
  if (grants->len == 0)
    g_print ("%s\n", _("Holds nothing."));
  for (guint i = 0; i < grants->len; i++)
    {
      LimenGrant *g = g_ptr_array_index (grants, i);

      if ((int) g->desc->group != group)
        {
          group = g->desc->group;
          g_print ("%s%s:\n", i ? "\n" : "", limen_grant_group_title (g->desc->group));
        }
      g_print ("  %s: %s\n", g->title, g->detail);
      g_print ("    [%s %s]\n", g->table, g->id);
    }
  return 0;
}

static int
usage (void)
{
  g_printerr ("%s\n", _("Usage: limen-permissions list | show APP | set APP TABLE ID yes|no|ask | revoke APP TABLE [ID] | reset APP"));
  return 2;
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GDBusConnection) bus = NULL;
  guint n = 0;
  int status = 1;

  setlocale (LC_ALL, "");
  limen_perm_model_init_i18n ();
  textdomain (GETTEXT_PACKAGE);
  if (argc < 2)
    return usage ();
  bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  if (bus == NULL)
    ;
  else if (g_str_equal (argv[1], "list") && argc == 2)
    status = cmd_list (bus, &error);
  else if (g_str_equal (argv[1], "show") && argc == 3)
    status = cmd_show (bus, app_arg (argv[2]), &error);
  else if (g_str_equal (argv[1], "set") && argc == 6)
    status = limen_perm_model_set (bus, app_arg (argv[2]), argv[3], argv[4], argv[5], &error) ? 0 : 1;
  else if (g_str_equal (argv[1], "revoke") && (argc == 4 || argc == 5))
    status = limen_perm_model_revoke (bus, app_arg (argv[2]), argv[3], argc == 5 ? argv[4] : NULL, &n, &error) ? 0 : 1;
  else if (g_str_equal (argv[1], "reset") && argc == 3)
    status = limen_perm_model_reset (bus, app_arg (argv[2]), &n, &error) ? 0 : 1;
  else
    return usage ();
  if (error)
    {
      g_dbus_error_strip_remote_error (error);
      g_printerr ("limen-permissions: %s\n", error->message);
      return 1;
    }
  if (status == 0 && (g_str_equal (argv[1], "revoke") || g_str_equal (argv[1], "reset")))
    {
      g_print (g_dngettext (GETTEXT_PACKAGE, "%u permission revoked\n", "%u permissions revoked\n", n), n);
      /* Revoking what is not held is a mistake worth a status a script can see. */
      if (n == 0 && argc == 5)
        status = 3;
    }
  return status;
}
