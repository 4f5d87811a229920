/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "daemon.h"

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <locale.h>
#include <stdio.h>
#include <unistd.h>

#include "app-info.h"
#include "log.h"
#include "limen-config.h"

static GMainLoop *main_loop;
static GDBusConnection *daemon_connection;
static int exit_status;
static gboolean quitting;
static guint names_owned;
static guint names_pending;
static GCancellable *quit_cancellable;
static GMainContext *signal_context;
/* TRUE while the main thread waits in g_bus_get_sync(); cleared under connect_lock. */
static gboolean connecting;
static GMutex connect_lock;

/* How long a signal may wait for a start-up stuck in connecting to end by itself. */
#define CONNECT_GRACE_MS 500

void
limen_daemon_quit (int status)
{
  if (quitting)
    return;
  quitting = TRUE;
  exit_status = status;
  g_cancellable_cancel (quit_cancellable);
  if (main_loop)
    g_main_loop_quit (main_loop);
}

static gboolean
quit_on_signal (gpointer user_data)
{
  limen_daemon_quit (0);
  return G_SOURCE_REMOVE;
}

/* On the signal thread, a moment after a signal that found the main thread connecting.
 * The quit cancellable ends a wait in the socket or the authentication, but not one for
 * the reply to Hello, which GDBus makes without a cancellable (up to its 25 s timeout).
 * Nothing has been exported, requested or written yet, so leaving at once loses
 * nothing; holding connect_lock keeps the main thread from going on to any of that. */
static gboolean
leave_if_still_connecting (gpointer user_data)
{
  g_mutex_lock (&connect_lock);
  if (connecting)
    _exit (0);
  g_mutex_unlock (&connect_lock);
  return G_SOURCE_REMOVE;
}

/* On the signal thread. The main thread may be waiting in a nested loop on a bus round
 * trip that never ends: dbus-daemon silently drops its own replies (GetConnectionCredentials,
 * ReleaseName, ...) to a connection whose queue is over its limits, e.g. more than 64 fds of
 * queued requests. Cancelling ends that wait at once; the quit itself runs on the main thread.
 * During start-up's connect, the grace of leave_if_still_connecting starts too. */
static gboolean
on_signal (gpointer user_data)
{
  g_debug ("Received %s, leaving", (const char *) user_data);
  g_cancellable_cancel (quit_cancellable);
  g_main_context_invoke_full (NULL, G_PRIORITY_HIGH, quit_on_signal, NULL, NULL);
  g_mutex_lock (&connect_lock);
  if (connecting)
    {
      GSource *grace = g_timeout_source_new (CONNECT_GRACE_MS);

      g_source_set_callback (grace, leave_if_still_connecting, NULL, NULL);
      g_source_attach (grace, signal_context);
      g_source_unref (grace);
    }
  g_mutex_unlock (&connect_lock);
  return G_SOURCE_CONTINUE;
}

static gpointer
signal_thread_func (gpointer user_data)
{
  for (;;)
    g_main_context_iteration (signal_context, TRUE);
  return NULL;
}

static void
watch_signals (void)
{
  static const struct { int signum; const char *name; } signals[] = {
    { SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" }, { SIGTERM, "SIGTERM" },
  };

  signal_context = g_main_context_new ();
  for (guint i = 0; i < G_N_ELEMENTS (signals); i++)
    {
      GSource *source = g_unix_signal_source_new (signals[i].signum);

      g_source_set_callback (source, on_signal, (gpointer) signals[i].name, NULL);
      g_source_attach (source, signal_context);
      g_source_unref (source);
    }
  /* Lives until the process exits. */
  g_thread_unref (g_thread_new ("limen-signals", signal_thread_func, NULL));
}

typedef struct {
  const char *name;
  gboolean    primary;
  gboolean    acquired;
} OwnedName;

static void
on_name_acquired (GDBusConnection *connection, const char *name, gpointer user_data)
{
  OwnedName *owned = user_data;

  g_debug ("Owned %s", name);
  if (!owned->acquired)
    {
      owned->acquired = TRUE;
      names_owned++;
      names_pending--;
    }
}

static void
on_name_lost (GDBusConnection *connection, const char *name, gpointer user_data)
{
  OwnedName *owned = user_data;

  if (connection == NULL)
    {
      g_message ("Lost the session bus connection, leaving");
      limen_daemon_quit (0);
      return;
    }
  if (owned->acquired)
    {
      /* Replaced by another instance (--replace): a normal, successful end. */
      g_message ("%s was taken over by another process, leaving", name);
      limen_daemon_quit (0);
      return;
    }
  if (owned->primary)
    {
      g_printerr ("%s: %s is owned by another process (use --replace to take it over)\n",
                  g_get_prgname (), name);
      limen_daemon_quit (1);
      return;
    }
  g_warning ("Could not own %s; its interface is not offered", name);
  names_pending--;
}

/* @spec's prepare step and the signal watch, on a thread of their own while the main
 * thread connects. */
static gpointer
prepare_thread_func (gpointer user_data)
{
  const LimenDaemonSpec *spec = user_data;

  if (spec->prepare)
    spec->prepare (spec->user_data);
  watch_signals ();
  return NULL;
}

/* The session bus. GIO's setup of its D-Bus types, the socket, the authentication's round
 * trips and Hello take longer than anything else before the daemon can serve, so the main
 * thread starts on them at once, and @spec's prepare step and the signal watch run beside
 * them on another thread instead of before or after them. A signal ends the wait (the
 * cancellable, else leave_if_still_connecting): a bus that takes the connection but never
 * answers (a stopped dbus-daemon) would otherwise keep the daemon deaf to SIGTERM, its
 * main loop not running yet. */
static GDBusConnection *
connect_bus (const LimenDaemonSpec *spec, GError **error)
{
  GThread *prepare_thread;
  GDBusConnection *connection;

  connecting = TRUE;    /* before any other thread exists */
  prepare_thread = g_thread_new ("limen-prepare", prepare_thread_func, (gpointer) spec);
  connection = g_bus_get_sync (G_BUS_TYPE_SESSION, quit_cancellable, error);
  g_mutex_lock (&connect_lock);
  connecting = FALSE;
  g_mutex_unlock (&connect_lock);

  g_thread_join (prepare_thread);
  return connection;
}

/* Request every name of @spec (the first is primary); their ids go to @owned_ids. */
static OwnedName *
own_names (const LimenDaemonSpec *spec, gboolean replace, GArray *owned_ids)
{
  guint n_names;
  OwnedName *owned;

  for (n_names = 0; spec->bus_names[n_names]; n_names++)
    ;
  owned = g_new0 (OwnedName, n_names);
  for (guint i = 0; i < n_names; i++)
    {
      GBusNameOwnerFlags flags = G_BUS_NAME_OWNER_FLAGS_ALLOW_REPLACEMENT;
      guint id;

      if (replace)
        flags |= G_BUS_NAME_OWNER_FLAGS_REPLACE;
      owned[i].name = spec->bus_names[i];
      owned[i].primary = (i == 0 && spec->own_primary == NULL);
      names_pending++;
      id = g_bus_own_name_on_connection (daemon_connection, spec->bus_names[i], flags,
                                         on_name_acquired, on_name_lost, &owned[i], NULL);
      g_array_append_val (owned_ids, id);
    }
  return owned;
}

/* g_dbus_connection_close_sync() returns once the stream is closed, but GDBus marks the
 * connection closed a moment later, on its worker thread. Until then g_bus_unown_name()
 * takes it for open and sends ReleaseName into the closed stream, which fails with a
 * warning ("Error releasing name ...: The connection is closed"; seen at about one clean
 * stop in fifteen). The mark comes within microseconds; the bound is only a safeguard. */
static void
wait_until_marked_closed (GDBusConnection *connection)
{
  for (guint i = 0; i < 1000 && !g_dbus_connection_is_closed (connection); i++)
    g_usleep (500);
}

/* Let queued replies and signals (Response, Closed) reach their peers, then close: that
 * releases all our names at once. g_bus_unown_name on an open connection would wait for a
 * ReleaseName reply (25 s), which dbus-daemon may drop (see on_signal). */
static void
leave_bus (GArray *owned_ids)
{
  g_dbus_connection_flush_sync (daemon_connection, NULL, NULL);
  g_dbus_connection_close_sync (daemon_connection, NULL, NULL);
  wait_until_marked_closed (daemon_connection);
  for (guint i = 0; i < owned_ids->len; i++)
    g_bus_unown_name (g_array_index (owned_ids, guint, i));
  limen_app_info_tracker_shutdown ();
  g_clear_object (&daemon_connection);
  g_clear_pointer (&main_loop, g_main_loop_unref);
}

static void
init_i18n (void)
{
  setlocale (LC_ALL, "");
  /* LIMEN_LOCALEDIR lets an uninstalled build (tests, the quick start) find its catalogs. */
  bindtextdomain (LIMEN_GETTEXT_PACKAGE, g_getenv ("LIMEN_LOCALEDIR") ? g_getenv ("LIMEN_LOCALEDIR") : LIMEN_LOCALEDIR);
  bind_textdomain_codeset (LIMEN_GETTEXT_PACKAGE, "UTF-8");
  textdomain (LIMEN_GETTEXT_PACKAGE);
}

int
limen_daemon_main (const LimenDaemonSpec *spec, int argc, char **argv)
{
  gboolean opt_replace = FALSE, opt_verbose = FALSE, opt_version = FALSE;
  const GOptionEntry entries[] = {
    { "replace", 'r', 0, G_OPTION_ARG_NONE, &opt_replace, N_("Replace a running instance"), NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &opt_verbose, N_("Print debug information"), NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, &opt_version, N_("Print the version and exit"), NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) owned_ids = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autofree OwnedName *owned = NULL;

  init_i18n ();
  context = g_option_context_new (NULL);
  g_option_context_set_translation_domain (context, LIMEN_GETTEXT_PACKAGE);
  g_option_context_set_summary (context, spec->summary);
  g_option_context_add_main_entries (context, entries, LIMEN_GETTEXT_PACKAGE);
  if (spec->extra_entries)
    g_option_context_add_main_entries (context, spec->extra_entries, LIMEN_GETTEXT_PACKAGE);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s: %s\n", spec->program, error->message);
      return 1;
    }

  if (opt_version)
    {
      g_print ("%s %s (test hooks: %s)\n", spec->program, LIMEN_VERSION,
               limen_app_info_test_hooks_compiled () ? "compiled in" : "not compiled in");
      return 0;
    }

  limen_log_init (spec->program, opt_verbose);

  /* A write to a vanished peer must not kill the daemon. */
  signal (SIGPIPE, SIG_IGN);

  /* Made before any thread, so that a signal can cancel every wait from the start. */
  quit_cancellable = g_cancellable_new ();
  daemon_connection = connect_bus (spec, &error);
  if (daemon_connection == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      /* A signal while connecting: the stop asked for, with nothing to undo yet. */
      g_debug ("Left while connecting to the session bus");
      return 0;
    }
  if (daemon_connection == NULL)
    {
      g_printerr ("%s: no session bus: %s\n", spec->program, error->message);
      return 1;
    }
  /* We decide when to exit, not GDBus. */
  g_dbus_connection_set_exit_on_close (daemon_connection, FALSE);

  main_loop = g_main_loop_new (NULL, FALSE);

  limen_app_info_tracker_init (daemon_connection, quit_cancellable);

  if (spec->on_bus && !spec->on_bus (daemon_connection, spec->user_data, &error))
    {
      g_printerr ("%s: %s\n", spec->program, error->message);
      return 1;
    }

  limen_app_info_tracker_ready ();
  if (spec->own_primary && !spec->own_primary (opt_replace, spec->user_data, &error))
    {
      g_printerr ("%s: %s\n", spec->program, error->message);
      if (spec->on_shutdown)
        spec->on_shutdown (spec->user_data);
      return 1;
    }
  owned = own_names (spec, opt_replace, owned_ids);
  if (!quitting)
    g_main_loop_run (main_loop);

  if (spec->on_shutdown)
    spec->on_shutdown (spec->user_data);
  leave_bus (owned_ids);
  return exit_status;
}

char *
limen_daemon_handler_signal (const char *method)
{
  GString *s = g_string_new ("handle");

  for (const char *c = method; *c; c++)
    {
      gboolean upper = g_ascii_isupper (*c);
      gboolean after_lower = c > method && !g_ascii_isupper (c[-1]);
      gboolean before_lower = c > method && g_ascii_isupper (c[-1]) && c[1] && g_ascii_islower (c[1]);

      if (c == method || (upper && (after_lower || before_lower)))
        g_string_append_c (s, '-');
      g_string_append_c (s, g_ascii_tolower (*c));
    }
  return g_string_free (s, FALSE);
}
