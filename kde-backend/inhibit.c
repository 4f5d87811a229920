/* Limen — org.freedesktop.impl.portal.Inhibit on KDE's services.
 *
 * Idle inhibition goes to org.freedesktop.ScreenSaver (KScreenSaver) and to PowerDevil
 * as "change screen settings"; suspend to PowerDevil's PolicyAgent as "interrupt
 * session". Plasma has no D-Bus API to hold off logout or user switching; those flags
 * are accepted and logged. The inhibition lives as long as its impl Request: Close, or
 * the frontend leaving, releases it. CreateMonitor reports the screensaver state.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <string.h>

#include "errors.h"

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
} Inhibition;

static LimenDbusImplPortalInhibit *inhibit_skeleton;

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
  inhibition_unref (i);
}

static const LimenOption inhibit_options[] = {
  { "reason", "s", limen_validate_string_length, 1024 },
  { NULL }
};

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

  if (!limen_kde_request_check_handle (handle, &error) ||
      !limen_kde_check_string_arg ("app_id", app_id, 255, &error) ||
      !limen_kde_check_parent_window (window, &error) ||
      !limen_options_filter (options, &filtered, &error, inhibit_options, NULL))
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
  i->request = limen_kde_request_new (invocation, handle, on_request_closed, i, &error);
  if (!i->request)
    {
      limen_invocation_return_gerror (invocation, error);
      inhibition_unref (i);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  if (flags & (FLAG_LOGOUT | FLAG_USER_SWITCH))
    g_debug ("Plasma offers no way to inhibit logout or user switching; flags %u noted only", flags);
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
  guint            state;    /* 1 running, 2 query end, 3 ending */
} Monitor;

static void
emit_state (Monitor *m)
{
  GVariantBuilder state;

  g_variant_builder_init (&state, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&state, "{sv}", "screensaver-active", g_variant_new_boolean (m->active));
  g_variant_builder_add (&state, "{sv}", "session-state", g_variant_new_uint32 (m->state));
  limen_dbus_impl_portal_inhibit_emit_state_changed (inhibit_skeleton, m->handle, g_variant_builder_end (&state));
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

static void
monitor_free (Monitor *m)
{
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
      !limen_kde_check_parent_window (window, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  m = g_new0 (Monitor, 1);
  m->connection = g_object_ref (g_dbus_method_invocation_get_connection (invocation));
  m->handle = g_strdup (session_handle);
  m->state = 1;
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
  /* Plasma's session manager does not ask us before ending: nothing waits on this. */
  limen_dbus_impl_portal_inhibit_complete_query_end_response (skeleton, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_inhibit_new (void)
{
  inhibit_skeleton = limen_dbus_impl_portal_inhibit_skeleton_new ();
  g_signal_connect (inhibit_skeleton, "handle-inhibit", G_CALLBACK (on_inhibit), NULL);
  g_signal_connect (inhibit_skeleton, "handle-create-monitor", G_CALLBACK (on_create_monitor), NULL);
  g_signal_connect (inhibit_skeleton, "handle-query-end-response", G_CALLBACK (on_query_end_response), NULL);
  return G_DBUS_INTERFACE_SKELETON (inhibit_skeleton);
}
