/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The order of driver.h's header comment is the whole point of this file: a portal can add
 * steps but never reorder them, so every request method checks its input before it asks
 * anyone anything, and answers its handle before anything slow happens. */
#include "driver.h"

#include <string.h>

#include "backend.h"
#include "daemon.h"

typedef enum {
  PHASE_BEFORE_HANDLE,
  PHASE_AFTER_HANDLE,
  PHASE_IMPL,
  PHASE_POST,
  PHASE_DONE,
} Phase;

struct _LimenCall {
  const LimenDriverMethod *row;
  LimenPortalContext      *context;
  GDBusMethodInvocation   *invocation;   /* until answered */
  LimenAppInfo            *info;
  char                    *sender;       /* the caller's unique name */
  GVariant                *parameters;
  GUnixFDList             *fd_list;
  GVariant                *caller_options;
  GVariant                *options;      /* filtered, a{sv} */
  GVariant                *impl_middle;  /* NULL: the default in-arguments */
  GUnixFDList             *impl_fds;
  char                    *backend;
  LimenRequest            *request;
  LimenSession            *session;
  guint                    response;
  GVariant                *results;
  gpointer                 data;
  GDestroyNotify           data_destroy;
  Phase                    phase;
  guint                    step;         /* index into the phase's step list */
};

typedef struct {
  const LimenDriverMethod *row;
  LimenPortalContext      *context;
} Binding;

static void call_next (LimenCall *call);

static void
call_free (LimenCall *call)
{
  /* Every path answers the method; this only guards against a caller left waiting. */
  if (call->invocation)
    g_dbus_method_invocation_return_error_literal (g_steal_pointer (&call->invocation), LIMEN_ERROR,
                                                   LIMEN_ERROR_FAILED, "The request ended before it began");
  if (call->data_destroy)
    call->data_destroy (call->data);
  g_clear_pointer (&call->info, limen_app_info_unref);
  g_free (call->sender);
  g_clear_pointer (&call->parameters, g_variant_unref);
  g_clear_object (&call->fd_list);
  g_clear_pointer (&call->caller_options, g_variant_unref);
  g_clear_pointer (&call->options, g_variant_unref);
  g_clear_pointer (&call->impl_middle, g_variant_unref);
  g_clear_object (&call->impl_fds);
  g_free (call->backend);
  g_clear_pointer (&call->request, limen_request_unref);
  g_clear_pointer (&call->session, limen_session_unref);
  g_clear_pointer (&call->results, g_variant_unref);
  g_free (call);
}

/* Accessors. */
LimenPortalContext *limen_call_get_context (LimenCall *call) { return call->context; }
const LimenDriverMethod *limen_call_get_method (LimenCall *call) { return call->row; }
LimenAppInfo *limen_call_get_app_info (LimenCall *call) { return call->info; }
const char *limen_call_get_sender (LimenCall *call) { return call->sender; }
GVariant *limen_call_get_parameters (LimenCall *call) { return call->parameters; }
GUnixFDList *limen_call_get_fd_list (LimenCall *call) { return call->fd_list; }
GVariant *limen_call_get_caller_options (LimenCall *call) { return call->caller_options; }
GVariant *limen_call_get_options (LimenCall *call) { return call->options; }
LimenRequest *limen_call_get_request (LimenCall *call) { return call->request; }
LimenSession *limen_call_get_session (LimenCall *call) { return call->session; }
gpointer limen_call_get_data (LimenCall *call) { return call->data; }
guint limen_call_get_response (LimenCall *call) { return call->response; }
GVariant *limen_call_get_results (LimenCall *call) { return call->results; }

GVariant *
limen_call_get_arg (LimenCall *call, guint index)
{
  if (index >= g_variant_n_children (call->parameters))
    return NULL;
  return g_variant_get_child_value (call->parameters, index);
}

void
limen_call_set_data (LimenCall *call, gpointer data, GDestroyNotify destroy)
{
  if (call->data_destroy)
    call->data_destroy (call->data);
  call->data = data;
  call->data_destroy = destroy;
}

gpointer
limen_call_steal_data (LimenCall *call)
{
  call->data_destroy = NULL;
  return g_steal_pointer (&call->data);
}

void
limen_call_set_results (LimenCall *call, guint response, GVariant *results)
{
  g_clear_pointer (&call->results, g_variant_unref);
  call->response = MIN (response, LIMEN_RESPONSE_OTHER);
  call->results = results ? g_variant_ref_sink (results) : NULL;
}

void
limen_call_set_impl_args (LimenCall *call, GVariant *middle, GUnixFDList *fd_list)
{
  g_clear_pointer (&call->impl_middle, g_variant_unref);
  g_clear_object (&call->impl_fds);
  call->impl_middle = middle ? g_variant_ref_sink (middle) : NULL;
  call->impl_fds = fd_list ? g_object_ref (fd_list) : NULL;
}

void
limen_call_set_option (LimenCall *call, const char *key, GVariant *value)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) owned = value ? g_variant_ref_sink (value) : NULL;
  GVariantIter iter;
  const char *k;
  GVariant *v;

  g_variant_iter_init (&iter, call->options);
  while (g_variant_iter_next (&iter, "{&sv}", &k, &v))
    {
      if (!g_str_equal (k, key))
        g_variant_builder_add (&b, "{sv}", k, v);
      g_variant_unref (v);
    }
  if (owned)
    g_variant_builder_add (&b, "{sv}", key, owned);
  g_variant_unref (call->options);
  call->options = g_variant_ref_sink (g_variant_builder_end (&b));
}

void
limen_call_return_error (LimenCall *call, const GError *error)
{
  g_return_if_fail (call->invocation != NULL);
  limen_invocation_return_gerror (g_steal_pointer (&call->invocation), error);
}

guint
limen_driver_reply_response (GVariant *reply, GVariant **results)
{
  guint response = LIMEN_RESPONSE_OTHER;

  if (results)
    *results = NULL;
  if (reply && g_variant_is_of_type (reply, G_VARIANT_TYPE ("(ua{sv})")))
    g_variant_get (reply, "(u@a{sv})", &response, results);
  else if (reply && g_variant_is_of_type (reply, G_VARIANT_TYPE ("(u)")))
    g_variant_get (reply, "(u)", &response);
  else if (reply)
    g_message ("Backend reply of type %s, expected (ua{sv})", g_variant_get_type_string (reply));
  return MIN (response, LIMEN_RESPONSE_OTHER);
}

LimenSession *
limen_driver_lookup_session (GDBusMethodInvocation *invocation, const char *session_handle, GError **error)
{
  LimenSession *session = limen_session_lookup (session_handle, g_dbus_method_invocation_get_sender (invocation));

  if (session == NULL)
    g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                         "Invalid value for session_handle: no such session of this caller");
  return session;
}

/* A created session's results: its handle, and what the post-steps answered when the row
 * asks for it (the backend's own results never pass unfiltered). */
static GVariant *
session_results (LimenCall *call)
{
  GVariantBuilder b;
  GVariantIter iter;
  const char *key, *path;
  GVariant *value;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  path = limen_session_get_path (call->session);
  g_variant_builder_add (&b, "{sv}", "session_handle",
                         (call->row->flags & LIMEN_DRIVER_SESSION_HANDLE_PATH) ? g_variant_new_object_path (path)
                                                                              : g_variant_new_string (path));
  if ((call->row->flags & LIMEN_DRIVER_SESSION_RESULTS) && call->results)
    {
      g_variant_iter_init (&iter, call->results);
      while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
        {
          if (!g_str_equal (key, "session_handle"))
            g_variant_builder_add (&b, "{sv}", key, value);
          g_variant_unref (value);
        }
    }
  return g_variant_builder_end (&b);
}

/* The end: Response (or the open Request of a KEEP_OPEN row, or the Session's handle). */
static void
call_finish (LimenCall *call)
{
  const LimenDriverMethod *row = call->row;

  call->phase = PHASE_DONE;
  if (call->request && limen_request_is_open (call->request))
    {
      if (call->response != LIMEN_RESPONSE_SUCCESS)
        g_clear_pointer (&call->results, g_variant_unref);
      if (row->kind == LIMEN_CALL_CREATE_SESSION)
        {
          if (call->response == LIMEN_RESPONSE_SUCCESS)
            limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS, session_results (call));
          else
            limen_session_discard (call->session);
        }
      if (!(row->flags & LIMEN_DRIVER_KEEP_OPEN) || call->response != LIMEN_RESPONSE_SUCCESS)
        limen_request_respond (call->request, call->response, g_steal_pointer (&call->results));
    }
  call_free (call);
}

/* A step refused: before the handle the caller gets the error, after it Response 2. */
static void
call_refuse (LimenCall *call, GError *error)
{
  if (call->invocation)
    {
      if (call->session && call->row->kind != LIMEN_CALL_IN_SESSION)
        limen_session_discard (call->session);
      limen_call_return_error (call, error);
      call_free (call);
      return;
    }
  g_message ("%s for '%s' refused: %s", call->row->method, limen_app_info_get_id (call->info), error->message);
  limen_call_set_results (call, LIMEN_RESPONSE_OTHER, NULL);
  call_finish (call);
}

static void
on_step_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LimenCall *call = user_data;
  g_autoptr(GError) error = NULL;
  gboolean go_on = g_task_propagate_boolean (G_TASK (result), &error);

  if (call->request && !limen_request_is_open (call->request))
    {
      /* Closed meanwhile (Close, caller gone): the backend was told, nobody listens. */
      call_free (call);
      return;
    }
  if (error)
    call_refuse (call, error);
  else if (!go_on && call->invocation == NULL && call->request)
    call_finish (call);   /* the step set the response */
  else if (!go_on)
    call_free (call);     /* the step answered the method itself */
  else if (call->phase == PHASE_IMPL)
    {
      /* The in-process impl went through: its response goes to the post-steps. */
      call->phase = PHASE_POST;
      call->step = 0;
      call_next (call);
    }
  else
    {
      call->step++;
      call_next (call);
    }
}

static void
run_step (LimenCall *call, LimenStepFunc func)
{
  GCancellable *cancellable = call->request ? limen_request_get_cancellable (call->request) : NULL;
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, on_step_done, call);

  g_task_set_source_tag (task, run_step);
  func (call, task);
}

/* The impl arguments: (handle, [session,] app_id, middle..., [options]). */
static GVariant *
impl_parameters (LimenCall *call)
{
  GVariantBuilder b;
  GVariant *middle = call->impl_middle ? call->impl_middle : call->parameters;
  guint n = g_variant_n_children (middle);
  guint first = call->impl_middle == NULL && call->row->kind == LIMEN_CALL_IN_SESSION ? 1 : 0;

  g_variant_builder_init (&b, G_VARIANT_TYPE_TUPLE);
  g_variant_builder_add (&b, "o", limen_request_get_path (call->request));
  if (call->session)
    g_variant_builder_add (&b, "o", limen_session_get_path (call->session));
  g_variant_builder_add (&b, "s", limen_app_info_get_id (call->info));
  for (guint i = first; i < n; i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (middle, i);

      /* The caller's options dict is replaced by the filtered one below. */
      if (call->impl_middle == NULL && g_variant_is_of_type (child, G_VARIANT_TYPE_VARDICT) && i == n - 1)
        continue;
      g_variant_builder_add_value (&b, child);
    }
  if (!(call->row->flags & LIMEN_DRIVER_NO_IMPL_OPTIONS))
    g_variant_builder_add_value (&b, call->options);
  return g_variant_builder_end (&b);
}

static void
on_impl_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LimenCall *call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) results = NULL;
  g_autoptr(GVariant) reply = limen_backend_call_finish (result, NULL, &error);

  if (!limen_request_is_open (call->request) || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      call_free (call);
      return;
    }
  if ((call->row->flags & LIMEN_DRIVER_KEEP_OPEN) && reply)
    {
      /* The open Request is the outcome (an inhibition lives as long as it); the caller is
       * told it holds, as the reference does (ashpd waits for this Response). */
      if (call->request)
        limen_request_emit_response_keep_open (call->request, LIMEN_RESPONSE_SUCCESS, NULL);
      call_free (call);
      return;
    }
  call->response = limen_driver_reply_response (reply, &results);
  g_clear_pointer (&call->results, g_variant_unref);
  call->results = g_steal_pointer (&results);
  call->step = 0;
  call->phase = PHASE_POST;
  call_next (call);
}

static void
call_impl (LimenCall *call)
{
  const LimenDriverMethod *row = call->row;

  if (row->impl_method == NULL)
    {
      call->phase = PHASE_POST;
      call->step = 0;
      if (row->run)
        {
          /* The in-process impl: its step sets the response; going on means the post-steps. */
          call->response = LIMEN_RESPONSE_OTHER;
          call->phase = PHASE_IMPL;
          run_step (call, row->run);
          return;
        }
      call_next (call);
      return;
    }
  limen_backend_call_async (call->context, call->request, call->backend, row->impl_interface, row->impl_method,
                            impl_parameters (call), call->impl_fds,
                            row->timeout_ms > 0 ? row->timeout_ms : G_MAXINT, on_impl_reply, call);
}

/* Create the Request (and Session) and answer the handle. FALSE: the caller got an error. */
static gboolean
call_create (LimenCall *call)
{
  const LimenDriverMethod *row = call->row;
  g_autoptr(GError) error = NULL;
  const char *backend = NULL;

  if (row->impl_interface && (backend = limen_backend_find (call->context, row->impl_interface, &error)) == NULL)
    goto fail;
  call->backend = g_strdup (backend);
  if ((row->kind == LIMEN_CALL_CREATE_SESSION || row->kind == LIMEN_CALL_NEW_SESSION) &&
      (call->session = limen_session_new (call->invocation, call->info, call->caller_options, &error)) == NULL)
    goto fail;
  if (call->session && backend)
    limen_session_set_backend (call->session, backend);
  if (row->kind == LIMEN_CALL_NEW_SESSION)
    return TRUE;   /* answered after the run step */
  call->request = limen_request_new (call->invocation, call->info, call->caller_options, &error);
  if (call->request == NULL)
    goto fail;
  if (backend)
    limen_request_set_backend (call->request, backend);
  if (row->flags & LIMEN_DRIVER_UNATTENDED)
    limen_request_set_unattended (call->request, TRUE);
  g_dbus_method_invocation_return_value (g_steal_pointer (&call->invocation),
                                         g_variant_new ("(o)", limen_request_get_path (call->request)));
  return TRUE;

fail:
  /* A session this call created dies with it; one the call only used is the caller's. */
  if (call->session && call->row->kind != LIMEN_CALL_IN_SESSION)
    limen_session_discard (call->session);
  limen_call_return_error (call, error);
  return FALSE;
}

/* The next pre- or post-step of the current phase, or the next phase. */
static const LimenStep *
next_step (LimenCall *call)
{
  const LimenStep *list = call->phase == PHASE_POST ? call->row->post : call->row->pre;
  LimenStepWhen when = call->phase == PHASE_BEFORE_HANDLE ? LIMEN_STEP_BEFORE_HANDLE : LIMEN_STEP_AFTER_HANDLE;

  if (list == NULL || call->phase == PHASE_IMPL || call->phase == PHASE_DONE)
    return NULL;
  for (; list[call->step].func; call->step++)
    if (call->phase == PHASE_POST || list[call->step].when == when)
      return &list[call->step];
  return NULL;
}

static void
call_next (LimenCall *call)
{
  const LimenStep *step = next_step (call);

  if (step)
    {
      if (call->phase != PHASE_POST || call->response == LIMEN_RESPONSE_SUCCESS)
        {
          run_step (call, step->func);
          return;
        }
    }
  call->step = 0;
  switch (call->phase)
    {
    case PHASE_BEFORE_HANDLE:
      if (!call_create (call))
        {
          call_free (call);
          return;
        }
      if (call->row->kind == LIMEN_CALL_NEW_SESSION)
        {
          /* A bare Session: its in-process set-up, then its handle. */
          call->phase = PHASE_DONE;
          if (call->row->run)
            run_step (call, call->row->run);
          else
            {
              g_dbus_method_invocation_return_value (g_steal_pointer (&call->invocation),
                                                     g_variant_new ("(o)", limen_session_get_path (call->session)));
              call_free (call);
            }
          return;
        }
      call->phase = PHASE_AFTER_HANDLE;
      call_next (call);
      return;
    case PHASE_AFTER_HANDLE:
      call->phase = PHASE_IMPL;
      call_impl (call);
      return;
    case PHASE_POST:
    case PHASE_IMPL:
      call_finish (call);
      return;
    case PHASE_DONE:
      /* The run step of a bare Session went well. */
      g_dbus_method_invocation_return_value (g_steal_pointer (&call->invocation),
                                             g_variant_new ("(o)", limen_session_get_path (call->session)));
      call_free (call);
      return;
    }
}

/* The options dict of a method is its last a{sv} in-argument (not always the last argument:
 * InputCapture.SetPointerBarriers has its barriers and zone_set after it). */
static GVariant *
find_caller_options (GVariant *parameters)
{
  for (guint i = g_variant_n_children (parameters); i > 0; i--)
    {
      g_autoptr(GVariant) arg = g_variant_get_child_value (parameters, i - 1);

      if (g_variant_is_of_type (arg, G_VARIANT_TYPE_VARDICT))
        return g_steal_pointer (&arg);
    }
  return g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
}

/* Steps 1, 2 and the session look-up; then the rest runs through call_next. */
static void
call_start (const Binding *binding, GDBusMethodInvocation *invocation)
{
  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_invocation (invocation);
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GError) error = NULL;
  GDBusMessage *message = g_dbus_method_invocation_get_message (invocation);
  LimenCall *call;

  if (info == NULL)
    return;   /* answered */
  call = g_new0 (LimenCall, 1);
  call->row = binding->row;
  call->context = binding->context;
  call->invocation = invocation;   /* the handler's reference: answering consumes it */
  call->info = g_steal_pointer (&info);
  call->sender = g_strdup (g_dbus_method_invocation_get_sender (invocation));
  call->parameters = g_variant_ref (g_dbus_method_invocation_get_parameters (invocation));
  call->fd_list = g_dbus_message_get_unix_fd_list (message) ? g_object_ref (g_dbus_message_get_unix_fd_list (message)) : NULL;
  call->caller_options = find_caller_options (call->parameters);
  /* A bad handle token is the first thing refused, before the options and the arguments,
   * as in the reference (whose handlers make the Request first). */
  if ((call->row->kind != LIMEN_CALL_NEW_SESSION &&
       !limen_handle_token_check (call->caller_options, "handle_token", &error)) ||
      ((call->row->kind == LIMEN_CALL_CREATE_SESSION || call->row->kind == LIMEN_CALL_NEW_SESSION) &&
       !limen_handle_token_check (call->caller_options, "session_handle_token", &error)))
    {
      call_refuse (call, error);
      return;
    }
  if (call->row->options && (call->row->flags & LIMEN_DRIVER_LENIENT_OPTIONS))
    limen_options_filter_lenient (call->caller_options, &b, call->row->method, call->row->options);
  else if (call->row->options && !limen_options_filter (call->caller_options, &b, &error, call->row->options, NULL))
    {
      call_refuse (call, error);
      return;
    }
  call->options = g_variant_ref_sink (g_variant_builder_end (&b));
  if (call->row->kind == LIMEN_CALL_IN_SESSION)
    {
      g_autoptr(GVariant) handle = limen_call_get_arg (call, 0);

      call->session = limen_driver_lookup_session (invocation, g_variant_get_string (handle, NULL), &error);
      if (call->session == NULL)
        {
          call_refuse (call, error);
          return;
        }
    }
  call->phase = PHASE_BEFORE_HANDLE;
  call_next (call);
}

static void
driver_marshal (GClosure *closure, GValue *return_value, guint n_param_values, const GValue *param_values,
                gpointer invocation_hint, gpointer marshal_data)
{
  /* handle-* signals: (object, invocation, [fd_list,] in-arguments...) → gboolean. */
  call_start (closure->data, g_value_get_object (&param_values[1]));
  g_value_set_boolean (return_value, TRUE);
}

static void
binding_free (gpointer data, GClosure *closure)
{
  g_free (data);
}

gboolean
limen_driver_export (GDBusInterfaceSkeleton *skeleton, LimenPortalContext *context,
                     const LimenDriverMethod *methods)
{
  for (const LimenDriverMethod *row = methods; row->method; row++)
    {
      g_autofree char *signal = limen_daemon_handler_signal (row->method);
      Binding *binding;
      GClosure *closure;

      if (g_signal_lookup (signal, G_OBJECT_TYPE (skeleton)) == 0)
        {
          g_critical ("%s has no method %s", G_OBJECT_TYPE_NAME (skeleton), row->method);
          return FALSE;
        }
      binding = g_new0 (Binding, 1);
      binding->row = row;
      binding->context = context;
      closure = g_closure_new_simple (sizeof (GClosure), binding);
      g_closure_add_finalize_notifier (closure, binding, binding_free);
      g_closure_set_marshal (closure, driver_marshal);
      g_signal_connect_closure (skeleton, signal, closure, FALSE);
    }
  return TRUE;
}

GDBusInterfaceSkeleton *
limen_driver_offer (LimenPortalContext *context, gpointer skeleton, guint version, const LimenDriverMethod *methods)
{
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (skeleton));
  g_object_set (skeleton, "version", version, NULL);
  if (methods)
    limen_driver_export (G_DBUS_INTERFACE_SKELETON (skeleton), context, methods);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
