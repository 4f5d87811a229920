/* Limen — Do Not Disturb while a screen or window is shared.
 *
 * A chat message that pops up during a share goes into the stream for everyone to read.
 * As Plasma asks of screen-sharing portals, while a session streams we hold an inhibition
 * on org.freedesktop.Notifications (Plasma's notification server turns on Do Not Disturb
 * while any is held) and drop it when the session ends. The person can turn this off in
 * the notification settings: plasmanotifyrc [DoNotDisturb] WhenScreenSharing=false.
 *
 * The sharing notification with its Stop button stays visible: it is sent with critical
 * urgency, which Plasma shows in Do Not Disturb mode.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "screencast.h"

#include <glib/gi18n.h>

#define NOTIFY_NAME "org.freedesktop.Notifications"
#define NOTIFY_PATH "/org/freedesktop/Notifications"
/* A notification server that does not answer must not keep a dead share's inhibition
 * pending for long; the cookie that comes later is given back at once anyway. */
#define INHIBIT_TIMEOUT_MS 5000

struct _LimenCastDnd {
  GDBusConnection *connection;
  guint32          cookie;     /* 0: none (yet) */
  gboolean         ended;      /* the share ended while Inhibit was pending */
};

/* KConfig's idea of a boolean: true/on/yes/1 (any case), everything else is false. */
static gboolean
kconfig_bool (const char *value)
{
  g_autofree char *v = g_strstrip (g_ascii_strdown (value, -1));

  return g_str_equal (v, "true") || g_str_equal (v, "on") || g_str_equal (v, "yes") || g_str_equal (v, "1");
}

/* One plasmanotifyrc of the cascade: the value it sets, or -1. A "[$i]" group of a system
 * file ends the cascade (@locked). */
static int
read_setting (const char *path, gboolean *locked)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *value = NULL;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL))
    return -1;
  if (g_key_file_has_group (kf, "DoNotDisturb][$i"))
    {
      *locked = TRUE;
      value = g_key_file_get_value (kf, "DoNotDisturb][$i", "WhenScreenSharing", NULL);
    }
  if (!value)
    value = g_key_file_get_value (kf, "DoNotDisturb", "WhenScreenSharing", NULL);
  if (!value)
    value = g_key_file_get_value (kf, "DoNotDisturb", "WhenScreenSharing[$i]", NULL);
  return value ? kconfig_bool (value) : -1;
}

/* plasmanotifyrc [DoNotDisturb] WhenScreenSharing, read as KConfig reads it: the system
 * files, then the person's, later ones winning unless an earlier one locked it; true
 * unless set. */
static gboolean
dnd_wanted (void)
{
  const char *const *dirs = g_get_system_config_dirs ();
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  gboolean wanted = TRUE;

  /* Most important first: the person's file, then $XDG_CONFIG_DIRS in order. */
  g_ptr_array_add (files, g_build_filename (g_get_user_config_dir (), "plasmanotifyrc", NULL));
  for (gsize i = 0; dirs[i]; i++)
    g_ptr_array_add (files, g_build_filename (dirs[i], "plasmanotifyrc", NULL));
  for (guint i = files->len; i-- > 0;)
    {
      gboolean locked = FALSE;
      int v = read_setting (g_ptr_array_index (files, i), &locked);

      if (v >= 0)
        wanted = v;
      if (locked && i > 0)
        break;
    }
  return wanted;
}

static void
dnd_free (LimenCastDnd *dnd)
{
  g_object_unref (dnd->connection);
  g_free (dnd);
}

static void
uninhibit (LimenCastDnd *dnd)
{
  g_debug ("ScreenCast: lifting Do Not Disturb (inhibition %u)", dnd->cookie);
  g_dbus_connection_call (dnd->connection, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_NAME, "UnInhibit",
                          g_variant_new ("(u)", dnd->cookie), NULL, G_DBUS_CALL_FLAGS_NO_AUTO_START,
                          INHIBIT_TIMEOUT_MS, NULL, NULL, NULL);
}

static void
on_inhibited (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LimenCastDnd *dnd = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (!reply || !g_variant_is_of_type (reply, G_VARIANT_TYPE ("(u)")))
    {
      /* No notification server, or one without Do Not Disturb: sharing goes on. */
      g_debug ("ScreenCast: no Do Not Disturb while sharing: %s", error ? error->message : "unexpected reply");
      if (dnd->ended)
        dnd_free (dnd);
      return;
    }
  g_variant_get (reply, "(u)", &dnd->cookie);
  g_debug ("ScreenCast: Do Not Disturb on while sharing (inhibition %u)", dnd->cookie);
  if (dnd->ended)
    {
      uninhibit (dnd);
      dnd_free (dnd);
    }
}

/* The share of @cast started streaming: turn on Do Not Disturb if the person wants it. */
void
limen_cast_dnd_begin (LimenCast *cast, GDBusConnection *connection)
{
  LimenCastDnd *dnd;

  if (cast->dnd || cast->streams->len == 0 || !connection)
    return;
  if (!dnd_wanted ())
    {
      g_debug ("ScreenCast: Do Not Disturb while sharing is turned off (plasmanotifyrc)");
      return;
    }
  dnd = g_new0 (LimenCastDnd, 1);
  dnd->connection = g_object_ref (connection);
  cast->dnd = dnd;
  /* Plasma names the app that asked in its "Do Not Disturb" status. */
  g_dbus_connection_call (connection, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_NAME, "Inhibit",
                          g_variant_new ("(ss@a{sv})", cast->app_id ? cast->app_id : "",
                                         _("Screen sharing in progress"),
                                         g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0)),
                          G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, INHIBIT_TIMEOUT_MS, NULL,
                          on_inhibited, dnd);
}

/* The share ended: lift Do Not Disturb (now, or when the pending Inhibit answers). */
void
limen_cast_dnd_end (LimenCast *cast)
{
  LimenCastDnd *dnd = g_steal_pointer (&cast->dnd);

  if (!dnd)
    return;
  if (dnd->cookie)
    {
      uninhibit (dnd);
      dnd_free (dnd);
    }
  else
    dnd->ended = TRUE;   /* on_inhibited frees it */
}
