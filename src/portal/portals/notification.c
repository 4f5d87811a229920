/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Icon and sound bytes from an app are the inputs here that a complex parser would chew on,
 * so they are judged by limen-validate-icon and limen-validate-sound in processes of their
 * own with tight limits. Bytes passed as a memfd are copied once and the copy is what gets
 * validated and forwarded, so the app cannot change them in between. An icon or sound that
 * is not of the specification's form (an unknown kind, a value of the wrong type, an fd that
 * is missing or not a memfd, a sound word other than "default"/"silent") is InvalidArgument,
 * as from the reference; a ("file", <s>) icon or sound (GIO's form for a file path, which
 * says nothing the frontend may open for the app), an icon name no theme can hold and data
 * only the validators refuse are left out and the notification still shown (the reference
 * takes such names and refuses file icons; GLib apps send those).
 * Version min(backend's, 2) of the interface. A version 2 backend gets image and sound data
 * as a sealed memfd of our own (the specification's form since version 2), a version 1
 * backend gets ("bytes", <ay>) icons and none of version 2's keys. */
#include "portal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gunixfdlist.h>

#include "backend.h"
#include "fd-check.h"
#include "media-validate.h"
#include "notification-options.h"
#include "option-tables.h"
#include "permission-store.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Notification"
#define ID_MAX 256
#define ICON_BYTES_MAX (4 * 1024 * 1024)
#define SOUND_BYTES_MAX (16 * 1024 * 1024)
#define SOUND_SECONDS_MAX 30

static LimenDbusPortalNotification *skeleton;
static guint32 backend_version = 1;   /* the backend's interface version, as last read */
static gboolean backend_version_known;
static GHashTable *owners;   /* "APPID\nID" → unique name that added it */

static char *
owner_key (const char *app_id, const char *id)
{
  return g_strconcat (app_id, "\n", id, NULL);
}

static gboolean
bad (GError **error, const char *key, const char *reason)
{
  limen_option_set_error (error, key, reason);
  return FALSE;
}

typedef struct {
  GDBusMethodInvocation *invocation;
  LimenPortalContext    *context;
  char                  *app_id;
  char                  *id;
  GVariant              *notification;   /* checked against the table, without icon and sound */
  GVariant              *icon;           /* a themed icon, ready to pass on */
  GBytes                *icon_bytes;     /* image data: validated, then passed on */
  GVariant              *sound;          /* "default" or "silent" */
  GBytes                *sound_bytes;    /* sound data: validated, then passed on */
} Add;

static void
add_free (Add *a)
{
  g_clear_object (&a->invocation);
  g_free (a->app_id);
  g_free (a->id);
  g_clear_pointer (&a->notification, g_variant_unref);
  g_clear_pointer (&a->icon, g_variant_unref);
  g_clear_pointer (&a->icon_bytes, g_bytes_unref);
  g_clear_pointer (&a->sound, g_variant_unref);
  g_clear_pointer (&a->sound_bytes, g_bytes_unref);
  g_free (a);
}

static void
on_added (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Add *a = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_finish (G_DBUS_CONNECTION (source), NULL,
                                                                                result, &error);

  if (reply == NULL)
    {
      g_message ("Notification backend failed: %s", error->message);
      g_dbus_method_invocation_return_error (a->invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                             "The notification could not be shown");
    }
  else
    {
      g_hash_table_replace (owners, owner_key (a->app_id, a->id),
                            g_strdup (g_dbus_method_invocation_get_sender (a->invocation)));
      g_dbus_method_invocation_return_value (a->invocation, NULL);
    }
  add_free (a);
}

/* Image or sound data in the form the backend's version takes: a sealed memfd (version 2,
 * the specification's form) or, for a version 1 backend, the bytes themselves. A new
 * reference; NULL (errno set) if no memfd could be made. */
static GVariant *
media_for_backend (GBytes *bytes, GUnixFDList *fds)
{
  g_autofd int fd = -1;
  gsize len;
  const guint8 *data = g_bytes_get_data (bytes, &len);
  int index;

  if (backend_version < 2)
    return g_variant_ref_sink (g_variant_new ("(sv)", "bytes",
                                              g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, bytes, TRUE)));
  fd = memfd_create ("limen-notification", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return NULL;
  for (gsize done = 0; done < len; )
    {
      ssize_t n = write (fd, data + done, len - done);

      if (n <= 0)
        return NULL;
      done += n;
    }
  if (fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
    return NULL;
  /* The backend reads from where the fd stands: at the start, not after what was written. */
  if (lseek (fd, 0, SEEK_SET) != 0)
    return NULL;
  index = g_unix_fd_list_append (fds, fd, NULL);
  if (index < 0)
    return NULL;
  return g_variant_ref_sink (g_variant_new ("(sv)", "file-descriptor", g_variant_new_handle (index)));
}

static void
add_media (Add *a, GVariantBuilder *b, GUnixFDList *fds)
{
  GVariant *icon = a->icon ? g_variant_ref (a->icon) : a->icon_bytes ? media_for_backend (a->icon_bytes, fds) : NULL;
  GVariant *sound = NULL;

  if (icon)
    g_variant_builder_add (b, "{sv}", "icon", icon);
  else if (a->icon_bytes)
    g_message ("The icon of notification %s could not be passed on: %s", a->id, g_strerror (errno));
  g_clear_pointer (&icon, g_variant_unref);
  /* A version 1 backend has never heard of sounds. */
  if (backend_version < 2)
    return;
  sound = a->sound ? g_variant_ref (a->sound) : a->sound_bytes ? media_for_backend (a->sound_bytes, fds) : NULL;
  if (sound)
    g_variant_builder_add (b, "{sv}", "sound", sound);
  else if (a->sound_bytes)
    g_message ("The sound of notification %s could not be passed on: %s", a->id, g_strerror (errno));
  g_clear_pointer (&sound, g_variant_unref);
}

static void on_backend_properties (GVariant *props, gpointer user_data);

/* The keys rewritten for the backend's version (markup sanitised, unknown display hints
 * and button keys left out, version 2's keys only for a version 2 backend), then sent. */
static void
send_normalized (Add *a, const char *backend)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new ();
  g_autoptr(GVariant) fields = limen_notification_normalize (a->notification, backend_version >= 2, &error);
  GVariantBuilder b;
  GVariantIter iter;
  const char *key;
  GVariant *value;

  if (fields == NULL)
    {
      limen_invocation_return_gerror (a->invocation, error);
      add_free (a);
      return;
    }
  g_variant_ref_sink (fields);
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_iter_init (&iter, fields);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_variant_builder_add (&b, "{sv}", key, value);
      g_variant_unref (value);
    }
  add_media (a, &b, fds);
  g_dbus_connection_call_with_unix_fd_list (a->context->connection, backend, LIMEN_PORTAL_PATH, IMPL_IFACE,
                                            "AddNotification",
                                            g_variant_new ("(ss@a{sv})", a->app_id, a->id, g_variant_builder_end (&b)),
                                            NULL, G_DBUS_CALL_FLAGS_NONE, LIMEN_BACKEND_TIMEOUT_QUICK,
                                            g_unix_fd_list_get_length (fds) ? fds : NULL, NULL, on_added, a);
}

static void
on_backend_version (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Add *a = user_data;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  g_autoptr(GVariant) props = NULL;
  g_autoptr(GError) error = NULL;
  const char *backend = limen_backend_find (a->context, IMPL_IFACE, &error);

  if (backend == NULL)
    {
      limen_invocation_return_gerror (a->invocation, error);
      add_free (a);
      return;
    }
  if (reply)
    {
      g_variant_get (reply, "(@a{sv})", &props);
      on_backend_properties (props, NULL);
    }
  send_normalized (a, backend);
}

/* What the backend takes depends on its version: read it first if the property watch has
 * not reported yet (a call right after the backend appeared). */
static void
send_to_backend (Add *a)
{
  g_autoptr(GError) error = NULL;
  const char *backend = limen_backend_find (a->context, IMPL_IFACE, &error);

  if (backend == NULL)
    {
      limen_invocation_return_gerror (a->invocation, error);
      add_free (a);
      return;
    }
  if (backend_version_known)
    {
      send_normalized (a, backend);
      return;
    }
  g_dbus_connection_call (a->context->connection, backend, LIMEN_PORTAL_PATH, "org.freedesktop.DBus.Properties",
                          "GetAll", g_variant_new ("(s)", IMPL_IFACE), G_VARIANT_TYPE ("(a{sv})"),
                          G_DBUS_CALL_FLAGS_NONE, LIMEN_BACKEND_TIMEOUT_QUICK, NULL, on_backend_version, a);
}

static void
on_permission (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Add *a = user_data;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  g_autoptr(GVariant) perms = NULL;
  g_autofree const char **entry = NULL;

  if (reply)
    {
      g_variant_get_child (reply, 0, "@a{sas}", &perms);
      if (g_variant_lookup (perms, a->app_id, "^a&s", &entry) && entry[0] && g_str_equal (entry[0], "no"))
        {
          g_debug ("Notifications of '%s' are turned off", a->app_id);
          g_dbus_method_invocation_return_error_literal (a->invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                         "Notifications are turned off for this app");
          add_free (a);
          return;
        }
    }
  send_to_backend (a);
}

/* The user may have turned an app's notifications off: a stored "no" in the
 * notifications table. No entry (or no store) means allowed. */
static void
check_permission_then_send (Add *a)
{
  if (*a->app_id == '\0')
    {
      send_to_backend (a);
      return;
    }
  g_dbus_connection_call (a->context->connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME,
                          "Lookup", g_variant_new ("(ss)", "notifications", "notification"),
                          G_VARIANT_TYPE ("(a{sas}v)"), G_DBUS_CALL_FLAGS_NONE, 3000, NULL, on_permission, a);
}


static void
on_sound_validated (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Add *a = user_data;
  g_autofree char *format = NULL;
  guint milliseconds = 0;
  gboolean ok = limen_sound_validate_finish (result, &format, &milliseconds);

  if (!ok)
    {
      g_message ("The sound of notification %s was left out: not a WAV (PCM), Ogg Vorbis or Ogg Opus "
                 "sound of at most 30 seconds", a->id);
      g_clear_pointer (&a->sound_bytes, g_bytes_unref);
    }
  else
    g_debug ("Sound of notification %s: %s, %u ms", a->id, format, milliseconds);
  check_permission_then_send (a);
}

static void
validate_sound_then_send (Add *a)
{
  if (a->sound_bytes)
    limen_sound_validate_async (a->sound_bytes, SOUND_SECONDS_MAX, on_sound_validated, a);
  else
    check_permission_then_send (a);
}

static void
on_icon_validated (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Add *a = user_data;
  gboolean ok = limen_icon_validate_finish (result, NULL, NULL);

  if (!ok)
    {
      g_message ("The icon of notification %s was left out: not a PNG, JPEG or SVG image of at most "
                 "512×512 pixels", a->id);
      g_clear_pointer (&a->icon_bytes, g_bytes_unref);
    }
  validate_sound_then_send (a);
}

/* ("file-descriptor", <h>): the specification asks for a sealable memfd. Its bytes are
 * read once, here; what the app does with the fd afterwards changes nothing. */
static GBytes *
read_memfd (GUnixFDList *fd_list, GVariant *handle, const char *key, gsize max, GError **error)
{
  g_autofd int fd = limen_fd_list_get (fd_list, g_variant_get_handle (handle), key, error);
  const int fixed = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
  struct stat st;
  g_autofree guchar *data = NULL;
  gsize done = 0;
  int seals;

  if (fd < 0)
    return NULL;
  /* Sealable: sealing still allowed, or already sealed against every change. */
  seals = fcntl (fd, F_GET_SEALS);
  if (seals < 0 || ((seals & F_SEAL_SEAL) && (seals & fixed) != fixed) || fstat (fd, &st) != 0 ||
      !S_ISREG (st.st_mode))
    return bad (error, key, "the file descriptor must be a sealable memfd"), NULL;
  if (st.st_size <= 0 || (guint64) st.st_size > max)
    return bad (error, key, "data empty or too large"), NULL;
  /* Bounded by @max, but still the app's choice: no memory is an error, not an abort. */
  data = g_try_malloc (st.st_size);
  if (data == NULL)
    return bad (error, key, "too large to read now"), NULL;
  while (done < (gsize) st.st_size)
    {
      ssize_t n = pread (fd, data + done, st.st_size - done, done);

      if (n <= 0)
        return bad (error, key, "the file descriptor could not be read"), NULL;
      done += n;
    }
  return g_bytes_new_take (g_steal_pointer (&data), done);
}

/* ("themed", <as>) with each name's symbolic or plain counterpart after the names given
 * (as a GThemedIcon lists them), so a theme that has only one of the two still shows it. */
static GVariant *
themed_with_fallbacks (const char * const *names)
{
  g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; names[i]; i++)
    if (!g_ptr_array_find_with_equal_func (all, names[i], g_str_equal, NULL))
      g_ptr_array_add (all, g_strdup (names[i]));
  for (guint i = 0; names[i]; i++)
    {
      char *other = g_str_has_suffix (names[i], "-symbolic") ?
                    g_strndup (names[i], strlen (names[i]) - strlen ("-symbolic")) :
                    g_strconcat (names[i], "-symbolic", NULL);

      if (*other == '\0' || g_ptr_array_find_with_equal_func (all, other, g_str_equal, NULL))
        g_free (other);
      else
        g_ptr_array_add (all, other);
    }
  g_ptr_array_add (all, NULL);
  return g_variant_ref_sink (g_variant_new ("(sv)", "themed",
                                            g_variant_new_strv ((const char * const *) all->pdata, -1)));
}

/* ("file", <s>): a path in the app's view of the file system, never opened for it; the
 * field is left out (the reference accepts the call too). */
static gboolean
is_file_kind (const char *kind, GVariant *inner, const char *key)
{
  if (!g_str_equal (kind, "file") || !g_variant_is_of_type (inner, G_VARIANT_TYPE_STRING))
    return FALSE;
  g_debug ("A %s given as a file path is left out", key);
  return TRUE;
}

/* Serialized GIcon: ("themed", <as>) names are checked here, ("bytes", <ay>) and
 * ("file-descriptor", <h>) by the validator; any other kind (a file path, a GIO-specific
 * class) is not supported. FALSE (@error set): not a usable icon. */
static gboolean
check_icon (Add *a, GVariant *icon, GUnixFDList *fd_list, GError **error)
{
  const char *kind;
  g_autoptr(GVariant) inner = NULL;

  /* The specification's older form: one themed icon name as a plain string. */
  if (g_variant_is_of_type (icon, G_VARIANT_TYPE_STRING))
    {
      const char *names[] = { g_variant_get_string (icon, NULL), NULL };

      /* A name no theme can hold ("a/b", "..") is left out, the notification shown (the
       * reference takes it). */
      if (limen_notification_name_is_valid (names[0]))
        a->icon = themed_with_fallbacks (names);
      else
        g_message ("The icon of notification %s was left out: not an icon name", a->id);
      return TRUE;
    }
  g_variant_get (icon, "(&sv)", &kind, &inner);
  if (is_file_kind (kind, inner, "icon"))
    return TRUE;
  if (g_str_equal (kind, "themed") && g_variant_is_of_type (inner, G_VARIANT_TYPE_STRING_ARRAY))
    {
      g_autofree const char **names = g_variant_get_strv (inner, NULL);
      guint kept = 0;

      if (names[0] == NULL || g_strv_length ((char **) names) > 16)
        return bad (error, "icon", "needs 1 to 16 icon names");
      /* Names no theme can hold are left out, as above. */
      for (guint i = 0; names[i]; i++)
        if (limen_notification_name_is_valid (names[i]))
          names[kept++] = names[i];
      names[kept] = NULL;
      if (kept > 0)
        a->icon = themed_with_fallbacks (names);
      else
        g_message ("The icon of notification %s was left out: no icon name", a->id);
      return TRUE;
    }
  if (g_str_equal (kind, "bytes") && g_variant_is_of_type (inner, G_VARIANT_TYPE_BYTESTRING))
    {
      if (g_variant_get_size (inner) == 0 || g_variant_get_size (inner) > ICON_BYTES_MAX)
        return bad (error, "icon", "image data empty or too large");
      a->icon_bytes = g_variant_get_data_as_bytes (inner);
      return TRUE;
    }
  if (g_str_equal (kind, "file-descriptor") && g_variant_is_of_type (inner, G_VARIANT_TYPE_HANDLE))
    {
      a->icon_bytes = read_memfd (fd_list, inner, "icon", ICON_BYTES_MAX, error);
      return a->icon_bytes != NULL;
    }
  return bad (error, "icon", "must be a serialized themed, bytes or file-descriptor icon");
}

/* "default" and "silent" pass as they are; sound data, in a memfd or (as an earlier draft
 * of the specification had it) inline, goes to the validator and on to the backend. */
static gboolean
check_sound (Add *a, GVariant *sound, GUnixFDList *fd_list, GError **error)
{
  const char *kind;
  g_autoptr(GVariant) inner = NULL;

  if (g_variant_is_of_type (sound, G_VARIANT_TYPE_STRING))
    {
      const char *s = g_variant_get_string (sound, NULL);

      if (!g_str_equal (s, "default") && !g_str_equal (s, "silent"))
        return bad (error, "sound", "invalid sound: invalid option: must be \"default\", \"silent\" or a serialized sound");
      a->sound = g_variant_ref (sound);
      return TRUE;
    }
  g_variant_get (sound, "(&sv)", &kind, &inner);
  if (is_file_kind (kind, inner, "sound"))
    return TRUE;
  if (g_str_equal (kind, "bytes") && g_variant_is_of_type (inner, G_VARIANT_TYPE_BYTESTRING))
    {
      if (g_variant_get_size (inner) == 0 || g_variant_get_size (inner) > SOUND_BYTES_MAX)
        return bad (error, "sound", "sound data empty or too large");
      a->sound_bytes = g_variant_get_data_as_bytes (inner);
    }
  else if (g_str_equal (kind, "file-descriptor") && g_variant_is_of_type (inner, G_VARIANT_TYPE_HANDLE))
    {
      a->sound_bytes = read_memfd (fd_list, inner, "sound", SOUND_BYTES_MAX, error);
      if (a->sound_bytes == NULL)
        return FALSE;
    }
  else
    return bad (error, "sound", "invalid sound: invalid option: must be \"default\", \"silent\" or a serialized sound");
  return TRUE;
}

static gboolean
is_string_or_serialized (GVariant *value, const char *key, GError **error)
{
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING) || g_variant_is_of_type (value, G_VARIANT_TYPE ("(sv)")))
    return TRUE;
  return bad (error, key, "must be a string or a serialized (sv) value");
}

/* Icons and sounds may come boxed in one more variant; look through it. */
static GVariant *
lookup_unboxed (GVariant *notification, const char *key)
{
  g_autoptr(GVariant) v = g_variant_lookup_value (notification, key, NULL);

  if (v == NULL)
    return NULL;
  return g_variant_is_of_type (v, G_VARIANT_TYPE_VARIANT) ? g_variant_get_variant (v) : g_steal_pointer (&v);
}

/* The table's check: InvalidArgument on the first bad key, before anything else happens. */
static GVariant *
check_fields (GVariant *notification, GError **error)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

  if (!limen_options_filter (notification, &b, error, limen_options_notification_add_notification, NULL))
    return NULL;
  return g_variant_builder_end (&b);
}

static gboolean
handle_add_notification (LimenDbusPortalNotification *object, GDBusMethodInvocation *invocation,
                         GUnixFDList *fd_list, const char *id, GVariant *notification, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) fields = NULL;
  g_autoptr(GVariant) icon = NULL;
  g_autoptr(GVariant) sound = NULL;
  Add *a;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (*id == '\0' || strlen (id) > ID_MAX)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid value for id: 1 to 256 bytes");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  fields = check_fields (notification, &error);
  icon = lookup_unboxed (notification, "icon");
  sound = lookup_unboxed (notification, "sound");
  /* A value of the wrong D-Bus type is a broken call. */
  if (fields == NULL || (icon && !is_string_or_serialized (icon, "icon", &error)) ||
      (sound && !is_string_or_serialized (sound, "sound", &error)))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  a = g_new0 (Add, 1);
  a->invocation = g_object_ref (invocation);
  a->context = context;
  a->app_id = g_strdup (limen_app_info_get_id (info));
  a->id = g_strdup (id);
  a->notification = g_variant_ref_sink (g_steal_pointer (&fields));
  /* So is an icon or sound not of the specification's form: nothing reaches the backend. */
  if ((icon && !check_icon (a, icon, fd_list, &error)) || (sound && !check_sound (a, sound, fd_list, &error)))
    {
      limen_invocation_return_gerror (invocation, error);
      add_free (a);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (a->icon_bytes)
    limen_icon_validate_async (a->icon_bytes, 512, on_icon_validated, a);
  else
    validate_sound_then_send (a);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_remove_notification (LimenDbusPortalNotification *object, GDBusMethodInvocation *invocation,
                            const char *id, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  const char *backend;
  g_autofree char *key = NULL;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  backend = limen_backend_find (context, IMPL_IFACE, &error);
  if (backend == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  key = owner_key (limen_app_info_get_id (info), id);
  g_hash_table_remove (owners, key);
  /* The app id is ours to give: an app can only ever remove its own notifications. */
  g_dbus_connection_call (context->connection, backend, LIMEN_PORTAL_PATH, IMPL_IFACE, "RemoveNotification",
                          g_variant_new ("(ss)", limen_app_info_get_id (info), id), NULL,
                          G_DBUS_CALL_FLAGS_NONE, LIMEN_BACKEND_TIMEOUT_QUICK, NULL, NULL, NULL);
  limen_dbus_portal_notification_complete_remove_notification (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ActionInvoked from the Notification backend's current owner only, to the app that added
 * the notification: another app must not learn what this one's user clicked. */
static GVariant *
relay_action_invoked (const char *backend, const char *signal, GVariant *parameters, const char **destination)
{
  const char *app_id, *id, *action;
  g_autoptr(GVariant) parameter = NULL;
  g_autofree char *key = NULL;
  const char *owner;

  if (!g_str_equal (signal, "ActionInvoked") || !g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(sssav)")))
    return NULL;
  g_variant_get (parameters, "(&s&s&s@av)", &app_id, &id, &action, &parameter);
  key = owner_key (app_id, id);
  if ((owner = g_hash_table_lookup (owners, key)) == NULL)
    return NULL;
  *destination = owner;   /* the table keeps it until the app leaves */
  return g_variant_new ("(ss@av)", id, action, parameter);
}

static const LimenBackendRelay action_relay = {
  .impl_interface = IMPL_IFACE,
  .portal_interface = "org.freedesktop.portal.Notification",
  .signal = relay_action_invoked,
};

static void
on_peer_vanished (const char *name, gpointer user_data)
{
  GHashTableIter iter;
  const char *owner;

  g_hash_table_iter_init (&iter, owners);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &owner))
    if (g_str_equal (owner, name))
      g_hash_table_iter_remove (&iter);
}

/* What the frontend offers is capped by what the backend does: min(backend's version, 2).
 * A backend without a version property is a version 1 backend. Read again whenever the
 * backend (re)appears: it may have been replaced by another one. */
static void
on_backend_properties (GVariant *props, gpointer user_data)
{
  g_autoptr(GVariant) options = g_variant_lookup_value (props, "SupportedOptions", G_VARIANT_TYPE_VARDICT);
  g_auto(GVariantBuilder) supported = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  static const char *const keys[] = { "category", "button-purpose", NULL };
  guint32 version = 1;
  gsize size = 0;
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_variant_lookup (props, "version", "u", &version);
  backend_version = version;
  backend_version_known = TRUE;
  /* What the server makes something of is the backend's to say, and apps get it as the
   * backend says it (as from the reference): the specification's keys only in its form (a
   * list of at most 64 strings), a vendor's as they are, all of it of a sane size. */
  if (options)
    {
      g_variant_iter_init (&iter, options);
      while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
        {
          gboolean ours = g_strv_contains (keys, key);

          if ((!ours || (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING_ARRAY) &&
                         g_variant_n_children (value) <= 64)) &&
              (size += strlen (key) + g_variant_get_size (value)) <= 16384)
            g_variant_builder_add (&supported, "{sv}", key, value);
          else
            g_debug ("The backend's SupportedOptions %s is not passed on", key);
          g_variant_unref (value);
        }
    }
  if (skeleton)
    {
      limen_dbus_portal_notification_set_version (skeleton, CLAMP (version, 1, 2));
      limen_dbus_portal_notification_set_supported_options (skeleton, g_variant_builder_end (&supported));
    }
}

/* AddNotification/RemoveNotification with every field checked (icons by the separate
 * limen-validate-icon process), ActionInvoked routed back to the app alone. */
GDBusInterfaceSkeleton *
limen_notification_new (LimenPortalContext *context)
{
  const char *backend;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  owners = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  limen_app_info_add_vanished_watch (on_peer_vanished, NULL);
  skeleton = limen_dbus_portal_notification_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (skeleton));
  /* Until the backend has told, the version every backend has, and no options. */
  limen_dbus_portal_notification_set_version (skeleton, 1);
  limen_dbus_portal_notification_set_supported_options (skeleton, g_variant_new ("a{sv}", NULL));
  limen_backend_watch_properties (context, IMPL_IFACE, on_backend_properties, NULL);
  g_signal_connect (skeleton, "handle-add-notification", G_CALLBACK (handle_add_notification), context);
  g_signal_connect (skeleton, "handle-remove-notification", G_CALLBACK (handle_remove_notification), context);
  if ((backend = limen_backend_find (context, IMPL_IFACE, NULL)) != NULL)
    limen_backend_relay (context->connection, &action_relay, backend);
  return G_DBUS_INTERFACE_SKELETON (g_object_ref (skeleton));
}
