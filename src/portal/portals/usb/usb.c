/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Usb: an app sees the USB devices its sandbox allows (usb-rules.c), hears about them
 * through a session, and asks to open some; the backend asks the person, and this daemon
 * opens the device nodes itself and hands the fds over, a few per FinishAcquireDevices.
 *
 * Permission store, table "usb" (the reference implementation's names, so answers given
 * to either count for both): id "usb" = "no" shuts the portal for the app; id
 * "device:VID/PID/SERIAL" = "yes" means the person allowed that device (no dialog next
 * time), "no" that they refused it (hidden from the app from then on). A host app sees
 * every device, as nothing keeps it from reading /sys itself; an app without an id (an
 * unregistered host process) gets nothing remembered and is asked every time. */
#include "portal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <gio/gunixfdlist.h>

#include "backend.h"
#include "driver.h"
#include "option-tables.h"
#include "permission-store.h"
#include "usb.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Usb"
#define PORTAL_IFACE "org.freedesktop.portal.Usb"
#define TABLE "usb"
#define PORTAL_ID "usb"
#define MAX_ACQUIRE 64        /* devices in one AcquireDevices */
#define MAX_RELEASE 256       /* ids in one ReleaseDevices */
#define MAX_ID 64             /* portal ids are UUIDs (36 bytes) */
#define FDS_PER_BATCH 8       /* fds in one FinishAcquireDevices reply */
#define STORE_TIMEOUT_MS 3000
#define CACHE_MAX 4096        /* remembered (app, id) permissions */

typedef struct {
  LimenUsbDevice *device;
  gboolean        writable;
} Wanted;

typedef struct {
  int      fd;
  gboolean writable;
} Held;

/* What the portal knows about one bus peer. */
typedef struct {
  char          *name;
  LimenAppInfo  *info;
  LimenUsbRules *rules;
  GHashTable    *held;          /* id → Held: devices the peer acquired */
  guint          asking;        /* id of the AcquireDevices being answered, 0 for none */
  char          *ready_handle;  /* the answered AcquireDevices to finish, or NULL */
  GPtrArray     *ready;         /* Wanted: what is left to hand over */
} Sender;

static LimenPortalContext *portal_context;
static GHashTable *senders;    /* unique name → Sender */
static GHashTable *sessions;   /* session path → LimenSession (not owned; removed when closed) */
static gboolean devices_ready;
static GHashTable *permissions; /* "APP\x1fID" → LimenPermission + 1, until the store changes */

/* ---- peers ---- */

static void
wanted_free (Wanted *w)
{
  limen_usb_device_unref (w->device);
  g_free (w);
}

static void
held_free (Held *h)
{
  if (h->fd >= 0)
    close (h->fd);
  g_free (h);
}

static void
sender_drop_ready (Sender *s)
{
  g_clear_pointer (&s->ready_handle, g_free);
  g_clear_pointer (&s->ready, g_ptr_array_unref);
}

static void
sender_free (Sender *s)
{
  sender_drop_ready (s);
  g_hash_table_unref (s->held);
  limen_usb_rules_free (s->rules);
  limen_app_info_unref (s->info);
  g_free (s->name);
  g_free (s);
}

static Sender *
sender_get (const char *name, LimenAppInfo *info)
{
  Sender *s = g_hash_table_lookup (senders, name);

  if (s)
    return s;
  s = g_new0 (Sender, 1);
  s->name = g_strdup (name);
  s->info = limen_app_info_ref (info);
  s->rules = limen_usb_rules_new_for_app (info);
  s->held = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) held_free);
  g_hash_table_insert (senders, s->name, s);
  return s;
}

/* A peer left: what it held is closed here (its own copies are its own). */
static void
on_peer_vanished (const char *name, gpointer user_data)
{
  if (senders)
    g_hash_table_remove (senders, name);
}

static const char *
app_id_of (Sender *s)
{
  return limen_app_info_get_id (s->info);
}

/* ---- the permission store, read through a cache ----
 * Every listing checks each device against the store; one round trip per device per call
 * would make EnumerateDevices as slow as the store. The cache is dropped whenever the store
 * says table "usb" changed (whoever changed it). */

static char *
cache_key (const char *app_id, const char *id)
{
  return g_strconcat (app_id, "\x1f", id, NULL);
}

/* The store's answer for (@app_id, @id); FALSE when it could not be asked (not cached, so
 * that a stored "no" is not forgotten because the store was briefly away). */
static gboolean
lookup_store (const char *app_id, const char *id, LimenPermission *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) perms = NULL;
  g_autofree const char **strings = NULL;

  *out = LIMEN_PERMISSION_UNSET;
  reply = g_dbus_connection_call_sync (portal_context->connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH,
                                       LIMEN_STORE_NAME, "Lookup",
                                       g_variant_new ("(ss)", TABLE, id), G_VARIANT_TYPE ("(a{sas}v)"),
                                       G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, NULL, &error);
  if (reply == NULL)
    {
      g_autofree char *remote = g_dbus_error_get_remote_error (error);

      if (g_strcmp0 (remote, "org.freedesktop.portal.Error.NotFound") == 0)
        return TRUE;
      g_message ("Permission store not asked about %s: %s", id, error->message);
      return FALSE;
    }
  g_variant_get (reply, "(@a{sas}v)", &perms, NULL);
  if (g_variant_lookup (perms, app_id, "^a&s", &strings) && strings[0])
    *out = limen_permission_from_string (strings[0]);
  return TRUE;
}

static LimenPermission
stored (const char *app_id, const char *id)
{
  g_autofree char *key = cache_key (app_id, id);
  gpointer hit = g_hash_table_lookup (permissions, key);
  LimenPermission p;

  if (hit)
    return GPOINTER_TO_INT (hit) - 1;
  if (!lookup_store (app_id, id, &p))
    return p;
  if (g_hash_table_size (permissions) >= CACHE_MAX)
    g_hash_table_remove_all (permissions);
  g_hash_table_insert (permissions, g_steal_pointer (&key), GINT_TO_POINTER (p + 1));
  return p;
}

static gboolean
store (const char *app_id, const char *id, LimenPermission p, GError **error)
{
  g_autofree char *key = cache_key (app_id, id);

  g_hash_table_remove (permissions, key);
  return limen_permission_store_set (TABLE, id, app_id, p, error);
}

static void
on_store_changed (GDBusConnection *c, const char *sender, const char *path, const char *iface,
                  const char *signal, GVariant *params, gpointer user_data)
{
  g_hash_table_remove_all (permissions);
}

/* The blanket permission: only a stored "no" shuts the portal. */
static gboolean
check_portal_allowed (LimenAppInfo *info, GError **error)
{
  const char *app_id = limen_app_info_get_id (info);

  if (*app_id && stored (app_id, PORTAL_ID) == LIMEN_PERMISSION_NO)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "This app may not use USB devices");
      return FALSE;
    }
  return TRUE;
}

static gboolean
may_see (Sender *s, LimenUsbDevice *device)
{
  const char *app_id = app_id_of (s);

  if (!limen_usb_rules_match (s->rules, &device->numbers))
    return FALSE;
  return !*app_id || stored (app_id, device->permission_id) != LIMEN_PERMISSION_NO;
}

static GVariant *
device_info_for (Sender *s, LimenUsbDevice *device)
{
  LimenUsbDevice *parent = limen_usb_devices_parent (device);

  return limen_usb_device_info (device, parent && may_see (s, parent) ? parent->id : NULL);
}

/* ---- sessions and device events ---- */

static void
emit_events (LimenSession *session, GVariant *events)
{
  g_autoptr(GError) error = NULL;

  /* Only the session's owner hears about devices: others are told nothing. */
  if (!g_dbus_connection_emit_signal (portal_context->connection, limen_session_get_sender (session),
                                      LIMEN_PORTAL_PATH, PORTAL_IFACE, "DeviceEvents",
                                      g_variant_new ("(o@a(ssa{sv}))", limen_session_get_path (session), events),
                                      &error))
    g_debug ("DeviceEvents not delivered: %s", error->message);
}

/* What @session's owner learns about @device: add, change or remove, as its view changes. */
static void
session_device_event (LimenSession *session, const char *action, LimenUsbDevice *device)
{
  GHashTable *seen = limen_session_get_data (session);
  Sender *s = g_hash_table_lookup (senders, limen_session_get_sender (session));
  gboolean was = g_hash_table_contains (seen, device->id);
  GVariant *info;
  gboolean now = s && !g_str_equal (action, "remove") && check_portal_allowed (s->info, NULL) &&
                 may_see (s, device);
  const char *what;

  if (!was && !now)
    return;
  what = !now ? "remove" : was ? "change" : "add";
  if (now)
    g_hash_table_add (seen, g_strdup (device->id));
  else
    g_hash_table_remove (seen, device->id);
  info = now ? device_info_for (s, device) : limen_usb_device_info (device, NULL);
  emit_events (session, g_variant_new_parsed ("[(%s, %s, %@a{sv})]", what, device->id, info));
}

static void
on_device_event (const char *action, LimenUsbDevice *device, gpointer user_data)
{
  g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_session_unref);
  GHashTableIter iter;
  gpointer value;

  g_debug ("USB %s: %s", action, device->id);
  g_hash_table_iter_init (&iter, sessions);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (list, limen_session_ref (value));
  for (guint i = 0; i < list->len; i++)
    if (limen_session_is_open (g_ptr_array_index (list, i)))
      session_device_event (g_ptr_array_index (list, i), action, device);
}

/* udev is asked the first time an app uses the portal, not at start-up. */
static void
ensure_devices (void)
{
  if (devices_ready)
    return;
  devices_ready = TRUE;
  limen_usb_devices_init (on_device_event, NULL);
}

/* The first event of a session: every device its owner may see now, as "add". Runs after
 * CreateSession was answered, so the app knows the session path by then. */
static gboolean
announce_devices (gpointer user_data)
{
  LimenSession *session = user_data;
  g_auto(GVariantBuilder) events = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(ssa{sv})"));
  g_autoptr(GPtrArray) devices = NULL;
  GHashTable *seen = limen_session_get_data (session);
  Sender *s = g_hash_table_lookup (senders, limen_session_get_sender (session));
  guint n_added = 0;

  if (!limen_session_is_open (session) || s == NULL || !check_portal_allowed (s->info, NULL))
    return G_SOURCE_REMOVE;
  devices = limen_usb_devices_list ();
  for (guint i = 0; i < devices->len; i++)
    {
      LimenUsbDevice *device = g_ptr_array_index (devices, i);

      if (!may_see (s, device))
        continue;
      g_hash_table_add (seen, g_strdup (device->id));
      g_variant_builder_add (&events, "(ss@a{sv})", "add", device->id, device_info_for (s, device));
      n_added++;
    }
  /* An app that may see no device hears nothing (as from the reference): an empty event
   * list would read as a change. */
  if (n_added > 0)
    emit_events (session, g_variant_builder_end (&events));
  return G_SOURCE_REMOVE;
}

static void
on_session_closed (LimenSession *session, gpointer user_data)
{
  g_hash_table_remove (sessions, limen_session_get_path (session));
}

/* Before the handle, for CreateSession and AcquireDevices: the blanket permission. */
static void
check_allowed (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;

  if (!check_portal_allowed (limen_call_get_app_info (call), &error))
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_boolean (task, TRUE);
}

/* CreateSession's in-process set-up: the session's data is the set of ids its owner was told of. */
static void
set_up_session (LimenCall *call, GTask *task)
{
  LimenSession *session = limen_call_get_session (call);

  ensure_devices ();
  sender_get (limen_session_get_sender (session), limen_call_get_app_info (call));
  limen_session_set_data (session, g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
                          (GDestroyNotify) g_hash_table_unref);
  limen_session_set_closed_func (session, on_session_closed, NULL);
  g_hash_table_replace (sessions, (gpointer) limen_session_get_path (session), session);
  g_idle_add_full (G_PRIORITY_LOW, announce_devices, limen_session_ref (session),
                   (GDestroyNotify) limen_session_unref);
  g_task_return_boolean (task, TRUE);
}

/* ---- EnumerateDevices ---- */

static gboolean
handle_enumerate (LimenDbusPortalUsb *object, GDBusMethodInvocation *invocation, GVariant *options,
                  gpointer user_data)
{
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_auto(GVariantBuilder) list = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(sa{sv})"));
  g_autoptr(GPtrArray) devices = NULL;
  g_autoptr(GError) error = NULL;
  Sender *s;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!limen_options_filter (options, &filtered, &error, limen_options_usb_no_options, NULL) ||
      !check_portal_allowed (info, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  ensure_devices ();
  s = sender_get (g_dbus_method_invocation_get_sender (invocation), info);
  devices = limen_usb_devices_list ();
  for (guint i = 0; i < devices->len; i++)
    {
      LimenUsbDevice *device = g_ptr_array_index (devices, i);

      if (may_see (s, device))
        g_variant_builder_add (&list, "(s@a{sv})", device->id, device_info_for (s, device));
    }
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(@a(sa{sv}))", g_variant_builder_end (&list)));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- AcquireDevices ---- */

static guint last_acquire_id;

typedef struct {
  guint      id;
  char      *sender;
  char      *parent_window;
  GPtrArray *wanted;   /* Wanted */
} Acquire;

/* The call is over however it ended: the peer may ask again. */
static void
acquire_free (Acquire *a)
{
  Sender *s = g_hash_table_lookup (senders, a->sender);

  if (s && s->asking == a->id)
    s->asking = 0;
  g_free (a->sender);
  g_free (a->parent_window);
  g_ptr_array_unref (a->wanted);
  g_free (a);
}

static gboolean
check_id (const char *id, GError **error)
{
  if (*id == '\0' || strlen (id) > MAX_ID)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for devices: an id is 1 to %d bytes", MAX_ID);
      return FALSE;
    }
  return TRUE;
}

/* One (id, access) of the app's list into @wanted; an id the app may not see is as unknown
 * as one that never existed, so that ids cannot be probed. */
static gboolean
add_wanted (Sender *s, GVariant *entry, GPtrArray *wanted, GError **error)
{
  g_auto(GVariantBuilder) access = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) raw = NULL;
  g_autoptr(GVariant) filtered = NULL;
  LimenUsbDevice *device;
  const char *id;
  Wanted *w;

  g_variant_get (entry, "(&s@a{sv})", &id, &raw);
  if (!check_id (id, error) || !limen_options_filter (raw, &access, error, limen_options_usb_device_access, NULL))
    return FALSE;
  for (guint i = 0; i < wanted->len; i++)
    if (g_str_equal (((Wanted *) g_ptr_array_index (wanted, i))->device->id, id))
      {
        g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid value for devices: %s twice", id);
        return FALSE;
      }
  device = limen_usb_devices_lookup (id);
  if (device == NULL || !may_see (s, device))
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for devices: device %s is not available", id);
      return FALSE;
    }
  filtered = g_variant_ref_sink (g_variant_builder_end (&access));
  w = g_new0 (Wanted, 1);
  w->device = limen_usb_device_ref (device);
  g_variant_lookup (filtered, "writable", "b", &w->writable);
  g_ptr_array_add (wanted, w);
  return TRUE;
}

static gboolean
parse_acquire (LimenCall *call, Sender *s, Acquire *a, GError **error)
{
  g_autoptr(GVariant) window = limen_call_get_arg (call, 0);
  g_autoptr(GVariant) list = limen_call_get_arg (call, 1);
  gsize n = g_variant_n_children (list);

  if (!limen_check_parent_window (g_variant_get_string (window, NULL), error))
    return FALSE;
  if (n == 0 || n > MAX_ACQUIRE)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for devices: 1 to %d devices", MAX_ACQUIRE);
      return FALSE;
    }
  if (s->asking != 0)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                           "An earlier AcquireDevices of this caller is still being answered");
      return FALSE;
    }
  a->parent_window = g_variant_dup_string (window, NULL);
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) entry = g_variant_get_child_value (list, i);

      if (!add_wanted (s, entry, a->wanted, error))
        return FALSE;
    }
  return TRUE;
}

/* Before the handle: the device list is checked whole; a bad one is the method's error. */
static void
check_acquire (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  Sender *s;
  Acquire *a;

  ensure_devices ();
  s = sender_get (limen_call_get_sender (call), limen_call_get_app_info (call));
  a = g_new0 (Acquire, 1);
  a->sender = g_strdup (s->name);
  a->wanted = g_ptr_array_new_with_free_func ((GDestroyNotify) wanted_free);
  if (!parse_acquire (call, s, a, &error))
    {
      g_free (a->sender);
      g_free (a->parent_window);
      g_ptr_array_unref (a->wanted);
      g_free (a);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  /* From here until the call is freed or its Request closed, a second AcquireDevices of the
   * peer is refused. */
  if (++last_acquire_id == 0)
    last_acquire_id = 1;
  a->id = last_acquire_id;
  s->asking = a->id;
  limen_call_set_data (call, a, (GDestroyNotify) acquire_free);
  g_task_return_boolean (task, TRUE);
}

static gboolean is_granted (GPtrArray *granted, LimenUsbDevice *device);

/* Remember the person's answer per device: allowed, or refused (and hidden from now on). */
static void
store_answers (Sender *s, GPtrArray *wanted, GPtrArray *granted)
{
  const char *app_id = app_id_of (s);

  if (!*app_id)
    return;
  for (guint i = 0; i < wanted->len; i++)
    {
      Wanted *w = g_ptr_array_index (wanted, i);
      g_autoptr(GError) error = NULL;
      gboolean yes = is_granted (granted, w->device);

      if (!store (app_id, w->device->permission_id, yes ? LIMEN_PERMISSION_YES : LIMEN_PERMISSION_NO, &error))
        g_message ("USB answer for %s not stored: %s", app_id, error->message);
    }
}

/* Devices the person refused vanish from the app's sessions at once ("remove"). */
static gboolean
is_granted (GPtrArray *granted, LimenUsbDevice *device)
{
  for (guint i = 0; i < granted->len; i++)
    if (((Wanted *) g_ptr_array_index (granted, i))->device == device)
      return TRUE;
  return FALSE;
}

static void
retell_sessions (const char *sender, GPtrArray *wanted, GPtrArray *granted)
{
  g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_session_unref);
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, sessions);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (g_str_equal (limen_session_get_sender (value), sender))
      g_ptr_array_add (list, limen_session_ref (value));
  for (guint i = 0; i < list->len; i++)
    for (guint j = 0; j < wanted->len && limen_session_is_open (g_ptr_array_index (list, i)); j++)
      {
        LimenUsbDevice *device = ((Wanted *) g_ptr_array_index (wanted, j))->device;

        if (!is_granted (granted, device))
          session_device_event (g_ptr_array_index (list, i), "change", device);
      }
}

/* The backend's "devices": a subset of what was asked, never with more access; NULL when
 * the answer has no such list (an empty list is the person granting nothing). */
static GPtrArray *
granted_from_results (GPtrArray *wanted, GVariant *results)
{
  g_autoptr(GVariant) list = results ? g_variant_lookup_value (results, "devices", G_VARIANT_TYPE ("a(sa{sv})")) : NULL;
  GPtrArray *granted;

  if (list == NULL)
    return NULL;
  granted = g_ptr_array_new_with_free_func ((GDestroyNotify) wanted_free);

  for (gsize i = 0; list && i < g_variant_n_children (list); i++)
    {
      g_autoptr(GVariant) access = NULL;
      const char *id;
      gboolean writable = FALSE;

      g_variant_get_child (list, i, "(&s@a{sv})", &id, &access);
      g_variant_lookup (access, "writable", "b", &writable);
      for (guint j = 0; j < wanted->len; j++)
        {
          Wanted *w = g_ptr_array_index (wanted, j);
          Wanted *g;

          if (!g_str_equal (w->device->id, id))
            continue;
          if (is_granted (granted, w->device))
            break;
          g = g_new0 (Wanted, 1);
          g->device = limen_usb_device_ref (w->device);
          g->writable = w->writable && writable;
          g_ptr_array_add (granted, g);
          break;
        }
    }
  return granted;
}

/* The answer, from the person or the permission store: what is granted waits for
 * FinishAcquireDevices, which answers an empty list when the person granted nothing (as the
 * reference does); a success without a device list is response 2. */
static void
finish_answer (LimenCall *call, guint response, GPtrArray *granted)
{
  Acquire *a = limen_call_get_data (call);
  Sender *s = g_hash_table_lookup (senders, a->sender);

  if (response == LIMEN_RESPONSE_SUCCESS && granted == NULL)
    response = LIMEN_RESPONSE_OTHER;
  if (s && response == LIMEN_RESPONSE_SUCCESS)
    {
      sender_drop_ready (s);
      s->ready_handle = g_strdup (limen_request_get_path (limen_call_get_request (call)));
      s->ready = g_ptr_array_ref (granted);
    }
  limen_call_set_results (call, response, NULL);
}

static void
on_backend_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  LimenCall *call = g_task_get_task_data (task);
  Acquire *a = limen_call_get_data (call);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) results = NULL;
  g_autoptr(GVariant) reply = limen_backend_call_finish (result, NULL, &error);
  g_autoptr(GPtrArray) granted = NULL;
  Sender *s;
  guint response;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (error)
    g_message ("USB backend failed: %s", error->message);
  /* Two statements: @results is filled by the first. */
  response = limen_driver_reply_response (reply, &results);
  s = g_hash_table_lookup (senders, a->sender);
  if (response == LIMEN_RESPONSE_SUCCESS)
    {
      granted = granted_from_results (a->wanted, results);
      if (s && granted)
        {
          store_answers (s, a->wanted, granted);
          retell_sessions (s->name, a->wanted, granted);
        }
    }
  finish_answer (call, response, granted);
  g_task_return_boolean (task, TRUE);
}

static gboolean
all_allowed_before (Sender *s, GPtrArray *wanted)
{
  const char *app_id = app_id_of (s);

  if (!*app_id)
    return FALSE;
  for (guint i = 0; i < wanted->len; i++)
    {
      Wanted *w = g_ptr_array_index (wanted, i);

      if (stored (app_id, w->device->permission_id) != LIMEN_PERMISSION_YES)
        return FALSE;
    }
  return TRUE;
}

/* The impl: devices the person allowed before are granted again without asking; otherwise
 * the backend asks, with each device's information and the access wanted. */
/* The app closed its Request (or left): it may ask again at once, even while the backend's
 * dialog is still being taken down. */
static void
on_acquire_closed (LimenRequest *request, gpointer user_data)
{
  Sender *s = g_hash_table_lookup (senders, limen_request_get_sender (request));

  if (s && s->asking == GPOINTER_TO_UINT (user_data))
    s->asking = 0;
}

static void
run_acquire (LimenCall *call, GTask *task)
{
  Acquire *a = limen_call_get_data (call);
  Sender *s = g_hash_table_lookup (senders, a->sender);
  g_auto(GVariantBuilder) devices = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(sa{sv}a{sv})"));

  if (s == NULL)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "caller gone");
      return;
    }
  limen_request_set_closed_func (limen_call_get_request (call), on_acquire_closed, GUINT_TO_POINTER (a->id));
  if (all_allowed_before (s, a->wanted))
    {
      g_autoptr(GPtrArray) granted = g_ptr_array_new_with_free_func ((GDestroyNotify) wanted_free);

      for (guint i = 0; i < a->wanted->len; i++)
        {
          Wanted *w = g_ptr_array_index (a->wanted, i);
          Wanted *g = g_new0 (Wanted, 1);

          g->device = limen_usb_device_ref (w->device);
          g->writable = w->writable;
          g_ptr_array_add (granted, g);
        }
      finish_answer (call, LIMEN_RESPONSE_SUCCESS, granted);
      g_task_return_boolean (task, TRUE);
      return;
    }
  for (guint i = 0; i < a->wanted->len; i++)
    {
      Wanted *w = g_ptr_array_index (a->wanted, i);

      g_variant_builder_add (&devices, "(s@a{sv}@a{sv})", w->device->id, device_info_for (s, w->device),
                             g_variant_new_parsed ("{'writable': <%b>}", w->writable));
    }
  g_task_set_task_data (task, call, NULL);
  limen_backend_call_async (limen_call_get_context (call), limen_call_get_request (call),
                            limen_backend_find (limen_call_get_context (call), IMPL_IFACE, NULL), IMPL_IFACE,
                            "AcquireDevices",
                            g_variant_new ("(oss@a(sa{sv}a{sv})@a{sv})",
                                           limen_request_get_path (limen_call_get_request (call)),
                                           a->parent_window, app_id_of (s), g_variant_builder_end (&devices),
                                           g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0)),
                            NULL, LIMEN_BACKEND_TIMEOUT_DIALOG, on_backend_reply, g_object_ref (task));
}

/* ---- FinishAcquireDevices ---- */

/* Open @w for @s (or reuse what it holds with enough access); the fd's index in @fds, or
 * -1 with @why set. */
static int
hand_over (Sender *s, Wanted *w, GUnixFDList *fds, const char **why, GError **error)
{
  LimenUsbDevice *device = limen_usb_devices_lookup (w->device->id);
  Held *held;
  const char *file;
  int fd;

  if (device == NULL || !may_see (s, device))
    {
      *why = device == NULL ? "Device not available" : "Not allowed";
      return -1;
    }
  held = g_hash_table_lookup (s->held, device->id);
  if (held == NULL || (w->writable && !held->writable))
    {
      file = g_udev_device_get_device_file (device->udev);
      fd = file ? open (file, (w->writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY) : -1;
      if (fd < 0)
        {
          *why = g_strerror (file ? errno : ENODEV);
          return -1;
        }
      held = g_new0 (Held, 1);
      held->fd = fd;
      held->writable = w->writable;
      g_hash_table_replace (s->held, g_strdup (device->id), held);
    }
  fd = g_unix_fd_list_append (fds, held->fd, error);
  if (fd < 0)
    *why = (*error)->message;
  return fd;
}

static gboolean
handle_finish (LimenDbusPortalUsb *object, GDBusMethodInvocation *invocation, const char *handle,
               GVariant *options, gpointer user_data)
{
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_auto(GVariantBuilder) results = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(sa{sv})"));
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new ();
  g_autoptr(GError) error = NULL;
  Sender *s;
  guint n = 0;
  gboolean finished;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  s = g_hash_table_lookup (senders, g_dbus_method_invocation_get_sender (invocation));
  if (!limen_options_filter (options, &filtered, &error, limen_options_usb_no_options, NULL))
    goto fail;
  if (s == NULL || s->ready_handle == NULL || !g_str_equal (s->ready_handle, handle))
    {
      g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid value for handle: no answered AcquireDevices of this caller");
      goto fail;
    }
  if (!check_portal_allowed (info, &error))
    {
      sender_drop_ready (s);
      goto fail;
    }
  while (n < FDS_PER_BATCH && s->ready->len > 0)
    {
      g_autoptr(GError) fd_error = NULL;
      Wanted *w = g_ptr_array_steal_index (s->ready, 0);
      const char *why = NULL;
      int index = hand_over (s, w, fds, &why, &fd_error);

      if (index >= 0)
        {
          g_variant_builder_add_parsed (&results, "(%s, {'success': <true>, 'fd': <%h>})", w->device->id, index);
          n++;
        }
      else
        g_variant_builder_add_parsed (&results, "(%s, {'success': <false>, 'error': <%s>})", w->device->id, why);
      wanted_free (w);
    }
  finished = s->ready->len == 0;
  if (finished)
    sender_drop_ready (s);
  g_dbus_method_invocation_return_value_with_unix_fd_list (
    invocation, g_variant_new ("(@a(sa{sv})b)", g_variant_builder_end (&results), finished), fds);
  return G_DBUS_METHOD_INVOCATION_HANDLED;

fail:
  limen_invocation_return_gerror (invocation, error);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- ReleaseDevices: always allowed, even with the portal shut (nothing else revokes) ---- */

static gboolean
handle_release (LimenDbusPortalUsb *object, GDBusMethodInvocation *invocation, const char * const *ids,
                GVariant *options, gpointer user_data)
{
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GError) error = NULL;
  Sender *s = g_hash_table_lookup (senders, g_dbus_method_invocation_get_sender (invocation));
  guint n = g_strv_length ((char **) ids);

  if (!limen_options_filter (options, &filtered, &error, limen_options_usb_no_options, NULL))
    goto fail;
  if (n > MAX_RELEASE)
    {
      g_set_error (&error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for devices: at most %d ids", MAX_RELEASE);
      goto fail;
    }
  /* All or nothing: a list naming something the caller does not hold is refused whole. */
  for (guint i = 0; i < n; i++)
    if (!check_id (ids[i], &error))
      goto fail;
    else if (s == NULL || !g_hash_table_contains (s->held, ids[i]))
      {
        g_set_error (&error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                     "Invalid value for devices: %s is not held by this caller", ids[i]);
        goto fail;
      }
  for (guint i = 0; i < n; i++)
    g_hash_table_remove (s->held, ids[i]);
  g_dbus_method_invocation_return_value (invocation, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;

fail:
  limen_invocation_return_gerror (invocation, error);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static const LimenStep allowed_pre[] = { { check_allowed, LIMEN_STEP_BEFORE_HANDLE }, { NULL } };
static const LimenStep acquire_pre[] = {
  { check_allowed, LIMEN_STEP_BEFORE_HANDLE },
  { check_acquire, LIMEN_STEP_BEFORE_HANDLE },
  { NULL }
};

static const LimenDriverMethod usb_methods[] = {
  { .method = "CreateSession", .kind = LIMEN_CALL_NEW_SESSION, .options = limen_options_usb_create_session,
    .pre = allowed_pre, .run = set_up_session },
  { .method = "AcquireDevices", .options = limen_options_usb_acquire_devices, .impl_interface = IMPL_IFACE,
    .pre = acquire_pre, .run = run_acquire },
  { NULL }
};

/* USB devices through udev (asked on first use), dialogs through the Usb backend. */
GDBusInterfaceSkeleton *
limen_usb_new (LimenPortalContext *context)
{
  GDBusInterfaceSkeleton *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  portal_context = context;
  senders = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) sender_free);
  sessions = g_hash_table_new (g_str_hash, g_str_equal);
  permissions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_dbus_connection_signal_subscribe (context->connection, LIMEN_STORE_NAME, LIMEN_STORE_NAME, "Changed",
                                      LIMEN_STORE_PATH, TABLE, G_DBUS_SIGNAL_FLAGS_NONE, on_store_changed, NULL, NULL);
  limen_app_info_add_vanished_watch (on_peer_vanished, NULL);
  object = limen_driver_offer (context, limen_dbus_portal_usb_skeleton_new (), 1, usb_methods);
  g_signal_connect (object, "handle-enumerate-devices", G_CALLBACK (handle_enumerate), NULL);
  g_signal_connect (object, "handle-finish-acquire-devices", G_CALLBACK (handle_finish), NULL);
  g_signal_connect (object, "handle-release-devices", G_CALLBACK (handle_release), NULL);
  return object;
}
