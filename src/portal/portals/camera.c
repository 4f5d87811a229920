/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Camera access is a PipeWire remote on which only camera nodes are visible. Whether a
 * camera exists comes from the PipeWire watch (camera-monitor.c); whether an app may use one
 * is the permission store's "devices" / "camera" entry, the same one WirePlumber's portal
 * access script reads, so the portal and PipeWire never disagree about an app.
 *
 * Every app, sandboxed or not, is asked once through the backend's Access dialog and the
 * answer is stored (host apps without an app id share the entry of the empty id, as in the
 * reference); OpenPipeWireRemote then needs a stored "yes". A refused AccessCamera answers
 * Response 1, as the reference does.
 *
 * The answer can be taken back later (the permissions page, flatpak permission-reset,
 * GNOME's or Plasma 6's pages): the store's Changed signal then ends every camera remote the
 * app holds, at once (hiding the nodes would not do: WirePlumber shows a new camera to a
 * remote by what the store said when the remote was made). */
#include "portal.h"

#include <glib/gi18n.h>
#include <unistd.h>

#include "access.h"
#include "camera-monitor.h"
#include "driver.h"
#include "lockdown.h"
#include "pipewire-remote.h"

#define TABLE "devices"
#define DEVICE "camera"
#define STORE_TIMEOUT_MS 5000

static LimenDbusPortalCamera *skeleton;

static const LimenOption access_camera_options[] = {
  { "handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

/* The specification defines no options for OpenPipeWireRemote. */
static const LimenOption open_remote_options[] = {
  { NULL }
};

/* Lockdown's disable-camera refuses the call itself, as the reference does. */
static void
check_lockdown (LimenCall *call, GTask *task)
{
  limen_lockdown_step (call, task, "disable-camera", "Camera access is disabled");
}

typedef struct {
  LimenCall *call;
  GTask     *task;
} AccessStep;

static void
on_access_checked (GObject *source, GAsyncResult *result, gpointer user_data)
{
  AccessStep *step = user_data;

  limen_call_set_data (step->call, GINT_TO_POINTER (limen_access_check_finish (result, NULL)), NULL);
  g_task_return_boolean (step->task, TRUE);
  g_object_unref (step->task);
  g_free (step);
}

/* After the handle: the stored answer, or the person through the Access dialog. The decision
 * goes to the run step (a refusal is Response 1, not the driver's Response 2). */
static void
check_access (LimenCall *call, GTask *task)
{
  AccessStep *step = g_new0 (AccessStep, 1);

  step->call = call;
  step->task = g_object_ref (task);
  limen_access_check_async (limen_call_get_context (call), limen_call_get_request (call), "", TABLE, DEVICE,
                            LIMEN_ACCESS_ASK,
                            &(LimenAccessDialog) {
                              .title = _("Allow this app to use the camera?"),
                              .body = _("It will see and record what your cameras show until you "
                                        "take the permission back."),
                              .grant_label = _("Allow"),
                              .deny_label = _("Deny"),
                              .icon = "camera-web-symbolic",
                            },
                            on_access_checked, step);
}

static const LimenStep access_pre[] = {
  { check_lockdown, LIMEN_STEP_BEFORE_HANDLE },
  { check_access, LIMEN_STEP_AFTER_HANDLE },
  { NULL }
};

static void
answer_access (LimenCall *call, GTask *task)
{
  gboolean allowed = GPOINTER_TO_INT (limen_call_get_data (call));

  g_debug ("Camera access for '%s': %s", limen_app_info_get_id (limen_call_get_app_info (call)),
           allowed ? "allowed" : "refused");
  limen_call_set_results (call, allowed ? LIMEN_RESPONSE_SUCCESS : LIMEN_RESPONSE_CANCELLED, NULL);
  g_task_return_boolean (task, TRUE);
}

static const LimenDriverMethod camera_methods[] = {
  { .method = "AccessCamera", .options = access_camera_options, .pre = access_pre, .run = answer_access },
  { NULL }
};

/* One OpenPipeWireRemote in flight. */
typedef struct {
  GDBusMethodInvocation *invocation;
  LimenPortalContext    *context;
  LimenAppInfo          *info;
} RemoteCall;

static void
remote_call_finish (RemoteCall *r, GError *error)
{
  if (error)
    limen_invocation_return_gerror (r->invocation, error);
  g_clear_error (&error);
  limen_app_info_unref (r->info);
  g_free (r);
}

/* Remotes handed out, by the app id their permission is stored under: app id → GArray of
 * PipeWire client serials. At most REMOTES_PER_APP per app (older ones are forgotten: an app
 * looping OpenPipeWireRemote must not grow this daemon). */
#define REMOTES_PER_APP 32
static GHashTable *remotes;

static void
remember_remote (const char *app_id, guint64 client)
{
  GArray *clients;

  if (remotes == NULL)
    remotes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_array_unref);
  clients = g_hash_table_lookup (remotes, app_id);
  if (clients == NULL)
    {
      clients = g_array_new (FALSE, FALSE, sizeof (guint64));
      g_hash_table_insert (remotes, g_strdup (app_id), clients);
    }
  if (clients->len >= REMOTES_PER_APP)
    {
      limen_pipewire_remote_revoke (g_array_index (clients, guint64, 0), NULL, 0);
      g_array_remove_index (clients, 0);
    }
  g_array_append_val (clients, client);
}

/* (devices, camera) changed: the remotes of an app without a "yes" now are ended. */
static void
on_store_changed (const char *table, const char *id, GVariant *perms, gpointer user_data)
{
  GHashTableIter iter;
  const char *app_id;
  GArray *clients;

  if (remotes == NULL || !g_str_equal (id, DEVICE))
    return;
  g_hash_table_iter_init (&iter, remotes);
  while (g_hash_table_iter_next (&iter, (gpointer *) &app_id, (gpointer *) &clients))
    {
      g_autofree const char **stored = limen_permission_row (perms, app_id);

      if (stored && stored[0] && g_str_equal (stored[0], "yes"))
        continue;
      g_debug ("Camera taken back from '%s': %u remote(s) ended", app_id, clients->len);
      for (guint i = 0; i < clients->len; i++)
        limen_pipewire_remote_end (g_array_index (clients, guint64, i));
      g_hash_table_iter_remove (&iter);
    }
}

static void
on_remote_opened (GObject *source, GAsyncResult *result, gpointer user_data)
{
  RemoteCall *r = user_data;
  GError *error = NULL;
  g_autoptr(GUnixFDList) fds = NULL;
  guint64 client = 0;
  int fd = limen_pipewire_remote_open_finish (result, &client, &error);
  int index = -1;

  if (fd < 0)
    {
      remote_call_finish (r, error);
      return;
    }
  remember_remote (limen_app_info_get_id (r->info), client);
  fds = g_unix_fd_list_new ();
  index = g_unix_fd_list_append (fds, fd, &error);
  close (fd);
  if (index < 0)
    {
      remote_call_finish (r, error);
      return;
    }
  g_debug ("Camera remote for '%s' (PipeWire remote %" G_GUINT64_FORMAT ")", limen_app_info_get_id (r->info), client);
  limen_dbus_portal_camera_complete_open_pipewire_remote (skeleton, r->invocation, fds, g_variant_new_handle (index));
  remote_call_finish (r, NULL);
}

static gboolean
open_remote_now (gpointer data)
{
  RemoteCall *r = data;
  guint n_nodes;
  const guint32 *nodes = limen_camera_monitor_get_nodes (&n_nodes);
  const char *app_id = limen_app_info_get_id (r->info);

  /* An unsandboxed caller is tagged with the empty id, which WirePlumber treats as such. */
  limen_pipewire_remote_open_for_app_async (nodes, n_nodes, limen_app_info_is_host (r->info) ? "" : app_id,
                                            "Camera", on_remote_opened, r);
  return G_SOURCE_REMOVE;
}

static void when_answered (GSourceFunc func, gpointer data);

/* The camera nodes go into the remote's permissions: wait until the watch knows them. */
static void
open_remote (RemoteCall *r)
{
  when_answered (open_remote_now, r);
}

static void
on_permission (GObject *source, GAsyncResult *result, gpointer user_data)
{
  RemoteCall *r = user_data;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  g_autoptr(GVariant) perms = NULL;
  g_autofree const char **strv = NULL;
  const char *app_id = limen_app_info_get_id (r->info);
  const char *stored = NULL;
  gboolean allowed;

  if (reply)
    {
      g_variant_get_child (reply, 0, "@a{sas}", &perms);
      if (g_variant_lookup (perms, app_id, "^a&s", &strv) && strv[0])
        stored = strv[0];
    }
  /* Every caller needs a stored "yes" (a host app without an id: the empty id's), as in the
   * reference: AccessCamera is where it is given. */
  allowed = g_strcmp0 (stored, "yes") == 0;
  if (!allowed)
    {
      g_debug ("Camera remote refused to '%s' (stored: %s)", app_id, stored ? stored : "nothing");
      remote_call_finish (r, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                  "This app is not allowed to use the camera"));
      return;
    }
  open_remote (r);
}

static void
on_lockdown (GObject *source, GAsyncResult *result, gpointer user_data)
{
  RemoteCall *r = user_data;

  if (limen_lockdown_query_finish (result))
    {
      remote_call_finish (r, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                  "Camera access is disabled"));
      return;
    }
  g_dbus_connection_call (r->context->connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME, "Lookup",
                          g_variant_new ("(ss)", TABLE, DEVICE), G_VARIANT_TYPE ("(a{sas}v)"),
                          G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, NULL, on_permission, r);
}

static gboolean
handle_open_pipewire_remote (LimenDbusPortalCamera *object, GDBusMethodInvocation *invocation,
                             GUnixFDList *fd_list, GVariant *options, LimenPortalContext *context)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GError) error = NULL;
  LimenAppInfo *info;
  RemoteCall *r;

  if (!limen_options_filter (options, &b, &error, open_remote_options, NULL))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  info = limen_app_info_get_for_invocation (invocation);
  if (info == NULL)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  r = g_new0 (RemoteCall, 1);
  r->invocation = invocation;
  r->context = context;
  r->info = info;
  limen_lockdown_query_async (context, "disable-camera", on_lockdown, r);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* The PipeWire watch starts with the first use of this interface, not with the daemon: a
 * session where no app asks about cameras never pays for a PipeWire context. Until the watch
 * has its first answer, property reads and OpenPipeWireRemote wait for it (bounded, in case
 * PipeWire hangs), so the first reader never sees a camera that is there as absent. */
#define FIRST_ANSWER_TIMEOUT_MS 3000
#define PORTAL_PATH "/org/freedesktop/portal/desktop"
#define CAMERA_IFACE "org.freedesktop.portal.Camera"

typedef struct {
  GSourceFunc func;
  gpointer    data;
} Waiter;

static gint watch_started;          /* atomic: set once by whoever starts the watch */
static gint answered;               /* atomic: the watch gave its first answer */
static GArray *waiters;             /* main thread: Waiter, run at the first answer */
static GDBusConnection *bus;

static void
flush_waiters (void)
{
  g_autoptr(GArray) run = waiters;

  g_atomic_int_set (&answered, TRUE);
  waiters = NULL;
  for (guint i = 0; run && i < run->len; i++)
    g_array_index (run, Waiter, i).func (g_array_index (run, Waiter, i).data);
}

static void
on_cameras_changed (const guint32 *nodes, guint n_nodes, gpointer user_data)
{
  gboolean present = n_nodes > 0;

  if (present != limen_dbus_portal_camera_get_is_camera_present (skeleton))
    g_message ("Camera %s", present ? "present" : "absent");
  limen_dbus_portal_camera_set_is_camera_present (skeleton, present);
  if (!g_atomic_int_get (&answered))
    flush_waiters ();
}

static gboolean
on_first_answer_timeout (gpointer user_data)
{
  if (!g_atomic_int_get (&answered))
    {
      g_message ("PipeWire did not list its nodes in time: answering without cameras for now");
      flush_waiters ();
    }
  return G_SOURCE_REMOVE;
}

/* Main thread. */
static gboolean
start_watch (gpointer user_data)
{
  static gboolean done;

  if (done)
    return G_SOURCE_REMOVE;
  done = TRUE;
  g_debug ("First use of the Camera portal: starting the PipeWire camera watch");
  g_timeout_add (FIRST_ANSWER_TIMEOUT_MS, on_first_answer_timeout, NULL);
  limen_camera_monitor_start (on_cameras_changed, NULL);
  return G_SOURCE_REMOVE;
}

/* Main thread: run @func now if the watch has answered, else once it has. */
static void
when_answered (GSourceFunc func, gpointer data)
{
  if (g_atomic_int_get (&answered))
    {
      func (data);
      return;
    }
  if (waiters == NULL)
    waiters = g_array_new (FALSE, FALSE, sizeof (Waiter));
  g_array_append_val (waiters, ((Waiter) { func, data }));
  start_watch (NULL);
}

/* A held Properties.Get / GetAll, answered from the skeleton's values. */
static gboolean
answer_held_read (gpointer data)
{
  g_autoptr(GDBusMessage) call = data;
  g_autoptr(GVariant) all = g_dbus_interface_skeleton_get_properties (G_DBUS_INTERFACE_SKELETON (skeleton));
  g_autoptr(GDBusMessage) reply = NULL;
  g_autoptr(GVariant) value = NULL;
  const char *name = NULL;

  if (g_strcmp0 (g_dbus_message_get_member (call), "GetAll") == 0)
    {
      reply = g_dbus_message_new_method_reply (call);
      g_dbus_message_set_body (reply, g_variant_new ("(@a{sv})", all));
    }
  else
    {
      g_variant_get (g_dbus_message_get_body (call), "(&s&s)", NULL, &name);
      value = g_variant_lookup_value (all, name, NULL);
      if (value)
        {
          reply = g_dbus_message_new_method_reply (call);
          g_dbus_message_set_body (reply, g_variant_new ("(v)", value));
        }
      else
        reply = g_dbus_message_new_method_error (call, "org.freedesktop.DBus.Error.InvalidArgs",
                                                 "No such property %s", name);
    }
  g_dbus_connection_send_message (bus, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, NULL, NULL);
  return G_SOURCE_REMOVE;
}

static gboolean
hold_read (gpointer data)
{
  when_answered (answer_held_read, data);
  return G_SOURCE_REMOVE;
}

/* Is @message a Properties.Get/GetAll of this interface (with the right signature)? */
static gboolean
is_property_read (GDBusMessage *message)
{
  const char *member = g_dbus_message_get_member (message);
  GVariant *body = g_dbus_message_get_body (message);
  const char *iface = NULL;

  if (g_strcmp0 (g_dbus_message_get_interface (message), "org.freedesktop.DBus.Properties") != 0 || body == NULL)
    return FALSE;
  if (g_strcmp0 (member, "GetAll") == 0 && g_variant_is_of_type (body, G_VARIANT_TYPE ("(s)")))
    g_variant_get (body, "(&s)", &iface);
  else if (g_strcmp0 (member, "Get") == 0 && g_variant_is_of_type (body, G_VARIANT_TYPE ("(ss)")))
    g_variant_get (body, "(&s&s)", &iface, NULL);
  return g_strcmp0 (iface, CAMERA_IFACE) == 0;
}

/* GDBus worker thread, for every incoming message: notice the first use of this interface. */
static GDBusMessage *
camera_filter (GDBusConnection *connection, GDBusMessage *message, gboolean incoming, gpointer user_data)
{
  gboolean read;

  if (!incoming || g_atomic_int_get (&answered) ||
      g_dbus_message_get_message_type (message) != G_DBUS_MESSAGE_TYPE_METHOD_CALL ||
      g_strcmp0 (g_dbus_message_get_path (message), PORTAL_PATH) != 0)
    return message;
  read = is_property_read (message);
  if (!read && g_strcmp0 (g_dbus_message_get_interface (message), CAMERA_IFACE) != 0)
    return message;
  if (read)
    {
      /* Ours now: answered on the main thread once the watch has spoken. */
      g_idle_add (hold_read, message);
      return NULL;
    }
  if (g_atomic_int_compare_and_exchange (&watch_started, FALSE, TRUE))
    g_idle_add (start_watch, NULL);
  return message;
}

GDBusInterfaceSkeleton *
limen_camera_new (LimenPortalContext *context)
{
  skeleton = limen_dbus_portal_camera_skeleton_new ();
  limen_driver_offer (context, skeleton, 1, camera_methods);
  limen_dbus_portal_camera_set_is_camera_present (skeleton, FALSE);
  g_signal_connect (skeleton, "handle-open-pipewire-remote", G_CALLBACK (handle_open_pipewire_remote), context);
  bus = context->connection;
  g_dbus_connection_add_filter (bus, camera_filter, NULL, NULL);
  limen_permission_store_watch (bus, TABLE, on_store_changed, NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
