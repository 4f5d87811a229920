/* Limen — limen-kde as an XSMP client of the session manager (ksmserver).
 *
 * Plasma 5.27 ends a session through ksmserver: it sends every XSMP client a
 * SaveYourself with shutdown=True and interact style Any, queues the clients that ask
 * to interact and grants them one at a time, and cancels the whole logout (telling
 * every client ShutdownCancelled, and org.kde.Shutdown gives up) when a client ends
 * its interaction with InteractDone(cancel-shutdown=True). A SaveYourselfDone with
 * success=False is ignored by ksmserver (it always assumes success), so the
 * interaction is the only way to hold off a logout.
 *
 * The connection is opened in a worker thread (the ICE handshake blocks, and the
 * daemon must never wait on a peer), then served from the GLib main loop through the
 * ICE connection's fd. libICE is not thread-safe (IceInitThreads() does nothing), so the
 * worker is used only while no other ICE connection exists in the process; Qt's own XSMP
 * client (the shim's QApplication on X11, unless Qt::AA_DisableSessionManager is set)
 * makes us connect on the main thread instead. libICE's default error handlers call
 * exit(); ours log.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "session-manager.h"

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>
#include <X11/ICE/ICElib.h>
#include <X11/SM/SMlib.h>

static struct {
  LimenKdeSmCallbacks callbacks;
  gpointer            user_data;
  guint               holds;
  gboolean            connecting;    /* a worker thread is opening a connection */
  gboolean            told_no_sm;    /* "no session manager" logged already */
  gboolean            died;          /* Die received: no new connection until unused */
  SmcConn             conn;
  guint               watch;
  gboolean            in_save;       /* SaveYourself(shutdown) not answered yet */
  gboolean            cancel_pending;/* InteractRequest sent, waiting for Interact */
  char               *address;       /* SESSION_MANAGER as it was at start */
  int                 foreign_ice;   /* ICE connections of others (Qt) in the process */
} sm;

/* Set while our worker opens a connection, to tell our ICE connection from Qt's. */
static __thread gboolean in_worker;

static void close_connection (void);
static void set_program (SmcConn conn, const char *program);

static void
on_ice_io_error (IceConn ice_conn)
{
  /* IceProcessMessages() reports the error to us; the default handler would exit(). */
  g_debug ("Session manager connection: I/O error");
}

static void
on_ice_error (IceConn ice_conn, Bool swap, int offending_minor_opcode, unsigned long offending_sequence,
              int error_class, int severity, IcePointer values)
{
  g_warning ("ICE protocol error (class %d, severity %d) from the session manager", error_class, severity);
}

static void
on_sm_error (SmcConn smc_conn, Bool swap, int offending_minor_opcode, unsigned long offending_sequence,
             int error_class, int severity, SmPointer values)
{
  g_warning ("XSMP error (class %d, severity %d) from the session manager", error_class, severity);
}

static void
on_interact (SmcConn smc_conn, SmPointer client_data)
{
  if (smc_conn != sm.conn || !sm.cancel_pending)
    return;
  sm.cancel_pending = FALSE;
  if (sm.callbacks.confirm_cancel && !sm.callbacks.confirm_cancel (sm.user_data))
    {
      g_debug ("No logout inhibition left when the session manager let us interact");
      SmcInteractDone (smc_conn, False);
      SmcSaveYourselfDone (smc_conn, True);
      sm.in_save = FALSE;
      return;
    }
  g_message ("Cancelling the logout: logout is inhibited");
  SmcInteractDone (smc_conn, True);
  SmcSaveYourselfDone (smc_conn, True);
  sm.in_save = FALSE;
}

static void
on_save_yourself (SmcConn smc_conn, SmPointer client_data, int save_type, Bool shutdown, int interact_style,
                  Bool fast)
{
  if (!shutdown)
    {
      /* A checkpoint (or the first save after registering): we have no state to save. */
      SmcSaveYourselfDone (smc_conn, True);
      return;
    }
  g_debug ("The session manager asks before logout (interact style %d%s)", interact_style, fast ? ", fast" : "");
  sm.in_save = TRUE;
  sm.cancel_pending = FALSE;
  if (sm.callbacks.query_end)
    sm.callbacks.query_end (interact_style == SmInteractStyleAny, sm.user_data);
  else
    limen_kde_sm_answer (FALSE, NULL);
}

static gboolean
close_after_die (gpointer user_data)
{
  if (sm.died)
    close_connection ();
  return G_SOURCE_REMOVE;
}

static void
on_die (SmcConn smc_conn, SmPointer client_data)
{
  g_debug ("The session manager ends the session");
  sm.died = TRUE;
  /* Not from inside IceProcessMessages(): libSM frees the connection on close. */
  g_idle_add (close_after_die, NULL);
}

static void
on_save_complete (SmcConn smc_conn, SmPointer client_data)
{
}

static void
on_shutdown_cancelled (SmcConn smc_conn, SmPointer client_data)
{
  g_debug ("The session manager cancelled the logout");
  if (sm.in_save)
    {
      /* XSMP lets a client still answer its save after a cancel; ksmserver expects it. */
      SmcSaveYourselfDone (smc_conn, True);
      sm.in_save = FALSE;
    }
  sm.cancel_pending = FALSE;
  set_program (smc_conn, "limen-kde");
  if (sm.callbacks.cancelled)
    sm.callbacks.cancelled (sm.user_data);
}

static void
close_connection (void)
{
  gboolean was_asking = sm.in_save;

  if (sm.watch)
    g_source_remove (sm.watch);
  sm.watch = 0;
  if (sm.conn)
    SmcCloseConnection (sm.conn, 0, NULL);
  sm.conn = NULL;
  sm.in_save = FALSE;
  sm.cancel_pending = FALSE;
  /* Unless it ended the session, the session manager gone mid-question means the
   * session goes on. */
  if (was_asking && !sm.died && sm.callbacks.cancelled)
    sm.callbacks.cancelled (sm.user_data);
}

static gboolean
on_ice_readable (int fd, GIOCondition condition, gpointer user_data)
{
  IceConn ice = SmcGetIceConnection (sm.conn);

  if (IceProcessMessages (ice, NULL, NULL) == IceProcessMessagesIOError)
    {
      g_message ("Lost the connection to the session manager");
      sm.watch = 0;   /* removed by returning FALSE */
      close_connection ();
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

static void
set_program (SmcConn conn, const char *program)
{
  SmPropValue value = { (int) strlen (program), (SmPointer) program };
  SmProp prop = { (char *) SmProgram, (char *) SmARRAY8, 1, &value };
  SmProp *props[] = { &prop };

  SmcSetProperties (conn, 1, props);
}

static void
set_properties (SmcConn conn)
{
  struct passwd *pw = getpwuid (getuid ());
  g_autofree char *pid = g_strdup_printf ("%d", (int) getpid ());
  const char *user = pw ? pw->pw_name : "";
  char restart_never = SmRestartNever;
  /* Restart-never: D-Bus activation starts us, ksmserver must not store or restore us. */
  SmPropValue program_v = { (int) strlen ("limen-kde"), (SmPointer) "limen-kde" };
  SmPropValue user_v = { (int) strlen (user), (SmPointer) user };
  SmPropValue pid_v = { (int) strlen (pid), (SmPointer) pid };
  SmPropValue hint_v = { 1, &restart_never };
  SmProp program = { (char *) SmProgram, (char *) SmARRAY8, 1, &program_v };
  SmProp restart = { (char *) SmRestartCommand, (char *) SmLISTofARRAY8, 1, &program_v };
  SmProp clone = { (char *) SmCloneCommand, (char *) SmLISTofARRAY8, 1, &program_v };
  SmProp user_p = { (char *) SmUserID, (char *) SmARRAY8, 1, &user_v };
  SmProp pid_p = { (char *) SmProcessID, (char *) SmARRAY8, 1, &pid_v };
  SmProp hint = { (char *) SmRestartStyleHint, (char *) SmCARD8, 1, &hint_v };
  SmProp *props[] = { &program, &restart, &clone, &user_p, &pid_p, &hint };

  SmcSetProperties (conn, G_N_ELEMENTS (props), props);
}

static void
on_ice_watch (IceConn ice_conn, IcePointer client_data, Bool opening, IcePointer *watch_data)
{
  if (opening)
    {
      gboolean ours = in_worker || (sm.connecting && g_atomic_int_get (&sm.foreign_ice) > 0);

      *watch_data = ours ? (IcePointer) &sm : NULL;
      if (!ours)
        g_atomic_int_inc (&sm.foreign_ice);
    }
  else if (*watch_data != (IcePointer) &sm)
    g_atomic_int_add (&sm.foreign_ice, -1);
}

/* SmcOpenConnection with our callbacks; NULL and @error filled on failure. Blocks. */
static SmcConn
open_connection (char *error, int error_len)
{
  SmcCallbacks callbacks = {
    .save_yourself = { on_save_yourself, NULL },
    .die = { on_die, NULL },
    .save_complete = { on_save_complete, NULL },
    .shutdown_cancelled = { on_shutdown_cancelled, NULL },
  };
  char *client_id = NULL;
  SmcConn conn;

  /* Our own context: never share an ICE connection with Qt's XSMP client. */
  conn = SmcOpenConnection (sm.address, &sm, SmProtoMajor, SmProtoMinor,
                            SmcSaveYourselfProcMask | SmcDieProcMask | SmcSaveCompleteProcMask |
                              SmcShutdownCancelledProcMask,
                            &callbacks, NULL, &client_id, error_len, error);
  free (client_id);
  return conn;
}

static void
open_in_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  char error[256] = "";
  SmcConn conn;

  in_worker = TRUE;
  conn = open_connection (error, sizeof error);
  in_worker = FALSE;
  if (!conn)
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", *error ? error : "refused");
  else
    g_task_return_pointer (task, conn, NULL);
}

static void
connected (SmcConn conn, const char *error)
{
  sm.connecting = FALSE;
  if (!conn)
    {
      g_warning ("Could not connect to the session manager: %s; logout cannot be inhibited", error);
      return;
    }
  if (sm.holds == 0)
    {
      SmcCloseConnection (conn, 0, NULL);
      return;
    }
  g_debug ("Connected to the session manager");
  sm.conn = conn;
  sm.died = FALSE;
  set_properties (conn);
  sm.watch = g_unix_fd_add (IceConnectionNumber (SmcGetIceConnection (conn)), G_IO_IN | G_IO_HUP | G_IO_ERR,
                            on_ice_readable, NULL);
}

static void
on_opened (GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  SmcConn conn = g_task_propagate_pointer (G_TASK (res), &error);

  connected (conn, error ? error->message : NULL);
}

static void
start_connecting (void)
{
  g_autoptr(GTask) task = NULL;

  if (sm.conn || sm.connecting || sm.died)
    return;
  if (!sm.address)
    {
      if (!sm.told_no_sm)
        g_message ("No SESSION_MANAGER in the environment: logout inhibition is noted only");
      sm.told_no_sm = TRUE;
      return;
    }
  sm.connecting = TRUE;
  if (g_atomic_int_get (&sm.foreign_ice) > 0)
    {
      char error[256] = "";
      SmcConn conn;

      g_debug ("Another ICE user in the process: connecting to the session manager on the main thread");
      conn = open_connection (error, sizeof error);
      connected (conn, error);
      return;
    }
  task = g_task_new (NULL, NULL, on_opened, NULL);
  g_task_run_in_thread (task, open_in_thread);
}

void
limen_kde_sm_init (const LimenKdeSmCallbacks *callbacks, gpointer user_data)
{
  const char *address = g_getenv ("SESSION_MANAGER");

  sm.callbacks = *callbacks;
  sm.user_data = user_data;
  /* Kept: the shim may hide the variable from Qt later. */
  if (address && *address)
    sm.address = g_strdup (address);
  /* Before Qt can open one: libICE reports every ICE connection of the process, and its
   * default error handlers would exit() the daemon on any of them. */
  IceAddConnectionWatch (on_ice_watch, NULL);
  IceSetIOErrorHandler (on_ice_io_error);
  IceSetErrorHandler (on_ice_error);
  SmcSetErrorHandler (on_sm_error);
}

void
limen_kde_sm_hold (void)
{
  sm.holds++;
  start_connecting ();
}

void
limen_kde_sm_release (void)
{
  g_return_if_fail (sm.holds > 0);
  if (--sm.holds > 0)
    return;
  if (sm.in_save && sm.conn)
    SmcSaveYourselfDone (sm.conn, True);
  sm.in_save = FALSE;
  sm.died = FALSE;
  if (sm.conn)
    g_debug ("Leaving the session manager: nothing to inhibit or report");
  close_connection ();
}

void
limen_kde_sm_answer (gboolean cancel, const char *who)
{
  if (!sm.in_save || !sm.conn || sm.cancel_pending)
    return;
  if (cancel)
    {
      /* ksmserver's notification names the Program of the client that cancelled. */
      set_program (sm.conn, who ? who : "limen-kde");
      /* ksmserver grants interactions one client at a time; on_interact cancels. */
      sm.cancel_pending = TRUE;
      if (SmcInteractRequest (sm.conn, SmDialogNormal, on_interact, NULL))
        return;
      sm.cancel_pending = FALSE;
      g_warning ("The session manager refused an interaction: the logout cannot be cancelled");
    }
  SmcSaveYourselfDone (sm.conn, True);
  sm.in_save = FALSE;
}

