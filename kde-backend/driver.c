/* Limen — limen-kde's driver: the one way a dialog method checks, opens, answers and
 * closes (driver.h says in what order).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver.h"

#include <gio/gunixfdlist.h>

#include "daemon.h"
#include "errors.h"

#define HANDLE_ARG 0

struct _LimenKdeCall {
  int                    refs;        /* the driver's while it runs, the Request's, the report's */
  const LimenKdeMethod  *row;
  GDBusMethodInvocation *invocation;  /* NULL once answered */
  GDBusConnection       *connection;  /* the frontend's */
  GUnixFDList           *fd_list;     /* the fds that came with the call, or NULL */
  GVariant              *parameters;  /* the in-arguments, which the borrowed strings point into */
  GVariant              *options;     /* checked against the row's table */
  LimenKdeRequest       *request;     /* NULL once closed or finished */
  LimenQtDialog         *dialog;      /* the shim's, while it is open */
  gpointer               data;
  GDestroyNotify         destroy;
};

static void
call_unref (LimenKdeCall *call)
{
  if (--call->refs > 0)
    return;
  if (call->destroy)
    call->destroy (call->data);
  g_clear_object (&call->invocation);
  g_clear_object (&call->connection);
  g_clear_object (&call->fd_list);
  g_clear_pointer (&call->parameters, g_variant_unref);
  g_clear_pointer (&call->options, g_variant_unref);
  g_free (call);
}

/* Answer the method once; later answers (a report after Close) are dropped. */
static void
call_reply (LimenKdeCall *call, guint response, GVariant *results)
{
  g_autoptr(GVariant) owned = results ? g_variant_ref_sink (results) : NULL;
  GDBusMethodInvocation *invocation = g_steal_pointer (&call->invocation);

  if (!invocation)
    return;
  if (call->row->flags & LIMEN_KDE_METHOD_REPLY_RESPONSE_ONLY)
    g_dbus_method_invocation_return_value (invocation, g_variant_new ("(u)", response));
  else
    limen_kde_reply_response (invocation, response, g_steal_pointer (&owned));
}

/* Request.Close, or the frontend left: the dialog goes, the caller hears 2. */
static void
on_request_closed (LimenKdeRequest *request, gpointer user_data)
{
  LimenKdeCall *call = user_data;

  call->request = NULL;
  call_reply (call, LIMEN_QT_RESPONSE_OTHER, NULL);
  if (call->dialog)
    {
      /* A closed dialog reports nothing more: its report's reference goes with it. */
      limen_kde_shim_get (NULL)->limen_qt_close (g_steal_pointer (&call->dialog));
      call_unref (call);
    }
  call_unref (call);   /* the Request's */
}

static gboolean
check_call (LimenKdeCall *call, GError **error)
{
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  gsize n = g_variant_n_children (call->parameters);
  /* The options dict is the last argument; a row without a table has none. */
  g_autoptr(GVariant) options = call->row->options ? g_variant_get_child_value (call->parameters, n - 1) : NULL;

  if (!limen_kde_check_request_args (limen_kde_call_get_string (call, HANDLE_ARG),
                                     limen_kde_call_get_app_id (call), limen_kde_call_get_parent_window (call),
                                     error) ||
      (call->row->options && !limen_options_filter (options, &filtered, error, call->row->options, NULL)))
    return FALSE;
  call->options = g_variant_ref_sink (g_variant_builder_end (&filtered));
  return !call->row->check || call->row->check (call, error);
}

/* The shim as the row needs it; a row that fetches its own gets NULL. */
static gboolean
get_shim (const LimenKdeMethod *row, const LimenKdeShim **shim, GError **error)
{
  if (row->flags & LIMEN_KDE_METHOD_OWN_SHIM)
    *shim = NULL;
  else if (row->flags & LIMEN_KDE_METHOD_NO_DIALOG)
    *shim = limen_kde_shim_get (error);
  else
    *shim = limen_kde_shim_get_for_dialog (error);
  return *shim || (row->flags & LIMEN_KDE_METHOD_OWN_SHIM);
}

static void
call_start (const LimenKdeMethod *row, GDBusMethodInvocation *invocation)
{
  g_autoptr(GError) error = NULL;
  LimenKdeCall *call = g_new0 (LimenKdeCall, 1);
  const LimenKdeShim *shim = NULL;
  GUnixFDList *fd_list;

  call->refs = 1;
  call->row = row;
  call->invocation = invocation;   /* the handler's reference: answering consumes it */
  call->connection = g_object_ref (g_dbus_method_invocation_get_connection (invocation));
  fd_list = g_dbus_message_get_unix_fd_list (g_dbus_method_invocation_get_message (invocation));
  call->fd_list = fd_list ? g_object_ref (fd_list) : NULL;
  call->parameters = g_variant_ref (g_dbus_method_invocation_get_parameters (invocation));
  if (!check_call (call, &error) || !get_shim (row, &shim, &error) ||
      !(call->request = limen_kde_request_new (invocation, limen_kde_call_get_string (call, HANDLE_ARG),
                                               on_request_closed, call, &error)))
    {
      limen_invocation_return_gerror (g_steal_pointer (&call->invocation), error);
      call_unref (call);
      return;
    }
  call->refs += 2;   /* the Request's, and the report's the dialog owes */
  /* A dialog that reported while it opened has finished the call already. */
  if (!row->open (call, shim, row->done) && call->request)
    {
      g_debug ("%s: %s", row->method, row->failed);
      g_dbus_method_invocation_return_error_literal (g_steal_pointer (&call->invocation), LIMEN_ERROR,
                                                     LIMEN_ERROR_FAILED, row->failed);
      limen_kde_request_finish (g_steal_pointer (&call->request));
      call->refs -= 2;
    }
  call_unref (call);
}

void
limen_kde_call_finish (LimenKdeCall *call, int response, GVariant *results)
{
  g_debug ("%s answered %d", call->row->method, response);
  call_reply (call, (guint) response, results);
  call->dialog = NULL;
  if (call->request)
    {
      limen_kde_request_finish (g_steal_pointer (&call->request));
      call_unref (call);   /* the Request's */
    }
  call_unref (call);     /* the report's */
}

LimenKdeCall *
limen_kde_call_lookup (GDBusMethodInvocation *invocation, const char *handle, const char *method)
{
  LimenKdeRequest *request = limen_kde_request_lookup (g_dbus_method_invocation_get_sender (invocation), handle);
  LimenKdeCall *call;

  /* Only the driver's requests carry a LimenKdeCall. */
  if (!request || limen_kde_request_get_close_func (request) != on_request_closed)
    return NULL;
  call = limen_kde_request_get_data (request);
  return g_str_equal (call->row->method, method) && call->dialog ? call : NULL;
}

LimenQtDialog *
limen_kde_call_get_dialog (LimenKdeCall *call)
{
  return call->dialog;
}

void
limen_kde_call_dialog_closed (LimenKdeCall *call)
{
  call->dialog = NULL;
}

GUnixFDList *
limen_kde_call_get_fd_list (LimenKdeCall *call)
{
  return call->fd_list;
}

gboolean
limen_kde_call_opened (LimenKdeCall *call, LimenQtDialog *dialog)
{
  call->dialog = dialog;
  return dialog != NULL;
}

const char *
limen_kde_call_get_string (LimenKdeCall *call, gsize index)
{
  g_autoptr(GVariant) child = g_variant_get_child_value (call->parameters, index);

  /* s or o; the string lives in the parameters, which the call holds. */
  return g_variant_get_string (child, NULL);
}

/* (handle, app_id, parent_window, ...) unless the row says otherwise. */
const char *
limen_kde_call_get_app_id (LimenKdeCall *call)
{
  return limen_kde_call_get_string (call, (call->row->flags & LIMEN_KDE_METHOD_PARENT_WINDOW_FIRST) ? 2 : 1);
}

const char *
limen_kde_call_get_parent_window (LimenKdeCall *call)
{
  if (call->row->flags & LIMEN_KDE_METHOD_NO_PARENT_WINDOW)
    return "";
  return limen_kde_call_get_string (call, (call->row->flags & LIMEN_KDE_METHOD_PARENT_WINDOW_FIRST) ? 1 : 2);
}

GDBusConnection *
limen_kde_call_get_connection (LimenKdeCall *call)
{
  return call->connection;
}

GVariant *
limen_kde_call_get_options (LimenKdeCall *call)
{
  return call->options;
}

GVariant *
limen_kde_call_get_arg (LimenKdeCall *call, gsize index)
{
  return g_variant_get_child_value (call->parameters, index);
}

void
limen_kde_call_window (LimenKdeCall *call, LimenQtWindow *window)
{
  gboolean modal = TRUE;

  g_variant_lookup (call->options, "modal", "b", &modal);
  window->parent_window = limen_kde_call_get_parent_window (call);
  window->app_id = limen_kde_call_get_app_id (call);
  window->modal = modal;
}

void
limen_kde_call_set_data (LimenKdeCall *call, gpointer data, GDestroyNotify destroy)
{
  if (call->destroy)
    call->destroy (call->data);
  call->data = data;
  call->destroy = destroy;
}

gpointer
limen_kde_call_get_data (LimenKdeCall *call)
{
  return call->data;
}

static void
driver_marshal (GClosure *closure, GValue *return_value, guint n_param_values, const GValue *param_values,
                gpointer invocation_hint, gpointer marshal_data)
{
  /* handle-* signals: (object, invocation, in-arguments...) → gboolean; the arguments are
   * read from the invocation, so one marshaller serves every row. */
  call_start (closure->data, g_value_get_object (&param_values[1]));
  g_value_set_boolean (return_value, TRUE);
}

GDBusInterfaceSkeleton *
limen_kde_driver_offer (gpointer skeleton, const LimenKdeMethod *methods)
{
  for (const LimenKdeMethod *row = methods; row->method; row++)
    {
      g_autofree char *signal = limen_daemon_handler_signal (row->method);
      GClosure *closure;

      if (g_signal_lookup (signal, G_OBJECT_TYPE (skeleton)) == 0)
        {
          g_critical ("%s has no method %s", G_OBJECT_TYPE_NAME (skeleton), row->method);
          continue;
        }
      closure = g_closure_new_simple (sizeof (GClosure), (gpointer) row);
      g_closure_set_marshal (closure, driver_marshal);
      g_signal_connect_closure (skeleton, signal, closure, FALSE);
    }
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
