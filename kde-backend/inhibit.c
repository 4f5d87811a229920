/* Limen — org.freedesktop.impl.portal.Inhibit on KDE's services.
 *
 * Idle inhibition goes to org.freedesktop.ScreenSaver (KScreenSaver) and to PowerDevil
 * as "change screen settings"; suspend to PowerDevil's PolicyAgent as "interrupt
 * session". The inhibition lives as long as its impl Request: Close, or the frontend
 * leaving, releases it. CreateMonitor reports the screensaver state and the session
 * state.
 *
 * Logout: Plasma has no D-Bus API for it, but ksmserver asks its XSMP clients before
 * logout (session-manager.c). While a logout inhibition or a monitor exists, limen-kde
 * is such a client. When asked, monitors go to "query end" and get a second to answer
 * (QueryEndResponse) — an app may take a logout inhibition then, as GtkApplication
 * does; after that the logout is cancelled if any logout inhibition is held, else the
 * session goes to "ending". A cancelled logout goes back to "running".
 *
 * User switch: nothing in Plasma 5.27 asks anyone before switching. The lock screen's
 * "Switch User" (org.freedesktop.ScreenSaver.SwitchUser, then KDisplayManager asking
 * SDDM/logind for a new session or seat switch) only checks the Kiosk action
 * "start_new_session"; logind's inhibitor locks know no user switch (only shutdown,
 * sleep, idle and key handling), and KDisplayManager has no hook. Writing the Kiosk key
 * would change the user's own configuration behind their back and outlive a crash, so
 * the flag is accepted and logged only.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"
#include "option-tables.h"

#include <string.h>

#include "errors.h"
#include "session-manager.h"

#define SCREENSAVER_NAME "org.freedesktop.ScreenSaver"
#define SCREENSAVER_PATH "/org/freedesktop/ScreenSaver"
#define POLICY_NAME "org.kde.Solid.PowerManagement.PolicyAgent"
#define POLICY_PATH "/org/kde/Solid/PowerManagement/PolicyAgent"

enum {
  FLAG_LOGOUT = 1,
  FLAG_USER_SWITCH = 2,
  FLAG_SUSPEND = 4,
  FLAG_IDLE = 8,
};

/* PowerDevil's PolicyAgent policies. */
enum {
  POLICY_INTERRUPT_SESSION = 1,
  POLICY_CHANGE_SCREEN_SETTINGS = 4,
};

#define CALL_TIMEOUT_MS 5000
/* The specification gives monitors one second to answer a "query end". */
#define QUERY_END_TIMEOUT_MS 1000

enum {
  SESSION_RUNNING = 1,
  SESSION_QUERY_END = 2,
  SESSION_ENDING = 3,
};

typedef struct {
  int                    refs;
  GDBusConnection       *connection;
  GDBusMethodInvocation *invocation;   /* until answered */
  LimenKdeRequest       *request;      /* NULL once released */
  guint                  pending;
  guint                  succeeded;
  gboolean               have_screensaver_cookie, have_policy_cookie;
  guint32                screensaver_cookie, policy_cookie;
  char                  *error;
  char                  *app_id;
  gboolean               holds_logout; /* in logout_inhibitions, holding the SM link */
} Inhibition;

static LimenDbusImplPortalInhibit *inhibit_skeleton;

/* Logout inhibitions and monitors, both not owned; the session state all monitors see. */
static GPtrArray *logout_inhibitions;
static GList *monitors;
static guint session_state = SESSION_RUNNING;
static gboolean querying, query_can_cancel;
static guint query_timeout;
static guint sm_users;

static void decide_query_end (void);
static void set_session_state (guint state);

static void
sm_use (void)
{
  sm_users++;
  limen_kde_sm_hold ();
}

static void
sm_unuse (void)
{
  /* The last user must not leave a question of the session manager unanswered. */
  if (--sm_users == 0 && querying)
    decide_query_end ();
  limen_kde_sm_release ();
}

static void
drop_logout (Inhibition *i)
{
  if (!i->holds_logout)
    return;
  i->holds_logout = FALSE;
  g_ptr_array_remove (logout_inhibitions, i);
  sm_unuse ();
}

static Inhibition *
inhibition_ref (Inhibition *i)
{
  i->refs++;
  return i;
}

static void
inhibition_unref (Inhibition *i)
{
  if (--i->refs > 0)
    return;
  g_clear_object (&i->connection);
  g_clear_object (&i->invocation);
  g_free (i->error);
  g_free (i->app_id);
  g_free (i);
}

static void
release (Inhibition *i)
{
  if (i->have_screensaver_cookie)
    {
      g_dbus_connection_call (i->connection, SCREENSAVER_NAME, SCREENSAVER_PATH, SCREENSAVER_NAME, "UnInhibit",
                              g_variant_new ("(u)", i->screensaver_cookie), NULL, G_DBUS_CALL_FLAGS_NO_AUTO_START,
                              CALL_TIMEOUT_MS, NULL, NULL, NULL);
      i->have_screensaver_cookie = FALSE;
    }
  if (i->have_policy_cookie)
    {
      g_dbus_connection_call (i->connection, POLICY_NAME, POLICY_PATH, POLICY_NAME, "ReleaseInhibition",
                              g_variant_new ("(u)", i->policy_cookie), NULL, G_DBUS_CALL_FLAGS_NO_AUTO_START,
                              CALL_TIMEOUT_MS, NULL, NULL, NULL);
      i->have_policy_cookie = FALSE;
    }
}

static void
maybe_answer (Inhibition *i)
{
  if (i->pending > 0 || !i->invocation)
    return;
  if (i->succeeded == 0 && i->error)
    {
      g_dbus_method_invocation_return_error (i->invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                             "No inhibition could be taken: %s", i->error);
      if (i->request)
        {
          LimenKdeRequest *r = i->request;

          i->request = NULL;
          drop_logout (i);
          limen_kde_request_finish (r);
          inhibition_unref (i);   /* the request's reference */
        }
    }
  else
    limen_dbus_impl_portal_inhibit_complete_inhibit (inhibit_skeleton, i->invocation);
  g_clear_object (&i->invocation);
}

static void
on_cookie (GObject *source, GAsyncResult *res, gpointer user_data, gboolean screensaver)
{
  Inhibition *i = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), res, &error);

  i->pending--;
  if (reply)
    {
      guint32 cookie;

      g_variant_get (reply, "(u)", &cookie);
      i->succeeded++;
      if (screensaver)
        {
          i->screensaver_cookie = cookie;
          i->have_screensaver_cookie = TRUE;
        }
      else
        {
          i->policy_cookie = cookie;
          i->have_policy_cookie = TRUE;
        }
      g_debug ("Inhibition taken from %s (cookie %u)", screensaver ? SCREENSAVER_NAME : POLICY_NAME, cookie);
      /* Released while we waited: give it straight back. */
      if (!i->request)
        release (i);
    }
  else
    {
      g_warning ("Inhibit through %s failed: %s", screensaver ? SCREENSAVER_NAME : POLICY_NAME, error->message);
      g_free (i->error);
      i->error = g_strdup (error->message);
    }
  maybe_answer (i);
  inhibition_unref (i);
}

static void
on_screensaver_cookie (GObject *source, GAsyncResult *res, gpointer user_data)
{
  on_cookie (source, res, user_data, TRUE);
}

static void
on_policy_cookie (GObject *source, GAsyncResult *res, gpointer user_data)
{
  on_cookie (source, res, user_data, FALSE);
}

static void
on_request_closed (LimenKdeRequest *request, gpointer user_data)
{
  Inhibition *i = user_data;

  g_debug ("Inhibition released");
  i->request = NULL;
  release (i);
  drop_logout (i);
  inhibition_unref (i);
}

static gboolean
on_inhibit (LimenDbusImplPortalInhibit *skeleton,
            GDBusMethodInvocation      *invocation,
            const char                 *handle,
            const char                 *app_id,
            const char                 *window,
            guint                       flags,
            GVariant                   *options,
            gpointer                    user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) opts = NULL;
  const char *reason = "";
  const char *who;
  guint policies = 0;
  Inhibition *i;

  if (!limen_kde_check_request_args (handle, app_id, window, &error) ||
      !limen_options_filter (options, &filtered, &error, limen_options_inhibit_inhibit, NULL))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (flags == 0 || (flags & ~(guint) (FLAG_LOGOUT | FLAG_USER_SWITCH | FLAG_SUSPEND | FLAG_IDLE)) != 0)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid flags: a combination of 1, 2, 4 and 8 is expected");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  opts = g_variant_ref_sink (g_variant_builder_end (&filtered));
  g_variant_lookup (opts, "reason", "&s", &reason);
  who = *app_id ? app_id : "limen-kde";

  i = g_new0 (Inhibition, 1);
  i->refs = 1;   /* held by the request */
  i->connection = g_object_ref (g_dbus_method_invocation_get_connection (invocation));
  i->invocation = g_object_ref (invocation);
  i->app_id = g_strdup (who);
  i->request = limen_kde_request_new (invocation, handle, on_request_closed, i, &error);
  if (!i->request)
    {
      limen_invocation_return_gerror (invocation, error);
      inhibition_unref (i);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  if (flags & FLAG_USER_SWITCH)
    g_debug ("Plasma offers no way to inhibit user switching; noted only");
  if (flags & FLAG_LOGOUT)
    {
      i->holds_logout = TRUE;
      g_ptr_array_add (logout_inhibitions, i);
      sm_use ();
    }
  if (flags & FLAG_IDLE)
    {
      i->pending++;
      g_dbus_connection_call (i->connection, SCREENSAVER_NAME, SCREENSAVER_PATH, SCREENSAVER_NAME, "Inhibit",
                              g_variant_new ("(ss)", who, reason), G_VARIANT_TYPE ("(u)"),
                              G_DBUS_CALL_FLAGS_NO_AUTO_START, CALL_TIMEOUT_MS, NULL, on_screensaver_cookie,
                              inhibition_ref (i));
      policies |= POLICY_CHANGE_SCREEN_SETTINGS;
    }
  if (flags & FLAG_SUSPEND)
    policies |= POLICY_INTERRUPT_SESSION;
  if (policies)
    {
      i->pending++;
      g_dbus_connection_call (i->connection, POLICY_NAME, POLICY_PATH, POLICY_NAME, "AddInhibition",
                              g_variant_new ("(uss)", policies, who, reason), G_VARIANT_TYPE ("(u)"),
                              G_DBUS_CALL_FLAGS_NO_AUTO_START, CALL_TIMEOUT_MS, NULL, on_policy_cookie,
                              inhibition_ref (i));
    }
  maybe_answer (i);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- monitors ---- */

typedef struct {
  LimenKdeSession *session;
  GDBusConnection *connection;
  char            *handle;
  guint            subscription;
  gboolean         active;
  gboolean         awaiting;  /* told "query end", no QueryEndResponse yet */
} Monitor;

static void
emit_state (Monitor *m)
{
  GVariantBuilder state;

  g_variant_builder_init (&state, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&state, "{sv}", "screensaver-active", g_variant_new_boolean (m->active));
  g_variant_builder_add (&state, "{sv}", "session-state", g_variant_new_uint32 (session_state));
  limen_dbus_impl_portal_inhibit_emit_state_changed (inhibit_skeleton, m->handle, g_variant_builder_end (&state));
}

static void
set_session_state (guint state)
{
  if (state == session_state)
    return;
  session_state = state;
  for (GList *l = monitors; l; l = l->next)
    emit_state (l->data);
}

/* Every monitor answered or its second is up: cancel the logout if it is inhibited. */
static void
decide_query_end (void)
{
  gboolean cancel = logout_inhibitions->len > 0;

  g_clear_handle_id (&query_timeout, g_source_remove);
  querying = FALSE;
  for (GList *l = monitors; l; l = l->next)
    ((Monitor *) l->data)->awaiting = FALSE;
  if (cancel && !query_can_cancel)
    {
      g_warning ("Logout is inhibited, but the session manager allows no cancel this time");
      cancel = FALSE;
    }
  if (cancel)
    {
      Inhibition *first = g_ptr_array_index (logout_inhibitions, 0);

      g_message ("Logout inhibited by %u inhibition(s), first by %s", logout_inhibitions->len, first->app_id);
      /* Stays "query end" until the session manager confirms the cancel. */
      limen_kde_sm_answer (TRUE, first->app_id);
    }
  else
    {
      set_session_state (SESSION_ENDING);
      limen_kde_sm_answer (FALSE, NULL);
    }
}

static gboolean
on_query_end_timeout (gpointer user_data)
{
  query_timeout = 0;
  g_debug ("Not every monitor answered the query end in time");
  decide_query_end ();
  return G_SOURCE_REMOVE;
}

static void
on_sm_query_end (gboolean can_cancel, gpointer user_data)
{
  gboolean awaiting = FALSE;

  querying = TRUE;
  query_can_cancel = can_cancel;
  for (GList *l = monitors; l; l = l->next)
    ((Monitor *) l->data)->awaiting = awaiting = TRUE;
  /* Each monitor hears "query end" again, even when it heard it last time. */
  session_state = SESSION_QUERY_END;
  for (GList *l = monitors; l; l = l->next)
    emit_state (l->data);
  g_clear_handle_id (&query_timeout, g_source_remove);
  if (!awaiting)
    decide_query_end ();
  else
    query_timeout = g_timeout_add (QUERY_END_TIMEOUT_MS, on_query_end_timeout, NULL);
}

static gboolean
on_sm_confirm_cancel (gpointer user_data)
{
  if (logout_inhibitions->len > 0)
    return TRUE;
  set_session_state (SESSION_ENDING);
  return FALSE;
}

static void
on_sm_cancelled (gpointer user_data)
{
  g_clear_handle_id (&query_timeout, g_source_remove);
  querying = FALSE;
  for (GList *l = monitors; l; l = l->next)
    ((Monitor *) l->data)->awaiting = FALSE;
  set_session_state (SESSION_RUNNING);
}

static void
on_active_changed (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
                   const char *signal, GVariant *params, gpointer user_data)
{
  Monitor *m = user_data;

  if (!g_variant_is_of_type (params, G_VARIANT_TYPE ("(b)")))
    return;
  g_variant_get (params, "(b)", &m->active);
  emit_state (m);
}

static int
monitor_is_awaiting (gconstpointer m, gconstpointer unused)
{
  return ((const Monitor *) m)->awaiting ? 0 : 1;
}

static void
monitor_free (Monitor *m)
{
  if (g_list_find (monitors, m))
    {
      monitors = g_list_remove (monitors, m);
      sm_unuse ();
      /* The last one it waited for may be this one. */
      if (querying && m->awaiting && !g_list_find_custom (monitors, NULL, monitor_is_awaiting))
        decide_query_end ();
    }
  if (m->subscription)
    g_dbus_connection_signal_unsubscribe (m->connection, m->subscription);
  g_clear_object (&m->connection);
  g_free (m->handle);
  g_free (m);
}

static void
on_session_closed (LimenKdeSession *session, gpointer user_data)
{
  monitor_free (user_data);
}

static void
on_initial_active (GObject *source, GAsyncResult *res, gpointer user_data)
{
  char *handle_and_sender = user_data;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), res, NULL);
  char *sep = strchr (handle_and_sender, '\n');
  LimenKdeSession *session;

  *sep = '\0';
  session = limen_kde_session_lookup (sep + 1, handle_and_sender);
  if (session && reply)
    {
      Monitor *m = limen_kde_session_get_data (session);

      g_variant_get (reply, "(b)", &m->active);
      emit_state (m);
    }
  g_free (handle_and_sender);
}

static gboolean
on_create_monitor (LimenDbusImplPortalInhibit *skeleton,
                   GDBusMethodInvocation      *invocation,
                   const char                 *handle,
                   const char                 *session_handle,
                   const char                 *app_id,
                   const char                 *window,
                   gpointer                    user_data)
{
  g_autoptr(GError) error = NULL;
  Monitor *m;

  if (!limen_kde_check_string_arg ("app_id", app_id, 255, &error) ||
      !limen_check_parent_window (window, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  m = g_new0 (Monitor, 1);
  m->connection = g_object_ref (g_dbus_method_invocation_get_connection (invocation));
  m->handle = g_strdup (session_handle);
  m->session = limen_kde_session_new (invocation, session_handle, on_session_closed, m, &error);
  if (!m->session)
    {
      monitor_free (m);
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  m->subscription = g_dbus_connection_signal_subscribe (m->connection, NULL, SCREENSAVER_NAME, "ActiveChanged",
                                                        NULL, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                        on_active_changed, m, NULL);
  g_dbus_connection_call (m->connection, SCREENSAVER_NAME, SCREENSAVER_PATH, SCREENSAVER_NAME, "GetActive",
                          NULL, G_VARIANT_TYPE ("(b)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, CALL_TIMEOUT_MS, NULL,
                          on_initial_active,
                          g_strconcat (session_handle, "\n", g_dbus_method_invocation_get_sender (invocation), NULL));
  monitors = g_list_append (monitors, m);
  sm_use ();
  limen_dbus_impl_portal_inhibit_complete_create_monitor (skeleton, invocation, 0);
  emit_state (m);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_query_end_response (LimenDbusImplPortalInhibit *skeleton,
                       GDBusMethodInvocation      *invocation,
                       const char                 *session_handle,
                       gpointer                    user_data)
{
  LimenKdeSession *session = limen_kde_session_lookup (g_dbus_method_invocation_get_sender (invocation),
                                                       session_handle);

  if (!session)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                     "No such monitor session");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  {
    Monitor *m = limen_kde_session_get_data (session);

    m->awaiting = FALSE;
    limen_dbus_impl_portal_inhibit_complete_query_end_response (skeleton, invocation);
    if (querying && !g_list_find_custom (monitors, NULL, monitor_is_awaiting))
      decide_query_end ();
  }
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_inhibit_new (void)
{
  static const LimenKdeSmCallbacks sm_callbacks = { on_sm_query_end, on_sm_cancelled,
                                                          on_sm_confirm_cancel };

  logout_inhibitions = g_ptr_array_new ();
  limen_kde_sm_init (&sm_callbacks, NULL);
  inhibit_skeleton = limen_dbus_impl_portal_inhibit_skeleton_new ();
  g_signal_connect (inhibit_skeleton, "handle-inhibit", G_CALLBACK (on_inhibit), NULL);
  g_signal_connect (inhibit_skeleton, "handle-create-monitor", G_CALLBACK (on_create_monitor), NULL);
  g_signal_connect (inhibit_skeleton, "handle-query-end-response", G_CALLBACK (on_query_end_response), NULL);
  return G_DBUS_INTERFACE_SKELETON (inhibit_skeleton);
}
