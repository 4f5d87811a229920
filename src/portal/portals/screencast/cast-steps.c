/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The driver steps ScreenCast and RemoteDesktop share. A session moves
 * CREATING → READY (selections) → STARTING → STARTED, or FAILED: whatever ends a Start
 * other than success (the person cancels, the backend fails or vanishes, the caller closes
 * the Request) closes the session, so a second Start is never possible. */
#include "cast-session.h"

#include <string.h>

#include "backend.h"
#include "pipewire-remote.h"
#include "restore-tokens.h"

static LimenCastKind
row_kind (LimenCall *call)
{
  return g_strcmp0 (limen_call_get_method (call)->impl_interface, LIMEN_REMOTE_DESKTOP_IMPL) == 0
           ? LIMEN_CAST_REMOTE_DESKTOP : LIMEN_CAST_SCREEN_CAST;
}

/* The cast of the call's session (the driver found the caller's session already). */
static LimenCast *
call_cast (LimenCall *call, GError **error)
{
  LimenSession *session = limen_call_get_session (call);
  LimenCast *cast = session ? limen_cast_lookup_path (limen_session_get_path (session)) : NULL;

  if (cast == NULL || cast->session != session)
    g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                         "Invalid value for session_handle: no such screen cast or remote desktop session");
  return cast == NULL || cast->session != session ? NULL : cast;
}

void
limen_cast_step_created (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  const char *impl = limen_call_get_method (call)->impl_interface;
  const char *backend = limen_backend_find (limen_call_get_context (call), impl, &error);
  LimenCast *cast;

  if (backend == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  cast = limen_cast_attach (limen_call_get_session (call), row_kind (call), backend);
  cast->state = LIMEN_CAST_READY;
  g_task_return_boolean (task, TRUE);
}

/* Ends the busy mark of a selection, however its call ends. */
static void
selection_done (gpointer data)
{
  LimenSession *session = data;
  LimenCast *cast = limen_cast_lookup_path (limen_session_get_path (session));

  if (cast && cast->session == session)
    cast->busy = FALSE;
  limen_session_unref (session);
}

LimenCast *
limen_cast_begin_select (LimenCall *call, GError **error)
{
  LimenCast *cast = call_cast (call, error);

  if (cast == NULL)
    return NULL;
  if (cast->state != LIMEN_CAST_READY || cast->busy)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           cast->state == LIMEN_CAST_READY ? "Another selection of this session is still open"
                                                           : "The session cannot take a selection now: it has started or failed");
      return NULL;
    }
  cast->busy = TRUE;
  limen_call_set_data (call, limen_session_ref (cast->session), selection_done);
  return cast;
}

void
limen_cast_step_selected (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  LimenCast *cast = call_cast (call, &error);

  if (cast && g_str_equal (limen_call_get_method (call)->method, "SelectDevices"))
    cast->devices_selected = TRUE;
  else if (cast)
    cast->sources_selected = TRUE;
  g_task_return_boolean (task, TRUE);
}

gboolean
limen_cast_caller_token (LimenCall *call, const char **token, GError **error)
{
  g_autoptr(GVariant) value = g_variant_lookup_value (limen_call_get_caller_options (call), "restore_token", NULL);

  *token = NULL;
  if (value == NULL)
    return TRUE;
  /* Any string is taken: one that is not a live token of this app is ignored later, the same
   * way whatever it is, so the answer never tells whether it exists. */
  if (!g_variant_is_of_type (value, G_VARIANT_TYPE_STRING) || strlen (g_variant_get_string (value, NULL)) > 4096)
    {
      limen_option_set_error (error, "restore_token", g_variant_is_of_type (value, G_VARIANT_TYPE_STRING)
                                                        ? "too long" : "must be a string (s)");
      return FALSE;
    }
  g_variant_lookup (limen_call_get_caller_options (call), "restore_token", "&s", token);
  return TRUE;
}

void
limen_cast_restore (LimenCall *call, LimenCast *cast, const char *table, const char *token)
{
  g_autoptr(GVariant) data = NULL;

  g_variant_lookup (limen_call_get_options (call), "persist_mode", "u", &cast->persist_mode);
  if (token == NULL)
    return;
  data = limen_restore_token_take (table, limen_app_info_get_id (limen_call_get_app_info (call)),
                                   limen_call_get_sender (call), token);
  if (data == NULL)
    {
      g_debug ("Restore token for %s not usable: the person is asked", limen_session_get_path (cast->session));
      return;
    }
  limen_call_set_option (call, "restore_data", g_steal_pointer (&data));
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
  /* A remote desktop may start without SelectDevices (the backend then asks for its default
   * devices), as the reference allows; a screen cast needs its sources. */
  if (kind == LIMEN_CAST_SCREEN_CAST && !cast->sources_selected)
    return "Select sources (SelectSources) before Start";
  return NULL;
}

/* However the Start call ends: anything but STARTED closes the session. */
static void
start_done (gpointer data)
{
  LimenSession *session = data;
  LimenCast *cast = limen_cast_lookup_path (limen_session_get_path (session));

  if (cast && cast->session == session && cast->state != LIMEN_CAST_STARTED)
    {
      cast->state = LIMEN_CAST_FAILED;
      limen_session_close (session);
    }
  limen_session_unref (session);
}

void
limen_cast_step_check_start (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) parent = limen_call_get_arg (call, 1);
  LimenCast *cast = call_cast (call, &error);
  const char *why;

  if (cast == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (parent && strlen (g_variant_get_string (parent, NULL)) > 1024)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                               "Invalid value for parent_window: too long");
      return;
    }
  if ((why = start_refusal (cast, row_kind (call))) != NULL)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "%s", why);
      return;
    }
  cast->state = LIMEN_CAST_STARTING;
  limen_call_set_data (call, limen_session_ref (cast->session), start_done);
  g_task_return_boolean (task, TRUE);
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
  /* Never longer than the app asked for. */
  mode = MIN (mode, cast->persist_mode);
  token = limen_restore_token_store (cast->kind == LIMEN_CAST_SCREEN_CAST ? LIMEN_RESTORE_TABLE_SCREEN_CAST
                                                                          : LIMEN_RESTORE_TABLE_REMOTE_DESKTOP,
                                     app_id, limen_session_get_sender (cast->session), mode, data,
                                     cast->kind == LIMEN_CAST_REMOTE_DESKTOP ? cast->devices : 0);
  if (token)
    g_variant_builder_add (b, "{sv}", "restore_token", g_variant_new_string (token));
  /* A token in the store can be revoked there while this session runs. */
  if (token && mode == 2)
    {
      g_free (cast->restore_token);
      cast->restore_token = g_strdup (token);
    }
}

/* What the caller hears of a successful Start; NULL when the backend's answer is unusable. */
static GVariant *
started_results (LimenCast *cast, const char *app_id, GVariant *results)
{
  g_autoptr(GVariant) streams = results ? g_variant_lookup_value (results, "streams", NULL) : NULL;
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
  else if (cast->kind == LIMEN_CAST_REMOTE_DESKTOP && streams != NULL)
    {
      /* A remote-desktop backend may give streams nobody selected (absolute pointer and
       * touch positions name one): passed on as upstream's frontend does; malformed ones
       * are left out rather than failing the session. */
      GVariant *checked = limen_cast_take_streams (cast, streams);

      if (checked)
        g_variant_builder_add (&b, "{sv}", "streams", checked);
    }
  if (cast->kind == LIMEN_CAST_REMOTE_DESKTOP && results)
    {
      g_variant_lookup (results, "devices", "u", &devices);
      g_variant_lookup (results, "clipboard_enabled", "b", &clipboard);
      /* Never more than the app asked for, whatever the backend says. */
      cast->devices &= devices;
      cast->clipboard_enabled = clipboard && cast->clipboard_requested;
      g_variant_builder_add (&b, "{sv}", "devices", g_variant_new_uint32 (cast->devices));
      g_variant_builder_add (&b, "{sv}", "clipboard_enabled", g_variant_new_boolean (cast->clipboard_enabled));
    }
  if (results)
    add_restore_token (cast, app_id, results, &b);
  return g_variant_builder_end (&b);
}

/* @streams with pipewire-serial added where @serials knows one and the backend gave none. */
static GVariant *
streams_with_serials (GVariant *streams, const guint64 *serials)
{
  GVariantBuilder b;
  GVariantIter iter;
  GVariant *props;
  guint32 node;
  guint i = 0;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(ua{sv})"));
  g_variant_iter_init (&iter, streams);
  while (g_variant_iter_next (&iter, "(u@a{sv})", &node, &props))
    {
      g_autoptr(GVariant) given = g_variant_lookup_value (props, "pipewire-serial", G_VARIANT_TYPE_UINT64);

      if (given == NULL && serials[i] != 0)
        {
          GVariantBuilder p;

          g_variant_builder_init (&p, G_VARIANT_TYPE_VARDICT);
          for (gsize k = 0; k < g_variant_n_children (props); k++)
            {
              g_autoptr(GVariant) entry = g_variant_get_child_value (props, k);

              g_variant_builder_add_value (&p, entry);
            }
          g_variant_builder_add (&p, "{sv}", "pipewire-serial", g_variant_new_uint64 (serials[i]));
          g_variant_unref (props);
          props = g_variant_ref_sink (g_variant_builder_end (&p));
        }
      g_variant_builder_add (&b, "(u@a{sv})", node, props);
      g_variant_unref (props);
      i++;
    }
  return g_variant_builder_end (&b);
}

typedef struct {
  LimenCall *call;
  GTask     *task;
} SerialsLookup;

static void
on_serials (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SerialsLookup *lookup = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree guint64 *serials = limen_pipewire_node_serials_finish (result, &error);
  GVariant *results = limen_call_get_results (lookup->call);
  g_autoptr(GVariant) streams = results ? g_variant_lookup_value (results, "streams", G_VARIANT_TYPE ("a(ua{sv})"))
                                        : NULL;

  if (serials == NULL)
    g_debug ("Streams without pipewire-serial: %s", error->message);
  else if (streams)
    {
      GVariant *rest = limen_cast_dict_without (results, "streams");
      GVariantBuilder b;

      g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
      for (gsize k = 0; k < g_variant_n_children (rest); k++)
        {
          g_autoptr(GVariant) entry = g_variant_get_child_value (rest, k);

          g_variant_builder_add_value (&b, entry);
        }
      g_variant_unref (g_variant_ref_sink (rest));
      g_variant_builder_add (&b, "{sv}", "streams", streams_with_serials (streams, serials));
      limen_call_set_results (lookup->call, LIMEN_RESPONSE_SUCCESS, g_variant_builder_end (&b));
    }
  g_task_return_boolean (lookup->task, TRUE);
  g_object_unref (lookup->task);
  g_free (lookup);
}

/* Version 6's pipewire-serial: KWin names node ids only; the frontend, which talks to
 * PipeWire anyway, looks the serials up before the app hears of the streams. */
static gboolean
look_up_serials (LimenCall *call, GTask *task, LimenCast *cast)
{
  SerialsLookup *lookup;

  if (cast->nodes->len == 0)
    return FALSE;
  lookup = g_new0 (SerialsLookup, 1);
  lookup->call = call;
  lookup->task = g_object_ref (task);
  limen_pipewire_node_serials_async ((const guint32 *) (gpointer) cast->nodes->data, cast->nodes->len, on_serials,
                                     lookup);
  return TRUE;
}

void
limen_cast_step_started (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  LimenCast *cast = call_cast (call, &error);
  GVariant *answer = NULL;

  if (cast && limen_session_is_open (cast->session))
    answer = started_results (cast, limen_app_info_get_id (limen_call_get_app_info (call)),
                              limen_call_get_results (call));
  if (answer == NULL)
    {
      g_message ("Backend started session %s with no usable streams",
                 cast ? limen_session_get_path (cast->session) : "(gone)");
      limen_call_set_results (call, LIMEN_RESPONSE_OTHER, NULL);
    }
  else
    {
      cast->state = LIMEN_CAST_STARTED;
      limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, answer);
      if (look_up_serials (call, task, cast))
        return;
    }
  g_task_return_boolean (task, TRUE);
}
