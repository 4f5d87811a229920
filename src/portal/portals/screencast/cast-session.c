/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A RemoteDesktop session is also used with ScreenCast.SelectSources, OpenPipeWireRemote
 * and the Clipboard portal, so the three portals keep one state per Session. Ending the
 * session (Close, the caller leaving the bus, shutdown) hides the session's streams from
 * every PipeWire remote handed out for it. */
#include "cast-session.h"

#include <string.h>

#include "backend.h"
#include "pipewire-remote.h"
#include "restore-tokens.h"

static void
cast_free (LimenCast *cast)
{
  g_free (cast->backend);
  g_free (cast->backend_owner);
  g_clear_pointer (&cast->transfers, g_hash_table_unref);
  g_array_unref (cast->nodes);
  g_array_unref (cast->remotes);
  g_free (cast);
}

/* Marks a session's data as ours: other session portals (Location, Inhibit) keep other
 * structs in the same slot, so the kind alone cannot tell them apart. */
static GHashTable *casts;   /* session path → LimenCast (not owned) */

static void
cast_forget (gpointer data)
{
  LimenCast *cast = data;

  if (casts && g_hash_table_lookup (casts, limen_session_get_path (cast->session)) == cast)
    g_hash_table_remove (casts, limen_session_get_path (cast->session));
  cast_free (cast);
}

static void
on_closed (LimenSession *session, gpointer user_data)
{
  LimenCast *cast = limen_session_get_data (session);

  for (guint i = 0; cast && i < cast->remotes->len; i++)
    limen_pipewire_remote_revoke (g_array_index (cast->remotes, guint32, i),
                                  (const guint32 *) (gpointer) cast->nodes->data, cast->nodes->len);
  if (cast)
    g_array_set_size (cast->remotes, 0);
}

LimenCast *
limen_cast_attach (LimenSession *session, LimenCastKind kind, const char *backend)
{
  LimenCast *cast = g_new0 (LimenCast, 1);

  cast->session = session;
  cast->kind = kind;
  cast->backend = g_strdup (backend);
  cast->nodes = g_array_new (FALSE, FALSE, sizeof (guint32));
  cast->remotes = g_array_new (FALSE, FALSE, sizeof (guint32));
  if (casts == NULL)
    casts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_replace (casts, g_strdup (limen_session_get_path (session)), cast);
  limen_session_set_data (session, cast, cast_forget);
  limen_session_set_closed_func (session, on_closed, NULL);
  return cast;
}

LimenCast *
limen_cast_lookup (GDBusMethodInvocation *invocation, const char *path, LimenSession **session_out,
                   GError **error)
{
  g_autoptr(LimenSession) session = limen_session_lookup (path, g_dbus_method_invocation_get_sender (invocation));
  LimenCast *cast = session ? limen_session_get_data (session) : NULL;

  if (cast == NULL || casts == NULL || g_hash_table_lookup (casts, path) != cast || !limen_session_is_open (session))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid value for session_handle: no such screen cast or remote desktop session");
      return NULL;
    }
  *session_out = g_steal_pointer (&session);
  return cast;
}

LimenCast *
limen_cast_lookup_path (const char *path)
{
  LimenCast *cast = casts ? g_hash_table_lookup (casts, path) : NULL;

  return cast && limen_session_is_open (cast->session) ? cast : NULL;
}

GVariant *
limen_cast_impl_parameters (LimenRequest *request, LimenSession *session, const char *parent_window,
                            GVariant *options)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE_TUPLE);
  g_variant_builder_add (&b, "o", limen_request_get_path (request));
  g_variant_builder_add (&b, "o", limen_session_get_path (session));
  g_variant_builder_add (&b, "s", limen_app_info_get_id (limen_session_get_app_info (session)));
  if (parent_window)
    g_variant_builder_add (&b, "s", parent_window);
  g_variant_builder_add_value (&b, options);
  return g_variant_builder_end (&b);
}

/* One stream's properties, each with the type the specification gives it. */
static GVariant *
stream_properties (GVariant *props)
{
  static const struct { const char *key; const char *type; } known[] = {
    { "id", "s" }, { "position", "(ii)" }, { "size", "(ii)" }, { "source_type", "u" },
    { "mapping_id", "s" }, { "pipewire-serial", "t" },
  };
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  for (guint i = 0; i < G_N_ELEMENTS (known); i++)
    {
      g_autoptr(GVariant) value = g_variant_lookup_value (props, known[i].key, G_VARIANT_TYPE (known[i].type));

      if (value == NULL)
        continue;
      if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING) && strlen (g_variant_get_string (value, NULL)) > 256)
        continue;
      g_variant_builder_add (&b, "{sv}", known[i].key, value);
    }
  return g_variant_builder_end (&b);
}

GVariant *
limen_cast_take_streams (LimenCast *cast, GVariant *streams)
{
  GVariantBuilder b;
  GVariantIter iter;
  GVariant *props;
  guint32 node;

  if (streams == NULL || !g_variant_is_of_type (streams, G_VARIANT_TYPE ("a(ua{sv})")) ||
      g_variant_n_children (streams) == 0 || g_variant_n_children (streams) > LIMEN_CAST_MAX_STREAMS)
    return NULL;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(ua{sv})"));
  g_variant_iter_init (&iter, streams);
  while (g_variant_iter_next (&iter, "(u@a{sv})", &node, &props))
    {
      /* 0 is the PipeWire core and ~0 means "any object": never a stream. */
      if (node == 0 || node == G_MAXUINT32)
        {
          g_variant_unref (props);
          g_variant_builder_clear (&b);
          g_array_set_size (cast->nodes, 0);
          return NULL;
        }
      g_array_append_val (cast->nodes, node);
      g_variant_builder_add (&b, "(u@a{sv})", node, stream_properties (props));
      g_variant_unref (props);
    }
  return g_variant_builder_end (&b);
}

gboolean
limen_cast_validate_persist_mode (const LimenOption *o, GVariant *v, GError **e)
{
  if (g_variant_get_uint32 (v) > 2)
    {
      limen_option_set_error (e, o->key, "must be 0 (no), 1 (while the app runs) or 2 (until revoked)");
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_cast_validate_mask (const LimenOption *o, GVariant *v, GError **e)
{
  guint32 value = g_variant_get_uint32 (v);

  if (value == 0 || (value & ~(guint32) o->max) != 0)
    {
      g_autofree char *why = g_strdup_printf ("must be a non-empty bitmask of %u", (guint) o->max);

      limen_option_set_error (e, o->key, why);
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_cast_validate_restore_token (const LimenOption *o, GVariant *v, GError **e)
{
  /* Any string is accepted: one that is not a token of this app is ignored later, the same
   * way whatever it is, so the answer never tells whether it exists. Only the size is
   * bounded, as for every string. */
  if (strlen (g_variant_get_string (v, NULL)) > 4096)
    {
      limen_option_set_error (e, o->key, "too long");
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_cast_return_error (GDBusMethodInvocation *invocation, GError *error)
{
  limen_invocation_return_gerror (invocation, error);
  g_error_free (error);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GVariant *
limen_cast_dict_without (GVariant *dict, const char *key)
{
  g_autoptr(GVariant) owned = g_variant_ref_sink (dict);
  GVariantBuilder b;
  GVariantIter iter;
  const char *k;
  GVariant *v;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_iter_init (&iter, owned);
  while (g_variant_iter_next (&iter, "{&sv}", &k, &v))
    {
      if (!g_str_equal (k, key))
        g_variant_builder_add (&b, "{sv}", k, v);
      g_variant_unref (v);
    }
  return g_variant_builder_end (&b);
}

static const LimenOption create_session_options[] = {
  { "handle_token", "s", limen_validate_token, 0 },
  { "session_handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

typedef struct {
  LimenSession *session;
  void        (*on_created) (LimenCast *cast);
} Creating;

static void
creating_free (Creating *c)
{
  limen_session_unref (c->session);
  g_free (c);
}

static void
on_impl_created (LimenRequest *request, GVariant *reply, GUnixFDList *fd_list, const GError *error,
                 gpointer user_data)
{
  Creating *c = user_data;
  LimenCast *cast = limen_session_get_data (c->session);
  guint response = limen_backend_reply_response (reply, NULL);

  if (response != LIMEN_RESPONSE_SUCCESS || !limen_session_is_open (c->session))
    {
      g_debug ("Backend did not create session %s: %s", limen_session_get_path (c->session),
               error ? error->message : "refused");
      limen_session_close (c->session);
      limen_request_respond (request, response == LIMEN_RESPONSE_SUCCESS ? LIMEN_RESPONSE_OTHER : response, NULL);
      return;
    }
  cast->state = LIMEN_CAST_READY;
  if (c->on_created)
    c->on_created (cast);
  limen_request_respond (request, LIMEN_RESPONSE_SUCCESS,
                         g_variant_new_parsed ("{'session_handle': <%s>}", limen_session_get_path (c->session)));
}

static void
on_request_closed (LimenRequest *request, gpointer user_data)
{
  LimenSession *session = limen_request_get_data (request);

  /* The caller gave up on CreateSession: the half-made session goes with it. */
  if (session)
    limen_session_close (session);
}

void
limen_cast_create_session (LimenPortalContext *context, GDBusMethodInvocation *invocation, GVariant *options,
                           LimenCastKind kind, const char *impl_interface, void (*on_created) (LimenCast *cast))
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenSession) session = NULL;
  g_autoptr(LimenRequest) request = NULL;
  const char *backend;
  Creating *c;

  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_invocation (invocation);
  if (info == NULL)
    return;
  if (!limen_options_filter (options, &b, &error, create_session_options, NULL) ||
      (backend = limen_backend_find (context, impl_interface, &error)) == NULL ||
      (session = limen_session_new (invocation, info, options, &error)) == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return;
    }
  /* The Request answers the invocation; the session needed it first for its sender. */
  request = limen_backend_start_request (invocation, info, options, backend, &error);
  if (request == NULL)
    {
      limen_session_close (session);
      limen_invocation_return_gerror (invocation, error);
      return;
    }
  limen_cast_attach (session, kind, backend);
  limen_session_set_backend (session, backend);
  limen_request_set_data (request, limen_session_ref (session), (GDestroyNotify) limen_session_unref);
  limen_request_set_closed_func (request, on_request_closed, NULL);
  c = g_new0 (Creating, 1);
  c->session = limen_session_ref (session);
  c->on_created = on_created;
  limen_backend_call (request, backend, impl_interface, "CreateSession",
                      limen_cast_impl_parameters (request, session, NULL, g_variant_builder_end (&b)),
                      NULL, LIMEN_BACKEND_TIMEOUT_QUICK, on_impl_created, c, (GDestroyNotify) creating_free);
}

gboolean
limen_cast_check_selectable (LimenCast *cast, GError **error)
{
  if (cast->state != LIMEN_CAST_READY || cast->busy)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           cast->state == LIMEN_CAST_READY ? "Another selection of this session is still open"
                                                           : "The session is not ready for a selection: it is being created, started or has started");
      return FALSE;
    }
  return TRUE;
}

typedef struct {
  LimenSession *session;
  gboolean     *selected;   /* a field of the session's LimenCast */
} Selecting;

static void
selecting_free (Selecting *s)
{
  LimenCast *cast = limen_session_get_data (s->session);

  if (cast)
    cast->busy = FALSE;
  limen_session_unref (s->session);
  g_free (s);
}

static void
on_impl_selected (LimenRequest *request, GVariant *reply, GUnixFDList *fd_list, const GError *error,
                  gpointer user_data)
{
  Selecting *s = user_data;
  guint response = limen_backend_reply_response (reply, NULL);

  if (response == LIMEN_RESPONSE_SUCCESS && limen_session_is_open (s->session))
    *s->selected = TRUE;
  limen_request_respond (request, response, NULL);
}

void
limen_cast_select (GDBusMethodInvocation *invocation, LimenCast *cast, const char *impl_interface,
                   const char *method, GVariant *caller_options, GVariant *options, gboolean *selected)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenRequest) request = NULL;
  g_autoptr(GVariant) owned = g_variant_ref_sink (options);
  Selecting *s;

  request = limen_backend_start_request (invocation, limen_session_get_app_info (cast->session), caller_options,
                                         cast->backend, &error);
  if (request == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return;
    }
  cast->busy = TRUE;
  s = g_new0 (Selecting, 1);
  s->session = limen_session_ref (cast->session);
  s->selected = selected;
  limen_backend_call (request, cast->backend, impl_interface, method,
                      limen_cast_impl_parameters (request, cast->session, NULL, owned),
                      NULL, LIMEN_BACKEND_TIMEOUT_QUICK, on_impl_selected, s, (GDestroyNotify) selecting_free);
}

static const LimenOption start_options[] = {
  { "handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

typedef struct {
  LimenSession *session;
  char         *app_id;
} Starting;

static void
starting_free (Starting *s)
{
  LimenCast *cast = limen_session_get_data (s->session);

  /* Ended without a success (closed request, vanished backend): nothing can start now. */
  if (cast && cast->state == LIMEN_CAST_STARTING)
    cast->state = LIMEN_CAST_FAILED;
  limen_session_unref (s->session);
  g_free (s->app_id);
  g_free (s);
}

/* The restore token for what the backend allows to persist, or nothing. */
static void
add_restore_token (LimenCast *cast, const char *app_id, GVariant *results, GVariantBuilder *b)
{
  g_autoptr(GVariant) data = g_variant_lookup_value (results, "restore_data", G_VARIANT_TYPE ("(suv)"));
  guint32 mode = 0;
  g_autofree char *token = NULL;

  if (data == NULL || !g_variant_lookup (results, "persist_mode", "u", &mode))
    return;
  g_debug ("Backend allows persist mode %u (asked %u) for %s", mode, cast->persist_mode,
           limen_session_get_path (cast->session));
  mode = MIN (mode, cast->persist_mode);
  token = limen_restore_token_store (cast->kind == LIMEN_CAST_SCREEN_CAST ? LIMEN_RESTORE_TABLE_SCREEN_CAST
                                                                          : LIMEN_RESTORE_TABLE_REMOTE_DESKTOP,
                                     app_id, mode, data);
  if (token)
    g_variant_builder_add (b, "{sv}", "restore_token", g_variant_new_string (token));
}

/* What the caller hears of a successful Start; NULL when the backend's answer is unusable. */
static GVariant *
started_results (LimenCast *cast, const char *app_id, GVariant *results)
{
  g_autoptr(GVariant) streams = g_variant_lookup_value (results, "streams", NULL);
  GVariantBuilder b;
  guint32 devices = 0;
  gboolean clipboard = FALSE;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  if (cast->sources_selected)
    {
      GVariant *checked = limen_cast_take_streams (cast, streams);

      if (checked == NULL)
        {
          g_variant_builder_clear (&b);
          return NULL;
        }
      g_variant_builder_add (&b, "{sv}", "streams", checked);
    }
  if (cast->kind == LIMEN_CAST_REMOTE_DESKTOP)
    {
      g_variant_lookup (results, "devices", "u", &devices);
      g_variant_lookup (results, "clipboard_enabled", "b", &clipboard);
      /* Never more than the app asked for, whatever the backend says. */
      cast->devices &= devices;
      cast->clipboard_enabled = clipboard && cast->clipboard_requested;
      g_variant_builder_add (&b, "{sv}", "devices", g_variant_new_uint32 (cast->devices));
      g_variant_builder_add (&b, "{sv}", "clipboard_enabled", g_variant_new_boolean (cast->clipboard_enabled));
    }
  add_restore_token (cast, app_id, results, &b);
  return g_variant_builder_end (&b);
}

static void
on_impl_started (LimenRequest *request, GVariant *reply, GUnixFDList *fd_list, const GError *error,
                 gpointer user_data)
{
  Starting *s = user_data;
  LimenCast *cast = limen_session_get_data (s->session);
  g_autoptr(GVariant) results = NULL;
  guint response = limen_backend_reply_response (reply, &results);
  GVariant *answer = NULL;

  if (response == LIMEN_RESPONSE_SUCCESS && limen_session_is_open (s->session))
    answer = started_results (cast, s->app_id, results);
  if (answer == NULL)
    {
      if (response == LIMEN_RESPONSE_SUCCESS)
        g_message ("Backend started session %s with no usable streams", limen_session_get_path (s->session));
      cast->state = LIMEN_CAST_FAILED;
      limen_request_respond (request, response == LIMEN_RESPONSE_SUCCESS ? LIMEN_RESPONSE_OTHER : response, NULL);
      limen_session_close (s->session);
      return;
    }
  cast->state = LIMEN_CAST_STARTED;
  limen_request_respond (request, LIMEN_RESPONSE_SUCCESS, answer);
}

/* Why Start cannot run on @cast now, or NULL. */
static const char *
start_refusal (LimenCast *cast, LimenCastKind kind)
{
  if (cast->kind != kind)
    return kind == LIMEN_CAST_SCREEN_CAST ? "A remote desktop session is started with RemoteDesktop.Start"
                                          : "A screen cast session cannot be started as a remote desktop";
  if (cast->state == LIMEN_CAST_STARTING || cast->state == LIMEN_CAST_STARTED || cast->state == LIMEN_CAST_FAILED)
    return "The session was already started";
  if (cast->state != LIMEN_CAST_READY || cast->busy)
    return "The session is not ready: it is being created or a selection is still open";
  if (kind == LIMEN_CAST_SCREEN_CAST && !cast->sources_selected)
    return "Select sources (SelectSources) before Start";
  if (kind == LIMEN_CAST_REMOTE_DESKTOP && !cast->devices_selected)
    return "Select devices (SelectDevices) before Start";
  return NULL;
}

gboolean
limen_cast_start (LimenPortalContext *context, GDBusMethodInvocation *invocation, const char *session_handle,
                  const char *parent_window, GVariant *options, LimenCastKind kind)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenSession) session = NULL;
  g_autoptr(LimenRequest) request = NULL;
  LimenCast *cast;
  const char *why;
  Starting *s;

  if (!limen_options_filter (options, &b, &error, start_options, NULL) ||
      (cast = limen_cast_lookup (invocation, session_handle, &session, &error)) == NULL)
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  if (strlen (parent_window) > 1024)
    return limen_cast_return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                                     "Invalid value for parent_window: too long"));
  if ((why = start_refusal (cast, kind)) != NULL)
    return limen_cast_return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, why));
  request = limen_backend_start_request (invocation, limen_session_get_app_info (session), options,
                                         cast->backend, &error);
  if (request == NULL)
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  cast->state = LIMEN_CAST_STARTING;
  s = g_new0 (Starting, 1);
  s->session = limen_session_ref (session);
  s->app_id = g_strdup (limen_app_info_get_id (limen_session_get_app_info (session)));
  limen_backend_call (request, cast->backend,
                      kind == LIMEN_CAST_SCREEN_CAST ? LIMEN_SCREEN_CAST_IMPL : LIMEN_REMOTE_DESKTOP_IMPL, "Start",
                      limen_cast_impl_parameters (request, session, parent_window, g_variant_builder_end (&b)),
                      NULL, LIMEN_BACKEND_TIMEOUT_DIALOG, on_impl_started, s, (GDestroyNotify) starting_free);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}
