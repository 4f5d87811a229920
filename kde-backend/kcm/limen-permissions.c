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

/* @text as it may go to a terminal: apps wrote it (a window's title, a file's name, an id
 * any host program can store), so control characters, which a terminal would act on, and
 * invisible format characters (bidi overrides, zero widths), which hide what is there, are
 * written as escapes (\x1b, \u202e); bytes that are not UTF-8 as U+FFFD. */
static char *
shown (const char *text)
{
  g_autofree char *valid = g_utf8_make_valid (text, -1);
  GString *out = g_string_sized_new (strlen (valid));

  for (const char *p = valid; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (c < 0x100 && g_unichar_iscntrl (c))
        g_string_append_printf (out, "\\x%02x", c);
      else if (g_unichar_type (c) == G_UNICODE_FORMAT || g_unichar_iscntrl (c))
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_unichar (out, c);
    }
  return g_string_free (out, FALSE);
}

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
        {
          g_autofree char *text = shown (app);

          g_print ("%s\n", text);
        }
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
      g_autofree char *title = shown (g->title), *detail = shown (g->detail), *table = shown (g->table);
      g_autofree char *id = shown (g->id);

      if ((int) g->desc->group != group)
        {
          group = g->desc->group;
          g_print ("%s%s:\n", i ? "\n" : "", limen_grant_group_title (g->desc->group));
        }
      g_print ("  %s: %s\n", title, detail);
      g_print ("    [%s %s]\n", table, id);
    }
  return 0;
}

/* On stdout with status 0 when asked for (--help), on stderr with status 2 after a mistake. */
static int
usage (gboolean asked)
{
  const char *text = _("Usage: limen-permissions list | show APP | set APP TABLE ID yes|no|ask | revoke APP TABLE [ID] | reset APP");

  if (asked)
    g_print ("%s\n", text);
  else
    g_printerr ("%s\n", text);
  return asked ? 0 : 2;
}

/* Whether argv is one of the commands with its number of arguments, before any bus is needed. */
static gboolean
command_shape_ok (int argc, char **argv)
{
  static const struct { const char *name; int min, max; } commands[] = {
    { "list", 2, 2 }, { "show", 3, 3 }, { "set", 6, 6 }, { "revoke", 4, 5 }, { "reset", 3, 3 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (argv[1], commands[i].name))
      return argc >= commands[i].min && argc <= commands[i].max;
  return FALSE;
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
  if (argc == 2 && (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h")))
    return usage (TRUE);
  if (argc < 2 || !command_shape_ok (argc, argv))
    return usage (FALSE);
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
  else /* reset, the only shape left */
    status = limen_perm_model_reset (bus, app_arg (argv[2]), &n, &error) ? 0 : 1;
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
