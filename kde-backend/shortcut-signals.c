/* Limen — GlobalShortcuts' Activated/Deactivated, in order, with activation tokens.
 *
 * An app whose shortcut fires may want to raise a window, which the window manager allows
 * for a token tied to the key press: on X11 a startup id carrying the key event's time
 * (made here), on Wayland a token KWin hands out (asked for through the Wayland module,
 * loaded once a shortcut is bound: KWin takes a new client in only after looking up its
 * .desktop file, which can outlast a key's wait). Only Activated carries one: KWin 5.27
 * keeps a single token alive and drops it when the next is asked for, so a token for the
 * key's release would void the press's before the app could use it.
 *
 * Asking KWin takes a round trip, so key signals queue: each waits for its token (at most
 * LIMEN_KDE_TOKEN_TIMEOUT_MS) and for every signal before it, so an app never hears the
 * release before the press, and a stopped compositor delays a key by the timeout, no more.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shortcut-signals.h"

#include <unistd.h>

#include "loader.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.GlobalShortcuts"
#define OBJECT_PATH "/org/freedesktop/portal/desktop"

typedef struct {
  GDBusConnection *connection;
  char            *sender;
  char            *handle;    /* NULL once the session ended: dropped */
  char            *signal;
  char            *action;
  gint64           timestamp;
  char            *token;
  gboolean         waiting;   /* for the compositor's token */
} KeySignal;

static GQueue queue = G_QUEUE_INIT;
static guint startup_serial;

static void
key_signal_free (KeySignal *k)
{
  g_object_unref (k->connection);
  g_free (k->sender);
  g_free (k->handle);
  g_free (k->signal);
  g_free (k->action);
  g_free (k->token);
  g_free (k);
}

static void
key_signal_send (KeySignal *k)
{
  g_autoptr(GError) error = NULL;
  GVariantBuilder options;

  g_variant_builder_init (&options, G_VARIANT_TYPE_VARDICT);
  if (k->token)
    g_variant_builder_add (&options, "{sv}", "activation_token", g_variant_new_string (k->token));
  if (!g_dbus_connection_emit_signal (k->connection, k->sender, OBJECT_PATH, IMPL_IFACE, k->signal,
                                      g_variant_new ("(ost@a{sv})", k->handle, k->action, (guint64) k->timestamp,
                                                     g_variant_builder_end (&options)),
                                      &error))
    g_debug ("%s for %s not sent: %s", k->signal, k->handle, error->message);
}

/* Send what is ready at the head of the queue. */
static void
flush (void)
{
  KeySignal *k;

  while ((k = g_queue_peek_head (&queue)) && !k->waiting)
    {
      g_queue_pop_head (&queue);
      if (k->handle)
        key_signal_send (k);
      key_signal_free (k);
    }
}

static void
on_token (const char *token, gpointer user_data)
{
  KeySignal *k = user_data;

  k->token = g_strdup (token);
  k->waiting = FALSE;
  g_debug ("%s %s activation token for %s", k->signal, token ? "got an" : "goes without an", k->action);
  flush ();
}

/* An X11 startup id: the window manager lets a window raised with it take the focus if
 * nothing newer than @timestamp happened. */
static char *
startup_id (gint64 timestamp)
{
  return g_strdup_printf ("limen-kde-%d-%u-global-shortcut_TIME%" G_GINT64_FORMAT, (int) getpid (),
                          ++startup_serial, timestamp);
}

void
limen_kde_shortcut_signal (GDBusConnection *connection, const char *sender, const char *handle, const char *signal,
                           const char *action, gint64 timestamp, const char *app_id)
{
  const char *wayland = g_getenv ("WAYLAND_DISPLAY");
  KeySignal *k = g_new0 (KeySignal, 1);

  k->connection = g_object_ref (connection);
  k->sender = g_strdup (sender);
  k->handle = g_strdup (handle);
  k->signal = g_strdup (signal);
  k->action = g_strdup (action);
  k->timestamp = MAX (timestamp, 0);
  g_queue_push_tail (&queue, k);
  if (app_id && wayland && *wayland)
    {
      /* Queued first: a signal before it may be sent from within this call. The token names
       * no app: KWin 5.27 starts its launch feedback (a bouncing cursor, a task bar entry)
       * for a token with an app id, on every press of a push-to-talk key; a token of
       * limen-kde's activates the app's window all the same. */
      k->waiting = TRUE;
      if (!limen_kde_wayland_activation_token ("", LIMEN_KDE_TOKEN_TIMEOUT_MS, on_token, k))
        k->waiting = FALSE;
    }
  else if (app_id && g_getenv ("DISPLAY") && g_strcmp0 (g_getenv ("XDG_SESSION_TYPE"), "wayland") != 0)
    k->token = startup_id (k->timestamp);
  flush ();
}

void
limen_kde_shortcut_signals_prepare (void)
{
  const char *wayland = g_getenv ("WAYLAND_DISPLAY");

  if (wayland && *wayland)
    limen_kde_wayland_activation_prepare ();
}

void
limen_kde_shortcut_signals_forget (const char *handle)
{
  for (GList *l = queue.head; l; l = l->next)
    {
      KeySignal *k = l->data;

      if (g_strcmp0 (k->handle, handle) == 0)
        g_clear_pointer (&k->handle, g_free);
    }
}
