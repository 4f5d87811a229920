/* SPDX-License-Identifier: LGPL-2.1-or-later
 * Request and Session objects on a real private bus (GTestDBus): paths from tokens,
 * unicast Response, Close only by the caller and forwarded to the backend, cleanup when
 * the caller leaves. */
#include "app-info.h"
#include "errors.h"
#include "request.h"
#include "session.h"

static const char test_xml[] =
  "<node><interface name='org.limen.Test'>"
  "  <method name='Start'><arg type='a{sv}' direction='in'/><arg type='o' direction='out'/></method>"
  "  <method name='StartSession'><arg type='a{sv}' direction='in'/><arg type='o' direction='out'/></method>"
  "  <method name='Finish'><arg type='u' direction='in'/></method>"
  "</interface></node>";

typedef struct {
  GTestDBus       *dbus;
  GDBusConnection *service;   /* plays limen-portal */
  GDBusConnection *backend;   /* plays the impl backend */
  GDBusConnection *client;
  GDBusConnection *other;     /* another app */
  LimenRequest    *last;
  LimenSession    *last_session;
  int              closed_calls;
  int             *backend_closes; /* the filter's, freed when GDBus is done with it */
  guint            filter_id;
  GPtrArray       *responses;  /* (connection name, response) strings */
} Fixture;

static GDBusConnection *
connect_new (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  GDBusConnection *c = g_dbus_connection_new_for_address_sync (g_test_dbus_get_bus_address (f->dbus),
                                                               G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                               G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                               NULL, NULL, &error);
  g_assert_no_error (error);
  return c;
}

static void
on_request_closed (LimenRequest *request, gpointer user_data)
{
  Fixture *f = user_data;
  f->closed_calls++;
}

static void
handle_test (GDBusConnection *c, const char *sender, const char *path, const char *iface,
             const char *method, GVariant *params, GDBusMethodInvocation *inv, gpointer user_data)
{
  Fixture *f = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = NULL;

  if (g_str_equal (method, "Finish"))
    {
      guint code;
      g_variant_get (params, "(u)", &code);
      limen_request_respond (f->last, code, NULL);
      g_dbus_method_invocation_return_value (inv, NULL);
      return;
    }
  info = limen_app_info_get_for_invocation (inv);
  if (info == NULL)
    return;
  if (g_str_equal (method, "Start"))
    {
      g_autoptr(GVariant) opts = g_variant_get_child_value (params, 0);
      LimenRequest *r = limen_request_new (inv, info, opts, &error);
      if (r == NULL)
        {
          limen_invocation_return_gerror (inv, error);
          return;
        }
      limen_request_set_backend (r, "org.limen.TestBackend");
      limen_request_set_closed_func (r, on_request_closed, f);
      g_clear_pointer (&f->last, limen_request_unref);
      f->last = r;
      g_dbus_method_invocation_return_value (inv, g_variant_new ("(o)", limen_request_get_path (r)));
    }
  else
    {
      g_autoptr(GVariant) opts = g_variant_get_child_value (params, 0);
      LimenSession *s = limen_session_new (inv, info, opts, &error);
      if (s == NULL)
        {
          limen_invocation_return_gerror (inv, error);
          return;
        }
      limen_session_set_backend (s, "org.limen.TestBackend");
      g_clear_pointer (&f->last_session, limen_session_unref);
      f->last_session = s;
      g_dbus_method_invocation_return_value (inv, g_variant_new ("(o)", limen_session_get_path (s)));
    }
}

/* The backend side: count impl Close calls as they arrive (GDBus worker thread). */
static GDBusMessage *
count_impl_close (GDBusConnection *c, GDBusMessage *m, gboolean incoming, gpointer user_data)
{
  int *closes = user_data;

  if (incoming && g_dbus_message_get_message_type (m) == G_DBUS_MESSAGE_TYPE_METHOD_CALL &&
      g_strcmp0 (g_dbus_message_get_member (m), "Close") == 0 &&
      (g_strcmp0 (g_dbus_message_get_interface (m), "org.freedesktop.impl.portal.Request") == 0 ||
       g_strcmp0 (g_dbus_message_get_interface (m), "org.freedesktop.impl.portal.Session") == 0))
    g_atomic_int_inc (closes);
  return m;
}

static GDBusInterfaceInfo *
test_iface_info (void)
{
  static GDBusNodeInfo *node;

  if (node == NULL)
    node = g_dbus_node_info_new_for_xml (test_xml, NULL);
  return node->interfaces[0];
}

static void
on_response (GDBusConnection *c, const char *sender, const char *path, const char *iface,
             const char *signal, GVariant *params, gpointer user_data)
{
  Fixture *f = user_data;
  guint code;

  g_variant_get (params, "(u@a{sv})", &code, NULL);
  g_ptr_array_add (f->responses, g_strdup_printf ("%s:%u", g_dbus_connection_get_unique_name (c), code));
}

static void
setup (Fixture *f, gconstpointer data)
{
  static const GDBusInterfaceVTable vt = { handle_test };
  g_autoptr(GError) error = NULL;

  f->dbus = g_test_dbus_new (G_TEST_DBUS_NONE);
  g_test_dbus_up (f->dbus);
  f->service = connect_new (f);
  f->backend = connect_new (f);
  f->client = connect_new (f);
  f->other = connect_new (f);
  f->responses = g_ptr_array_new_with_free_func (g_free);
  limen_app_info_tracker_init (f->service, NULL);
  g_dbus_connection_register_object (f->service, "/test", test_iface_info (), &vt, f, NULL, &error);
  g_assert_no_error (error);
  /* The filter runs in GDBus's worker thread and may still run after the fixture is gone,
   * so its counter is its own, freed by GDBus when no filter call can come any more. */
  f->backend_closes = g_new0 (int, 1);
  f->filter_id = g_dbus_connection_add_filter (f->backend, count_impl_close, f->backend_closes, g_free);
  g_bus_own_name_on_connection (f->backend, "org.limen.TestBackend", 0, NULL, NULL, NULL, NULL);
  for (GDBusConnection **c = (GDBusConnection *[]) { f->client, f->other, NULL }; *c; c++)
    g_dbus_connection_signal_subscribe (*c, NULL, "org.freedesktop.portal.Request", "Response", NULL, NULL,
                                        G_DBUS_SIGNAL_FLAGS_NONE, on_response, f, NULL);
  /* Let the name ownership settle. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
teardown (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->last, limen_request_unref);
  g_clear_pointer (&f->last_session, limen_session_unref);
  limen_request_close_all ();
  limen_session_close_all ();
  limen_app_info_tracker_shutdown ();
  g_object_unref (f->client);
  if (f->other)
    g_object_unref (f->other);
  g_dbus_connection_remove_filter (f->backend, f->filter_id);
  g_object_unref (f->backend);
  g_object_unref (f->service);
  g_ptr_array_unref (f->responses);
  g_test_dbus_down (f->dbus);
  g_object_unref (f->dbus);
}

/* The service answers on this thread's main context: calls must spin it, not block. */
typedef struct {
  GVariant *reply;
  GError   *error;
  gboolean  done;
} CallResult;

static void
on_call_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  CallResult *cr = user_data;

  cr->reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), res, &cr->error);
  cr->done = TRUE;
}

static GVariant *
call_spin (GDBusConnection *c, const char *dest, const char *path, const char *iface, const char *method,
           GVariant *params, const GVariantType *reply_type, GError **error)
{
  CallResult cr = { 0 };

  g_dbus_connection_call (c, dest, path, iface, method, params, reply_type, 0, 5000, NULL, on_call_done, &cr);
  while (!cr.done)
    g_main_context_iteration (NULL, TRUE);
  if (cr.error)
    g_propagate_error (error, cr.error);
  return cr.reply;
}

static char *
start (Fixture *f, GDBusConnection *c, const char *method, GVariant *options, GError **error)
{
  g_autoptr(GVariant) r = call_spin (c, g_dbus_connection_get_unique_name (f->service), "/test",
                                     "org.limen.Test", method, g_variant_new ("(@a{sv})", options),
                                     G_VARIANT_TYPE ("(o)"), error);
  char *path = NULL;

  if (r)
    g_variant_get (r, "(o)", &path);
  return path;
}

static gboolean tick (gpointer data) { return G_SOURCE_CONTINUE; }

static void
spin_until (gboolean (*cond) (Fixture *), Fixture *f)
{
  gint64 end = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  guint id = g_timeout_add (20, tick, NULL);   /* wake up even when nothing arrives */

  while (!cond (f) && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (id);
  g_assert_true (cond (f));
}

static void
assert_remote_error (const GError *error, const char *name)
{
  g_autofree char *got = g_dbus_error_get_remote_error (error);

  g_assert_cmpstr (got, ==, name);
}

static gboolean has_response (Fixture *f) { return f->responses->len > 0; }

static GVariant *
token_options (const char *token)
{
  GVariantDict d;

  g_variant_dict_init (&d, NULL);
  g_variant_dict_insert (&d, "handle_token", "s", token);
  return g_variant_dict_end (&d);
}

static void
test_path_and_unicast_response (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = start (f, f->client, "Start", token_options ("tok1"), &error);
  g_autofree char *expected = NULL;
  g_autofree char *escaped = g_strdup (g_dbus_connection_get_unique_name (f->client) + 1);
  g_autofree char *want = NULL;

  g_assert_no_error (error);
  g_strdelimit (escaped, ".", '_');
  expected = g_strdup_printf ("/org/freedesktop/portal/desktop/request/%s/tok1", escaped);
  g_assert_cmpstr (path, ==, expected);
  g_assert_cmpuint (limen_request_count_open (), ==, 1);

  g_variant_unref (call_spin (f->other, g_dbus_connection_get_unique_name (f->service), "/test",
                              "org.limen.Test", "Finish", g_variant_new ("(u)", 0), NULL, &error));
  g_assert_no_error (error);
  want = g_strdup_printf ("%s:0", g_dbus_connection_get_unique_name (f->client));
  spin_until (has_response, f);
  /* Give a misdirected copy time to arrive, then check only the caller got it. */
  for (int i = 0; i < 20; i++)
    g_main_context_iteration (NULL, FALSE);
  g_assert_cmpuint (f->responses->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (f->responses, 0), ==, want);
  g_assert_cmpuint (limen_request_count_open (), ==, 0);
  g_assert_cmpint (g_atomic_int_get (f->backend_closes), ==, 0);
}

static void
test_bad_tokens (Fixture *f, gconstpointer data)
{
  const char *bad[] = { "", "..", "a-b.c", "a/b", "tökén", "01234567890123456789012345678901234567890123456789012345678901234", NULL };

  for (guint i = 0; bad[i]; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *path = start (f, f->client, "Start", token_options (bad[i]), &error);

      g_assert_null (path);
      g_assert_true (g_dbus_error_is_remote_error (error));
      assert_remote_error (error, "org.freedesktop.portal.Error.InvalidArgument");
    }
  {
    g_autoptr(GError) error = NULL;
    GVariantDict d;
    g_autofree char *path = NULL;

    g_variant_dict_init (&d, NULL);
    g_variant_dict_insert (&d, "handle_token", "u", 5);
    path = start (f, f->client, "Start", g_variant_dict_end (&d), &error);
    g_assert_null (path);
    assert_remote_error (error, "org.freedesktop.portal.Error.InvalidArgument");
  }
  g_assert_cmpuint (limen_request_count_open (), ==, 0);
}

static void
test_token_reuse_while_open (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *p1 = start (f, f->client, "Start", token_options ("same"), &error);
  g_autofree char *p2 = NULL;
  g_autofree char *p3 = NULL;

  g_assert_no_error (error);
  p2 = start (f, f->client, "Start", token_options ("same"), &error);
  g_assert_null (p2);
  g_clear_error (&error);
  /* Another app's token never collides: its sender is part of the path. */
  p3 = start (f, f->other, "Start", token_options ("same"), &error);
  g_assert_no_error (error);
  g_assert_cmpstr (p1, !=, p3);
}

static gboolean backend_closed_once (Fixture *f) { return g_atomic_int_get (f->backend_closes) >= 1; }

static void
test_close_by_caller_only (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = start (f, f->client, "Start", token_options ("c1"), &error);
  g_autoptr(GVariant) r = NULL;

  g_assert_no_error (error);
  r = call_spin (f->other, g_dbus_connection_get_unique_name (f->service), path,
                 "org.freedesktop.portal.Request", "Close", NULL, NULL, &error);
  g_assert_null (r);
  assert_remote_error (error, "org.freedesktop.portal.Error.NotAllowed");
  g_clear_error (&error);
  g_assert_cmpuint (limen_request_count_open (), ==, 1);

  r = call_spin (f->client, g_dbus_connection_get_unique_name (f->service), path,
                 "org.freedesktop.portal.Request", "Close", NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (limen_request_count_open (), ==, 0);
  g_assert_cmpint (f->closed_calls, ==, 1);
  spin_until (backend_closed_once, f);
  g_assert_cmpuint (f->responses->len, ==, 0);   /* Close means no Response */
}

static void
test_caller_vanishes (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = start (f, f->other, "Start", token_options ("v1"), &error);

  g_assert_no_error (error);
  g_assert_cmpuint (limen_request_count_open (), ==, 1);
  g_dbus_connection_close_sync (f->other, NULL, NULL);
  g_clear_object (&f->other);
  spin_until (backend_closed_once, f);
  g_assert_cmpuint (limen_request_count_open (), ==, 0);
  g_assert_cmpint (f->closed_calls, ==, 1);
}

static void
on_session_closed (GDBusConnection *c, const char *sender, const char *path, const char *iface,
                   const char *signal, GVariant *params, gpointer user_data)
{
  (*(int *) user_data)++;
}

static int *session_closed_count;
static gboolean session_closed_seen (Fixture *f) { return *session_closed_count > 0; }

static void
test_session (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  GVariantDict d;
  g_autofree char *path = NULL;
  g_autoptr(GVariant) r = NULL;
  g_autoptr(LimenSession) found = NULL;
  int closed = 0;

  g_variant_dict_init (&d, NULL);
  g_variant_dict_insert (&d, "session_handle_token", "s", "sess");
  path = start (f, f->client, "StartSession", g_variant_dict_end (&d), &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (path, "/org/freedesktop/portal/desktop/session/"));
  g_assert_true (g_str_has_suffix (path, "/sess"));
  found = limen_session_lookup (path, g_dbus_connection_get_unique_name (f->client));
  g_assert_true (found == f->last_session);
  g_assert_null (limen_session_lookup (path, g_dbus_connection_get_unique_name (f->other)));
  g_dbus_connection_signal_subscribe (f->client, NULL, "org.freedesktop.portal.Session", "Closed", path, NULL,
                                      G_DBUS_SIGNAL_FLAGS_NONE, on_session_closed, &closed, NULL);
  r = call_spin (f->client, g_dbus_connection_get_unique_name (f->service), path,
                 "org.freedesktop.portal.Session", "Close", NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (limen_session_count_open (), ==, 0);
  spin_until (backend_closed_once, f);
  /* Closed by its caller: no Closed (one would have come before the reply to Close). */
  g_assert_cmpint (closed, ==, 0);

  /* Ended by the portal: the caller hears of it. */
  g_variant_dict_init (&d, NULL);
  g_variant_dict_insert (&d, "session_handle_token", "s", "sess2");
  g_free (path);
  path = start (f, f->client, "StartSession", g_variant_dict_end (&d), &error);
  g_assert_no_error (error);
  g_dbus_connection_signal_subscribe (f->client, NULL, "org.freedesktop.portal.Session", "Closed", path, NULL,
                                      G_DBUS_SIGNAL_FLAGS_NONE, on_session_closed, &closed, NULL);
  limen_session_close (f->last_session);
  session_closed_count = &closed;
  spin_until (session_closed_seen, f);
  g_assert_cmpint (closed, ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/request/path-and-unicast-response", Fixture, NULL, setup, test_path_and_unicast_response, teardown);
  g_test_add ("/request/bad-tokens", Fixture, NULL, setup, test_bad_tokens, teardown);
  g_test_add ("/request/token-reuse", Fixture, NULL, setup, test_token_reuse_while_open, teardown);
  g_test_add ("/request/close-by-caller-only", Fixture, NULL, setup, test_close_by_caller_only, teardown);
  g_test_add ("/request/caller-vanishes", Fixture, NULL, setup, test_caller_vanishes, teardown);
  g_test_add ("/session/lifecycle", Fixture, NULL, setup, test_session, teardown);
  return g_test_run ();
}
