/* limen-documents — the Documents name on a bus connection of its own (sd-bus).
 *
 * Why not GDBus, as everywhere else: a client exporting files one at a time (flatpak
 * document-export, a frontend exporting a file chooser's selection, an app's drag and
 * drop) waits for one Add after another, and each Add is mostly the bus library's time.
 * GDBus reads every message on a worker thread, builds GVariants of it, and writes the
 * reply through that thread again; a service that answers Add there and does nothing else
 * (autotests/bench/add-floor.c) still takes 1.7–2.0 times as long per call as one built
 * on sd-bus (document-fuse/README.md, "Why Documents is served on sd-bus"), which reads and
 * answers a call on the thread that polls its socket. So the
 * Documents object is served here, on the main thread, where the store's state lives: no
 * thread hop and no lock. The permission store, caller identification and the tracking of
 * peers stay on the daemon's GDBus connection; unique names are the bus's, so an identity
 * found through that connection is the identity of the same peer here.
 *
 * Each call's caller is identified before its handler runs, without blocking: a call from
 * a peer not known yet waits (with that peer's later calls, in order) until the bus
 * answers the lookup, while other peers are served. Message bodies are read into GVariants
 * and written from them by docs-marshal.c.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "docs-bus.h"

#include <string.h>
#include <systemd/sd-bus.h>

#include "docs-marshal.h"
#include "errors.h"

#define DOCUMENTS_VERSION 5
#define FILE_TRANSFER_VERSION 1
#define DISPATCH_BATCH 64       /* calls per main-loop iteration, so a flood cannot starve it */

typedef struct {
  LimenDocsMethodFunc func;
  gpointer            user_data;
} Method;

typedef struct {
  LimenDocsBus *bus;     /* NULL once the bus is freed: the lookup's callback frees this */
  char         *sender;
  GQueue        calls;   /* LimenDocsCall*, in the order they came */
} PendingPeer;

typedef struct {
  GSource       source;
  LimenDocsBus *bus;
  gpointer      tag;
  GIOCondition  events;  /* polled for */
  gboolean      more;    /* the last dispatch stopped with messages left */
  gboolean      running; /* in source_dispatch: sd_bus_process must not be entered twice */
} BusSource;

struct _LimenDocsBus {
  sd_bus          *bus;
  GSource         *source;
  GDBusConnection *lookups;
  GCancellable    *cancellable;
  GHashTable      *methods;     /* interface → (member → Method) */
  GHashTable      *pending;     /* sender → PendingPeer */
  void           (*before_call) (gpointer user_data);
  gpointer         before_data;
  char            *name;
  gboolean         owned;
  void           (*lost) (gboolean bus_gone, gpointer user_data);
  gpointer         lost_data;
  gboolean         gone;        /* lost was called */
};

struct _LimenDocsCall {
  sd_bus_message *message;
  const Method   *method;
  GVariant       *params;
  GArray         *fds;          /* int, borrowed from the message; index = handle */
  LimenAppInfo   *info;
  GError         *identity_error;
};

/* ---- answers ---------------------------------------------------------------------------- */

static void
call_free (LimenDocsCall *call)
{
  sd_bus_message_unref (call->message);
  g_clear_pointer (&call->params, g_variant_unref);
  g_clear_pointer (&call->fds, g_array_unref);
  g_clear_pointer (&call->info, limen_app_info_unref);
  g_clear_error (&call->identity_error);
  g_free (call);
}

void
limen_docs_call_return_value (LimenDocsCall *call, GVariant *body)
{
  sd_bus_message *reply = NULL;
  int r;

  if (body)
    g_variant_ref_sink (body);
  r = sd_bus_message_new_method_return (call->message, &reply);
  if (r >= 0 && body)
    r = limen_docs_marshal_append_body (reply, body, NULL, 0);
  if (r < 0)
    {
      /* Not a body D-Bus can carry (a bug of ours): the caller still gets an answer. */
      g_warning ("Cannot build the answer to %s: %s", sd_bus_message_get_member (call->message), g_strerror (-r));
      r = sd_bus_reply_method_errorf (call->message, "org.freedesktop.portal.Error.Failed", "Internal error");
    }
  else
    r = sd_bus_send (NULL, reply, NULL);
  if (r < 0)
    g_debug ("Cannot answer %s from %s: %s", sd_bus_message_get_member (call->message),
             sd_bus_message_get_sender (call->message), g_strerror (-r));
  sd_bus_message_unref (reply);
  g_clear_pointer (&body, g_variant_unref);
  call_free (call);
}

void
limen_docs_call_return_gerror (LimenDocsCall *call, const GError *error)
{
  g_autoptr(GError) copy = g_error_copy (error);
  g_autofree char *name = NULL;
  int r;

  (void) limen_error_quark ();     /* registered before its errors are named */
  if (error->domain == LIMEN_ERROR || error->domain == G_DBUS_ERROR)
    {
      name = g_dbus_error_encode_gerror (error);
      g_dbus_error_strip_remote_error (copy);
    }
  else
    name = g_strdup ("org.freedesktop.portal.Error.Failed");
  r = sd_bus_reply_method_error (call->message, &SD_BUS_ERROR_MAKE_CONST (name, copy->message));
  if (r < 0)
    g_debug ("Cannot answer %s from %s: %s", sd_bus_message_get_member (call->message),
             sd_bus_message_get_sender (call->message), g_strerror (-r));
  call_free (call);
}

/* ---- arguments ---------------------------------------------------------------------------- */

const char *
limen_docs_call_get_sender (LimenDocsCall *call)
{
  return sd_bus_message_get_sender (call->message);
}

const char *
limen_docs_call_get_method (LimenDocsCall *call)
{
  return sd_bus_message_get_member (call->message);
}

GVariant *
limen_docs_call_get_parameters (LimenDocsCall *call)
{
  return call->params;
}

int
limen_docs_call_peek_fd (LimenDocsCall *call, gint32 handle, const char *key, GError **error)
{
  if (handle < 0 || (guint) handle >= call->fds->len)
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid value for %s: no file descriptor at index %d", key, handle);
      return -1;
    }
  return g_array_index (call->fds, int, handle);
}

LimenAppInfo *
limen_docs_call_get_app_info (LimenDocsCall *call)
{
  if (call->info)
    return limen_app_info_ref (call->info);
  limen_docs_call_return_gerror (call, call->identity_error);
  return NULL;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

static void
dispatch (LimenDocsCall *call)
{
  LimenDocsMarshalStatus status;

  call->params = limen_docs_marshal_read_body (call->message, call->fds, &status);
  if (call->params == NULL)
    {
      g_autoptr(GError) error = NULL;

      if (status == LIMEN_DOCS_MARSHAL_BAD_HANDLE)
        error = g_error_new (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                             "Invalid arguments to %s: a file descriptor handle names no file descriptor",
                             limen_docs_call_get_method (call));
      else
        error = g_error_new (G_DBUS_ERROR, G_DBUS_ERROR_INVALID_ARGS, "Invalid arguments to %s",
                             limen_docs_call_get_method (call));
      limen_docs_call_return_gerror (call, error);
      return;
    }
  call->method->func (call, call->method->user_data);
}

static void
on_identified (GObject *source, GAsyncResult *result, gpointer user_data)
{
  PendingPeer *p = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenAppInfo) info = limen_app_info_get_for_sender_finish (result, &error);
  LimenDocsCall *call;

  if (p->bus != NULL)
    {
      g_hash_table_steal (p->bus->pending, p->sender);
      while ((call = g_queue_pop_head (&p->calls)))
        {
          if (info)
            call->info = limen_app_info_ref (info);
          else
            call->identity_error = g_error_copy (error);
          dispatch (call);
        }
    }
  g_free (p->sender);
  g_free (p);
}

static int
on_method (sd_bus_message *m, void *user_data, sd_bus_error *ret_error)
{
  LimenDocsBus *self = user_data;
  const char *interface = sd_bus_message_get_interface (m);
  const char *member = sd_bus_message_get_member (m);
  const char *sender = sd_bus_message_get_sender (m);
  const Method *method = NULL;
  LimenDocsCall *call;
  PendingPeer *p;

  if (interface)     /* always: on_filter answers a call that names none */
    {
      GHashTable *members = g_hash_table_lookup (self->methods, interface);

      method = members ? g_hash_table_lookup (members, member) : NULL;
    }
  if (method == NULL)
    return sd_bus_error_setf (ret_error, SD_BUS_ERROR_UNKNOWN_METHOD, "No such method %s", member);
  if (self->before_call)
    self->before_call (self->before_data);
  call = g_new0 (LimenDocsCall, 1);
  call->message = sd_bus_message_ref (m);
  call->method = method;
  call->fds = g_array_new (FALSE, FALSE, sizeof (int));
  if (sender == NULL)
    {
      call->identity_error = g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "The caller has no name");
      dispatch (call);
      return 1;
    }
  p = g_hash_table_lookup (self->pending, sender);
  if (p == NULL && (call->info = limen_app_info_lookup_cached (sender)))
    {
      dispatch (call);
      return 1;
    }
  if (p == NULL)
    {
      p = g_new0 (PendingPeer, 1);
      p->bus = self;
      p->sender = g_strdup (sender);
      g_queue_init (&p->calls);
      g_hash_table_insert (self->pending, p->sender, p);
      limen_app_info_get_for_sender_async (self->lookups, sender, self->cancellable, on_identified, p);
    }
  g_queue_push_tail (&p->calls, call);
  return 1;
}

static guint32
interface_version (const char *interface)
{
  if (g_strcmp0 (interface, LIMEN_DOCS_IFACE) == 0)
    return DOCUMENTS_VERSION;
  if (g_strcmp0 (interface, LIMEN_FILE_TRANSFER_IFACE) == 0)
    return FILE_TRANSFER_VERSION;
  return 0;
}

/* For the tables' introspection data; on_filter answers Properties calls itself. */
static int
get_version (sd_bus *bus, const char *path, const char *interface, const char *property,
             sd_bus_message *reply, void *user_data, sd_bus_error *ret_error)
{
  guint32 version = interface_version (interface);

  return sd_bus_message_append_basic (reply, 'u', &version);
}

#define ANY SD_BUS_VTABLE_UNPRIVILEGED     /* every peer on the session bus may call */

static const sd_bus_vtable documents_vtable[] = {
  SD_BUS_VTABLE_START (0),
  SD_BUS_PROPERTY ("version", "u", get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
  SD_BUS_METHOD_WITH_ARGS ("GetMountPoint", SD_BUS_NO_ARGS, SD_BUS_RESULT ("ay", path), on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("Add",
                           SD_BUS_ARGS ("h", o_path_fd, "b", reuse_existing, "b", persistent),
                           SD_BUS_RESULT ("s", doc_id), on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("AddNamed",
                           SD_BUS_ARGS ("h", o_path_parent_fd, "ay", filename, "b", reuse_existing,
                                        "b", persistent),
                           SD_BUS_RESULT ("s", doc_id), on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("AddFull",
                           SD_BUS_ARGS ("ah", o_path_fds, "u", flags, "s", app_id, "as", permissions),
                           SD_BUS_RESULT ("as", doc_ids, "a{sv}", extra_out), on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("AddNamedFull",
                           SD_BUS_ARGS ("h", o_path_fd, "ay", filename, "u", flags, "s", app_id,
                                        "as", permissions),
                           SD_BUS_RESULT ("s", doc_id, "a{sv}", extra_out), on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("GrantPermissions", SD_BUS_ARGS ("s", doc_id, "s", app_id, "as", permissions),
                           SD_BUS_NO_RESULT, on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("RevokePermissions", SD_BUS_ARGS ("s", doc_id, "s", app_id, "as", permissions),
                           SD_BUS_NO_RESULT, on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("Delete", SD_BUS_ARGS ("s", doc_id), SD_BUS_NO_RESULT, on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("Lookup", SD_BUS_ARGS ("ay", filename), SD_BUS_RESULT ("s", doc_id), on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("Info", SD_BUS_ARGS ("s", doc_id), SD_BUS_RESULT ("ay", path, "a{sas}", apps),
                           on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("List", SD_BUS_ARGS ("s", app_id), SD_BUS_RESULT ("a{say}", docs), on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("GetHostPaths", SD_BUS_ARGS ("as", doc_ids), SD_BUS_RESULT ("a{say}", paths),
                           on_method, ANY),
  SD_BUS_VTABLE_END
};

static const sd_bus_vtable file_transfer_vtable[] = {
  SD_BUS_VTABLE_START (0),
  SD_BUS_PROPERTY ("version", "u", get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
  SD_BUS_METHOD_WITH_ARGS ("StartTransfer", SD_BUS_ARGS ("a{sv}", options), SD_BUS_RESULT ("s", key),
                           on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("AddFiles", SD_BUS_ARGS ("s", key, "ah", fds, "a{sv}", options), SD_BUS_NO_RESULT,
                           on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("RetrieveFiles", SD_BUS_ARGS ("s", key, "a{sv}", options), SD_BUS_RESULT ("as", files),
                           on_method, ANY),
  SD_BUS_METHOD_WITH_ARGS ("StopTransfer", SD_BUS_ARGS ("s", key), SD_BUS_NO_RESULT, on_method, ANY),
  SD_BUS_SIGNAL_WITH_ARGS ("TransferClosed", SD_BUS_ARGS ("s", key), 0),
  SD_BUS_VTABLE_END
};

/* ---- the connection in GLib's main loop ------------------------------------------------- */

static void
bus_gone (LimenDocsBus *self, gboolean bus_gone)
{
  if (self->gone)
    return;
  self->gone = TRUE;
  if (self->lost)
    self->lost (bus_gone, self->lost_data);
}

/* sd-bus's next deadline (a pending call's timeout), in g_get_monotonic_time's µs (both
 * CLOCK_MONOTONIC), or -1 for none. */
static gint64
bus_deadline (sd_bus *bus)
{
  uint64_t until;

  if (sd_bus_get_timeout (bus, &until) < 0 || until == UINT64_MAX)
    return -1;
  return (gint64) MIN (until, (uint64_t) G_MAXINT64);
}

static gboolean
source_prepare (GSource *source, gint *timeout)
{
  BusSource *bs = (BusSource *) source;
  int events = sd_bus_get_events (bs->bus->bus);
  GIOCondition want = events > 0 ? (GIOCondition) events : G_IO_IN;
  gint64 deadline, now;

  *timeout = -1;
  if (bs->more)
    {
      *timeout = 0;
      return TRUE;
    }
  /* Changing what is polled for wakes the context up: only when it changes. */
  if (want != bs->events)
    {
      bs->events = want;
      g_source_modify_unix_fd (source, bs->tag, want);
    }
  if ((deadline = bus_deadline (bs->bus->bus)) < 0)
    return FALSE;
  if (deadline <= (now = g_get_monotonic_time ()))
    {
      *timeout = 0;
      return TRUE;
    }
  *timeout = (gint) MIN ((deadline - now + 999) / 1000, G_MAXINT);
  return FALSE;
}

static gboolean
source_check (GSource *source)
{
  BusSource *bs = (BusSource *) source;
  gint64 deadline;

  if (g_source_query_unix_fd (source, bs->tag) != 0)
    return TRUE;
  deadline = bus_deadline (bs->bus->bus);
  return deadline >= 0 && deadline <= g_get_monotonic_time ();
}

static gboolean
source_dispatch (GSource *source, GSourceFunc callback, gpointer user_data)
{
  BusSource *bs = (BusSource *) source;
  LimenDocsBus *self = bs->bus;

  /* The source may recurse (see limen_docs_bus_new); a main loop run inside a handler would
   * come back here, and sd-bus does not process a connection inside its own processing. */
  if (bs->running)
    return G_SOURCE_CONTINUE;
  bs->more = FALSE;
  for (guint i = 0; i < DISPATCH_BATCH; i++)
    {
      int r;

      bs->running = TRUE;
      r = sd_bus_process (self->bus, NULL);
      bs->running = FALSE;
      if (r < 0)
        {
          g_message ("The Documents connection to the session bus is gone: %s", g_strerror (-r));
          bus_gone (self, TRUE);
          return G_SOURCE_REMOVE;
        }
      if (r == 0)
        return G_SOURCE_CONTINUE;
    }
  bs->more = TRUE;
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs source_funcs = { source_prepare, source_check, source_dispatch, NULL, NULL, NULL };

/* org.freedesktop.DBus.Properties on the object. sd-bus's own answers would name each
 * mistake (UnknownInterface, UnknownProperty, PropertyReadOnly); GDBus services, the
 * reference's among them, answer InvalidArgs to all of them, and so does this. */
static void
answer_properties (sd_bus_message *m)
{
  const char *member = sd_bus_message_get_member (m);
  const char *signature = sd_bus_message_get_signature (m, TRUE);
  const char *interface = NULL, *property = NULL;
  guint32 version;
  int r;

  if (strcmp (member, "Get") == 0 && strcmp (signature, "ss") == 0)
    r = sd_bus_message_read (m, "ss", &interface, &property);
  else if (strcmp (member, "GetAll") == 0 && strcmp (signature, "s") == 0)
    r = sd_bus_message_read (m, "s", &interface);
  else if (strcmp (member, "Set") == 0 && strcmp (signature, "ssv") == 0)
    r = sd_bus_message_read (m, "ss", &interface, &property);
  else if (strcmp (member, "Get") == 0 || strcmp (member, "GetAll") == 0 || strcmp (member, "Set") == 0)
    r = -EINVAL;
  else
    {
      sd_bus_reply_method_errorf (m, SD_BUS_ERROR_UNKNOWN_METHOD, "No such method %s", member);
      return;
    }
  if (r < 0)
    sd_bus_reply_method_errorf (m, SD_BUS_ERROR_INVALID_ARGS, "Invalid arguments to %s", member);
  else if ((version = interface_version (interface)) == 0)
    sd_bus_reply_method_errorf (m, SD_BUS_ERROR_INVALID_ARGS, "No such interface %s", interface);
  else if (property && strcmp (property, "version") != 0)
    sd_bus_reply_method_errorf (m, SD_BUS_ERROR_INVALID_ARGS, "No such property %s", property);
  else if (strcmp (member, "Set") == 0)
    sd_bus_reply_method_errorf (m, SD_BUS_ERROR_INVALID_ARGS, "Property version is not writable");
  else if (strcmp (member, "Get") == 0)
    sd_bus_reply_method_return (m, "v", "u", version);
  else
    sd_bus_reply_method_return (m, "a{sv}", 1, "version", "u", version);
}

/* Method calls the object's tables would answer otherwise than a GDBus service does (see
 * answer_properties; a call that names no interface or another object is UnknownMethod
 * there, UnknownObject from sd-bus), NameLost for our name (another process took it over),
 * and the bus's goodbye. */
static int
on_filter (sd_bus_message *m, void *user_data, sd_bus_error *ret_error)
{
  LimenDocsBus *self = user_data;
  const char *name = NULL;

  if (sd_bus_message_is_method_call (m, NULL, NULL))
    {
      const char *interface = sd_bus_message_get_interface (m);
      gboolean ours = g_strcmp0 (sd_bus_message_get_path (m), LIMEN_DOCS_PATH) == 0;

      if (ours && g_strcmp0 (interface, "org.freedesktop.DBus.Properties") == 0)
        answer_properties (m);
      else if (interface == NULL ||
               (!ours && strcmp (interface, "org.freedesktop.DBus.Introspectable") != 0 &&
                strcmp (interface, "org.freedesktop.DBus.Peer") != 0))
        sd_bus_reply_method_errorf (m, SD_BUS_ERROR_UNKNOWN_METHOD, "No such method %s%s%s on %s",
                                    interface ? interface : "", interface ? "." : "",
                                    sd_bus_message_get_member (m), sd_bus_message_get_path (m));
      else
        return 0;
      return 1;
    }

  if (sd_bus_message_is_signal (m, "org.freedesktop.DBus.Local", "Disconnected"))
    {
      g_message ("The Documents connection to the session bus is gone");
      bus_gone (self, TRUE);
      return 0;
    }
  if (self->owned && sd_bus_message_is_signal (m, "org.freedesktop.DBus", "NameLost") &&
      g_strcmp0 (sd_bus_message_get_sender (m), "org.freedesktop.DBus") == 0 &&
      sd_bus_message_read_basic (m, 's', &name) > 0 && g_strcmp0 (name, self->name) == 0)
    {
      self->owned = FALSE;
      g_message ("%s was taken over by another process, leaving", self->name);
      bus_gone (self, FALSE);
    }
  sd_bus_message_rewind (m, TRUE);
  return 0;
}

LimenDocsBus *
limen_docs_bus_new (GDBusConnection *lookups, GError **error)
{
  g_autofree char *address = g_dbus_address_get_for_bus_sync (G_BUS_TYPE_SESSION, NULL, error);
  LimenDocsBus *self;
  sd_bus *bus = NULL;
  BusSource *bs;
  int r;

  if (address == NULL)
    return NULL;
  if ((r = sd_bus_new (&bus)) < 0 ||
      (r = sd_bus_set_address (bus, address)) < 0 ||
      (r = sd_bus_set_bus_client (bus, TRUE)) < 0 ||
      (r = sd_bus_set_trusted (bus, TRUE)) < 0 ||     /* a session bus: no per-call credential checks */
      (r = sd_bus_negotiate_fds (bus, TRUE)) < 0 ||
      (r = sd_bus_set_description (bus, "limen-documents")) < 0 ||
      (r = sd_bus_start (bus)) < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (-r), "Cannot connect to the session bus at %s: %s",
                   address, g_strerror (-r));
      sd_bus_unref (bus);
      return NULL;
    }
  self = g_new0 (LimenDocsBus, 1);
  self->bus = bus;
  self->lookups = g_object_ref (lookups);
  self->cancellable = g_cancellable_new ();
  self->methods = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_hash_table_unref);
  self->pending = g_hash_table_new (g_str_hash, g_str_equal);
  if ((r = sd_bus_add_filter (bus, NULL, on_filter, self)) < 0 ||
      (r = sd_bus_add_object_vtable (bus, NULL, LIMEN_DOCS_PATH, LIMEN_DOCS_IFACE, documents_vtable, self)) < 0 ||
      (r = sd_bus_add_object_vtable (bus, NULL, LIMEN_DOCS_PATH, LIMEN_FILE_TRANSFER_IFACE, file_transfer_vtable,
                                     self)) < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (-r), "Cannot serve the Documents object: %s",
                   g_strerror (-r));
      limen_docs_bus_free (self);
      return NULL;
    }
  self->source = g_source_new (&source_funcs, sizeof (BusSource));
  bs = (BusSource *) self->source;
  bs->bus = self;
  bs->events = G_IO_IN;
  bs->tag = g_source_add_unix_fd (self->source, sd_bus_get_fd (bus), bs->events);
  /* GLib takes the fds of a source that may not recurse out of the poll set for each
   * dispatch and puts them back after it, and each of the two writes the context's wakeup
   * fd, which then wakes the next poll at once: two writes, a read and an empty main loop
   * iteration for every call. source_dispatch guards against recursion itself. */
  g_source_set_can_recurse (self->source, TRUE);
  g_source_set_name (self->source, "limen-documents bus");
  g_source_attach (self->source, NULL);
  return self;
}

void
limen_docs_bus_set_before_call (LimenDocsBus *self, void (*func) (gpointer user_data), gpointer user_data)
{
  self->before_call = func;
  self->before_data = user_data;
}

void
limen_docs_bus_add_method (LimenDocsBus *self, const char *interface, const char *method, LimenDocsMethodFunc func,
                           gpointer user_data)
{
  GHashTable *members = g_hash_table_lookup (self->methods, interface);
  Method *m = g_new0 (Method, 1);

  m->func = func;
  m->user_data = user_data;
  if (members == NULL)
    {
      members = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      g_hash_table_insert (self->methods, g_strdup (interface), members);
    }
  g_hash_table_replace (members, g_strdup (method), m);
}

gboolean
limen_docs_bus_own_name (LimenDocsBus *self, const char *name, gboolean replace,
                         void (*lost) (gboolean bus_gone, gpointer user_data), gpointer user_data, GError **error)
{
  int r = sd_bus_request_name (self->bus, name, SD_BUS_NAME_ALLOW_REPLACEMENT |
                                                (replace ? SD_BUS_NAME_REPLACE_EXISTING : 0));

  if (r == -EEXIST)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                   "%s is owned by another process (use --replace to take it over)", name);
      return FALSE;
    }
  if (r < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (-r), "Cannot own %s: %s", name, g_strerror (-r));
      return FALSE;
    }
  g_free (self->name);
  self->name = g_strdup (name);
  self->owned = TRUE;
  self->lost = lost;
  self->lost_data = user_data;
  g_debug ("Owned %s", name);
  return TRUE;
}

void
limen_docs_bus_emit_signal (LimenDocsBus *self, const char *destination, const char *interface, const char *member,
                            GVariant *body)
{
  sd_bus_message *m = NULL;
  int r;

  g_variant_ref_sink (body);
  r = sd_bus_message_new_signal (self->bus, &m, LIMEN_DOCS_PATH, interface, member);
  if (r >= 0 && destination)
    r = sd_bus_message_set_destination (m, destination);
  if (r >= 0)
    r = limen_docs_marshal_append_body (m, body, NULL, 0);
  if (r >= 0)
    r = sd_bus_send (self->bus, m, NULL);
  if (r < 0)
    g_debug ("Cannot send %s to %s: %s", member, destination ? destination : "everyone", g_strerror (-r));
  sd_bus_message_unref (m);
  g_variant_unref (body);
}

void
limen_docs_bus_free (LimenDocsBus *self)
{
  GHashTableIter iter;
  PendingPeer *p;

  g_cancellable_cancel (self->cancellable);
  g_hash_table_iter_init (&iter, self->pending);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &p))
    {
      LimenDocsCall *call;

      while ((call = g_queue_pop_head (&p->calls)))
        {
          g_autoptr(GError) error = g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                         "The service is shutting down");
          limen_docs_call_return_gerror (call, error);
        }
      p->bus = NULL;        /* its lookup, cancelled, frees it */
    }
  g_hash_table_unref (self->pending);
  if (self->source)
    {
      g_source_destroy (self->source);
      g_source_unref (self->source);
    }
  /* Queued answers and signals (TransferClosed) reach their peers; closing releases the name. */
  sd_bus_flush_close_unref (self->bus);
  g_hash_table_unref (self->methods);
  g_object_unref (self->cancellable);
  g_object_unref (self->lookups);
  g_free (self->name);
  g_free (self);
}
