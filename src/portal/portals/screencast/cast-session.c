/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A RemoteDesktop session is also used with ScreenCast.SelectSources, OpenPipeWireRemote
 * and the Clipboard portal, so the three portals keep one state per Session. Ending the
 * session (Close, the caller leaving the bus, shutdown) hides the session's streams from
 * every PipeWire remote handed out for it. */
#include "cast-session.h"

#include <string.h>

#include "permission-store.h"
#include "pipewire-remote.h"
#include "restore-tokens.h"

static void
cast_free (LimenCast *cast)
{
  g_free (cast->backend);
  g_clear_pointer (&cast->transfers, g_hash_table_unref);
  g_array_unref (cast->nodes);
  g_array_unref (cast->sizes);
  g_array_unref (cast->remotes);
  g_free (cast->restore_token);
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
    limen_pipewire_remote_revoke (g_array_index (cast->remotes, guint64, i),
                                  (const guint32 *) (gpointer) cast->nodes->data, cast->nodes->len);
  if (cast)
    g_array_set_size (cast->remotes, 0);
}

/* The person took back a restore token (the permissions page, flatpak permission-reset,
 * GNOME's or Plasma 6's pages): the session it would resume, if still running, ends now —
 * its streams stop reaching the app (on_closed), the backend ends the share, the app hears
 * Closed. */
static void
on_store_changed (const char *table, const char *id, GVariant *perms, gpointer user_data)
{
  g_autoptr(GPtrArray) ending = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_session_unref);
  GHashTableIter iter;
  LimenCast *cast;

  if (casts == NULL)
    return;
  g_hash_table_iter_init (&iter, casts);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &cast))
    {
      const char *want = cast->kind == LIMEN_CAST_SCREEN_CAST ? LIMEN_RESTORE_TABLE_SCREEN_CAST
                                                              : LIMEN_RESTORE_TABLE_REMOTE_DESKTOP;
      const char *app_id = limen_app_info_get_id (limen_session_get_app_info (cast->session));
      g_autofree const char **row = limen_permission_row (perms, app_id);

      if (cast->restore_token && g_str_equal (cast->restore_token, id) && g_str_equal (table, want)
          && limen_session_is_open (cast->session) && row == NULL)
        g_ptr_array_add (ending, limen_session_ref (cast->session));
    }
  for (guint i = 0; i < ending->len; i++)
    {
      LimenSession *session = g_ptr_array_index (ending, i);

      g_debug ("Restore token of %s revoked: the session is closed", limen_session_get_path (session));
      limen_session_close (session);
    }
}

void
limen_cast_watch_store (GDBusConnection *connection)
{
  static gboolean watching;

  if (watching)
    return;
  watching = TRUE;
  limen_permission_store_watch (connection, NULL, on_store_changed, NULL);
}

LimenCast *
limen_cast_attach (LimenSession *session, LimenCastKind kind, const char *backend)
{
  LimenCast *cast = g_new0 (LimenCast, 1);

  cast->session = session;
  cast->kind = kind;
  cast->backend = g_strdup (backend);
  cast->nodes = g_array_new (FALSE, FALSE, sizeof (guint32));
  cast->sizes = g_array_new (FALSE, FALSE, sizeof (LimenCastSize));
  cast->remotes = g_array_new (FALSE, FALSE, sizeof (guint64));
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
  gsize n;

  if (streams == NULL || !g_variant_is_of_type (streams, G_VARIANT_TYPE ("a(ua{sv})")) ||
      (n = g_variant_n_children (streams)) == 0 || n > LIMEN_CAST_MAX_STREAMS)
    return NULL;
  /* The app asked for one source: it gets one, and only that node on its remote. */
  if (n > 1 && cast->sources_selected && !cast->multiple)
    {
      g_message ("Backend answered %" G_GSIZE_FORMAT " streams where one was asked: the first is kept", n);
      n = 1;
    }
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(ua{sv})"));
  g_variant_iter_init (&iter, streams);
  while (cast->nodes->len < n && g_variant_iter_next (&iter, "(u@a{sv})", &node, &props))
    {
      LimenCastSize size = { 0, 0 };

      /* 0 is the PipeWire core and ~0 means "any object": never a stream. */
      if (node == 0 || node == G_MAXUINT32)
        {
          g_variant_unref (props);
          g_variant_builder_clear (&b);
          g_array_set_size (cast->nodes, 0);
          g_array_set_size (cast->sizes, 0);
          return NULL;
        }
      if (!g_variant_lookup (props, "size", "(ii)", &size.width, &size.height) || size.width <= 0 ||
          size.height <= 0)
        size.width = size.height = 0;
      g_array_append_val (cast->nodes, node);
      g_array_append_val (cast->sizes, size);
      g_variant_builder_add (&b, "(u@a{sv})", node, stream_properties (props));
      g_variant_unref (props);
    }
  return g_variant_builder_end (&b);
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
