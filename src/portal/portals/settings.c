/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Settings are read far more often than they change, so each backend's ReadAll is
 * fetched once and then kept current from its SettingChanged signals; a backend that
 * restarts is read afresh. Keys missing from every backend's ReadAll still get a direct
 * Read, so nothing a backend answers is hidden.
 */
#include "portal.h"

#include "fast-path.h"

#include <string.h>

#define IMPL_IFACE "org.freedesktop.impl.portal.Settings"
#define S_IFACE "org.freedesktop.portal.Settings"
#define BACKEND_TIMEOUT_MS 5000
#define NAME_MAX_LEN 1024
#define NAMESPACES_MAX 256
#define RETRY_DELAY_US (30 * G_USEC_PER_SEC)

typedef struct _Backend Backend;

struct _Backend {
  char       *name;
  GVariant   *all;        /* a{sa{sv}} from ReadAll, NULL until loaded */
  gboolean    loading;
  guint       changed_id;
  guint       watch_id;
  guint       generation; /* bumped when the backend restarts: late replies are dropped */
  gint64      retry_after; /* monotonic µs: a backend that failed is not asked again before */
};

typedef void (*QueryFunc) (GDBusMethodInvocation *invocation, gpointer data);

typedef struct {
  GDBusMethodInvocation *invocation;
  QueryFunc              func;
  gpointer               data;
  GDestroyNotify         destroy;
} Query;

static GDBusConnection *connection;
static GPtrArray *backends;       /* Backend, in preference order */
static GQueue pending = G_QUEUE_INIT;
static LimenDbusPortalSettings *skeleton;
/* Guards every change of a Backend's `all` (main thread) against readers on GDBus's
 * worker thread (fast path); main-thread readers need no lock. */
static GMutex cache_lock;

static void
backend_set_all (Backend *b, GVariant *all)
{
  GVariant *old;

  g_mutex_lock (&cache_lock);
  old = b->all;
  b->all = all;
  g_mutex_unlock (&cache_lock);
  if (old)
    g_variant_unref (old);
}

static gboolean
all_loaded_or_failed (void)
{
  for (guint i = 0; i < backends->len; i++)
    if (((Backend *) g_ptr_array_index (backends, i))->loading)
      return FALSE;
  return TRUE;
}

static void
run_pending (void)
{
  Query *q;

  if (!all_loaded_or_failed ())
    return;
  while ((q = g_queue_pop_head (&pending)))
    {
      q->func (q->invocation, q->data);
      if (q->destroy)
        q->destroy (q->data);
      g_free (q);
    }
}

typedef struct {
  Backend *backend;
  guint    generation;
} LoadData;

static void
on_read_all (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LoadData *ld = user_data;
  Backend *b = ld->backend;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (ld->generation == b->generation)
    {
      b->loading = FALSE;
      if (reply)
        backend_set_all (b, g_variant_get_child_value (reply, 0));
      else
        {
          /* Not again for a while (unless it appears on the bus): each query would pay for it. */
          b->retry_after = g_get_monotonic_time () + RETRY_DELAY_US;
          g_message ("Settings backend %s did not answer ReadAll: %s", b->name, error->message);
        }
    }
  g_free (ld);
  run_pending ();
}

static void
ensure_loaded (void)
{
  for (guint i = 0; i < backends->len; i++)
    {
      Backend *b = g_ptr_array_index (backends, i);
      LoadData *ld;

      if (b->all || b->loading || g_get_monotonic_time () < b->retry_after)
        continue;
      b->loading = TRUE;
      ld = g_new0 (LoadData, 1);
      ld->backend = b;
      ld->generation = b->generation;
      /* Auto-start: a backend with a .service file is activated on first use. [""] rather
       * than []: both mean "everything", but xdg-desktop-portal-kde 5.27 answers [] with {}. */
      g_dbus_connection_call (connection, b->name, LIMEN_PORTAL_PATH, IMPL_IFACE, "ReadAll",
                              g_variant_new ("(^as)", (const char *[]) { "", NULL }),
                              G_VARIANT_TYPE ("(a{sa{sv}})"), G_DBUS_CALL_FLAGS_NONE,
                              BACKEND_TIMEOUT_MS, NULL, on_read_all, ld);
    }
}

static void
queue_query (GDBusMethodInvocation *invocation, QueryFunc func, gpointer data, GDestroyNotify destroy)
{
  Query *q = g_new0 (Query, 1);

  q->invocation = invocation;
  q->func = func;
  q->data = data;
  q->destroy = destroy;
  g_queue_push_tail (&pending, q);
  ensure_loaded ();
  run_pending ();
}

/* Replace one key in a cached a{sa{sv}}. */
static GVariant *
variant_with_setting (GVariant *all, const char *ns, const char *key, GVariant *value)
{
  GVariantBuilder outer;
  GVariantIter iter;
  const char *n;
  GVariant *dict;
  gboolean found_ns = FALSE;

  g_variant_builder_init (&outer, G_VARIANT_TYPE ("a{sa{sv}}"));
  g_variant_iter_init (&iter, all);
  while (g_variant_iter_next (&iter, "{&s@a{sv}}", &n, &dict))
    {
      if (strcmp (n, ns) == 0)
        {
          GVariantDict d;

          g_variant_dict_init (&d, dict);
          g_variant_dict_insert_value (&d, key, value);
          g_variant_builder_add (&outer, "{s@a{sv}}", n, g_variant_dict_end (&d));
          found_ns = TRUE;
        }
      else
        g_variant_builder_add (&outer, "{s@a{sv}}", n, dict);
      g_variant_unref (dict);
    }
  if (!found_ns)
    {
      GVariantDict d;

      g_variant_dict_init (&d, NULL);
      g_variant_dict_insert_value (&d, key, value);
      g_variant_builder_add (&outer, "{s@a{sv}}", ns, g_variant_dict_end (&d));
    }
  return g_variant_ref_sink (g_variant_builder_end (&outer));
}

static void
on_backend_setting_changed (GDBusConnection *c, const char *sender, const char *path,
                            const char *iface, const char *signal, GVariant *params, gpointer user_data)
{
  Backend *b = user_data;
  const char *ns, *key;
  g_autoptr(GVariant) value = NULL;

  if (!g_variant_is_of_type (params, G_VARIANT_TYPE ("(ssv)")))
    return;
  g_variant_get (params, "(&s&sv)", &ns, &key, &value);
  if (b->all)
    backend_set_all (b, variant_with_setting (b->all, ns, key, value));
  limen_dbus_portal_settings_emit_setting_changed (skeleton, ns, key, g_variant_new_variant (value));
}

static void
on_backend_appeared (GDBusConnection *c, const char *name, const char *owner, gpointer user_data)
{
  Backend *b = user_data;

  b->retry_after = 0;
}

static void
on_backend_vanished (GDBusConnection *c, const char *name, gpointer user_data)
{
  Backend *b = user_data;

  /* A restarted backend may have other values: read it again next time. */
  backend_set_all (b, NULL);
  if (b->loading)
    {
      b->loading = FALSE;
      b->generation++;
      run_pending ();
    }
}

static gboolean
namespace_matches (const char * const *patterns, const char *ns)
{
  if (patterns[0] == NULL)
    return TRUE;
  for (guint i = 0; patterns[i]; i++)
    {
      const char *p = patterns[i];
      gsize len = strlen (p);

      if (len == 0 || strcmp (p, ns) == 0)
        return TRUE;
      /* "org.example.*" globs the trailing sections only. */
      if (len >= 2 && g_str_has_suffix (p, ".*") && strncmp (p, ns, len - 1) == 0)
        return TRUE;
    }
  return FALSE;
}

/* The merged value of (ns, key) from the caches, first backend winning; NULL if none has it. */
static GVariant *
lookup_cached (const char *ns, const char *key)
{
  for (guint i = 0; i < backends->len; i++)
    {
      Backend *b = g_ptr_array_index (backends, i);
      g_autoptr(GVariant) dict = NULL;
      GVariant *value;

      if (b->all == NULL || !g_variant_lookup (b->all, ns, "@a{sv}", &dict))
        continue;
      value = g_variant_lookup_value (dict, key, NULL);
      if (value)
        return value;
    }
  return NULL;
}

/* What the specification promises even when no backend says anything: these read 0. */
static const char *const appearance_defaulted[] = { "color-scheme", "contrast", "reduced-motion", NULL };

static GVariant *
appearance_default (const char *key)
{
  if (g_strv_contains (appearance_defaulted, key))
    return g_variant_ref_sink (g_variant_new_uint32 (0));
  return NULL;
}

static void
do_read_all (GDBusMethodInvocation *invocation, gpointer data)
{
  const char * const *patterns = data;
  g_autoptr(GHashTable) merged = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                        (GDestroyNotify) g_variant_dict_unref);
  GVariantBuilder out;
  GHashTableIter hiter;
  const char *ns;
  GVariantDict *dict;

  for (guint i = 0; i < backends->len; i++)
    {
      Backend *b = g_ptr_array_index (backends, i);
      GVariantIter iter;
      GVariant *nsdict;
      const char *n;

      if (b->all == NULL)
        continue;
      g_variant_iter_init (&iter, b->all);
      while (g_variant_iter_next (&iter, "{&s@a{sv}}", &n, &nsdict))
        {
          GVariantIter kiter;
          const char *key;
          GVariant *value;
          GVariantDict *d;

          if (!namespace_matches (patterns, n))
            {
              g_variant_unref (nsdict);
              continue;
            }
          d = g_hash_table_lookup (merged, n);
          if (d == NULL)
            {
              d = g_variant_dict_new (NULL);
              g_hash_table_insert (merged, g_strdup (n), d);
            }
          g_variant_iter_init (&kiter, nsdict);
          while (g_variant_iter_next (&kiter, "{&sv}", &key, &value))
            {
              if (!g_variant_dict_contains (d, key))
                g_variant_dict_insert_value (d, key, value);
              g_variant_unref (value);
            }
          g_variant_unref (nsdict);
        }
    }
  /* The backends' appearance keys pass as they are (as from the reference and upstream's
   * frontends); only when none of them has the namespace do the defaults stand in. */
  if (namespace_matches (patterns, "org.freedesktop.appearance") &&
      !g_hash_table_contains (merged, "org.freedesktop.appearance"))
    {
      GVariantDict *d = g_variant_dict_new (NULL);

      g_hash_table_insert (merged, g_strdup ("org.freedesktop.appearance"), d);
      for (const char *const *k = appearance_defaulted; *k; k++)
        {
          g_autoptr(GVariant) v = appearance_default (*k);
          g_variant_dict_insert_value (d, *k, v);
        }
    }

  g_variant_builder_init (&out, G_VARIANT_TYPE ("a{sa{sv}}"));
  g_hash_table_iter_init (&hiter, merged);
  while (g_hash_table_iter_next (&hiter, (gpointer *) &ns, (gpointer *) &dict))
    g_variant_builder_add (&out, "{s@a{sv}}", ns, g_variant_dict_end (dict));
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(@a{sa{sv}})", g_variant_builder_end (&out)));
}

typedef struct {
  char    *ns;
  char    *key;
  gboolean wrap;          /* Read (v1) wraps the value in one more variant */
  guint    next_backend;  /* for direct Reads of keys no ReadAll listed */
} ReadData;

static void
read_data_free (ReadData *rd)
{
  g_free (rd->ns);
  g_free (rd->key);
  g_free (rd);
}

static void
return_value (GDBusMethodInvocation *invocation, ReadData *rd, GVariant *value)
{
  GVariant *v = rd->wrap ? g_variant_new_variant (g_variant_new_variant (value)) : g_variant_new_variant (value);

  g_dbus_method_invocation_return_value (invocation, g_variant_new_tuple (&v, 1));
}

static void read_from_next_backend (GDBusMethodInvocation *invocation, ReadData *rd);

typedef struct {
  GDBusMethodInvocation *invocation;
  ReadData              *rd;
} DirectRead;

static void
on_direct_read (GObject *source, GAsyncResult *result, gpointer user_data)
{
  DirectRead *dr = user_data;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);

  if (reply)
    {
      g_autoptr(GVariant) value = NULL;

      g_variant_get (reply, "(v)", &value);
      return_value (dr->invocation, dr->rd, value);
      read_data_free (dr->rd);
    }
  else
    read_from_next_backend (dr->invocation, dr->rd);
  g_free (dr);
}

static void
read_from_next_backend (GDBusMethodInvocation *invocation, ReadData *rd)
{
  g_autoptr(GVariant) fallback = NULL;

  while (rd->next_backend < backends->len)
    {
      Backend *b = g_ptr_array_index (backends, rd->next_backend++);
      DirectRead *dr;

      if (b->all == NULL)
        continue;   /* unreachable just now: do not wait on it twice */
      dr = g_new0 (DirectRead, 1);
      dr->invocation = invocation;
      dr->rd = rd;
      g_dbus_connection_call (connection, b->name, LIMEN_PORTAL_PATH, IMPL_IFACE, "Read",
                              g_variant_new ("(ss)", rd->ns, rd->key), G_VARIANT_TYPE ("(v)"),
                              G_DBUS_CALL_FLAGS_NO_AUTO_START, BACKEND_TIMEOUT_MS, NULL, on_direct_read, dr);
      return;
    }
  if (strcmp (rd->ns, "org.freedesktop.appearance") == 0 && (fallback = appearance_default (rd->key)))
    return_value (invocation, rd, fallback);
  else
    g_dbus_method_invocation_return_error (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                           "Requested setting not found");
  read_data_free (rd);
}

static void
do_read (GDBusMethodInvocation *invocation, gpointer data)
{
  ReadData *rd = data;
  g_autoptr(GVariant) value = lookup_cached (rd->ns, rd->key);

  if (value)
    {
      return_value (invocation, rd, value);
      read_data_free (rd);
      return;
    }
  read_from_next_backend (invocation, rd);
}

static gboolean
check_name (GDBusMethodInvocation *invocation, const char *what, const char *s)
{
  if (strlen (s) > NAME_MAX_LEN || !g_utf8_validate (s, -1, NULL))
    {
      g_dbus_method_invocation_return_error (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                             "Invalid %s", what);
      return FALSE;
    }
  return TRUE;
}

static gboolean
handle_read_all (LimenDbusPortalSettings *object, GDBusMethodInvocation *invocation,
                 const char * const *namespaces)
{
  guint n = g_strv_length ((char **) namespaces);
  /* No answer depends on who asks, but a caller that cannot be identified is refused here
   * as by every portal (its metadata is a claim that did not parse). */
  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);

  if (n > NAMESPACES_MAX)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Too many namespaces");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  for (guint i = 0; i < n; i++)
    if (!check_name (invocation, "namespace", namespaces[i]))
      return G_DBUS_METHOD_INVOCATION_HANDLED;
  queue_query (invocation, do_read_all, g_strdupv ((char **) namespaces), (GDestroyNotify) g_strfreev);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
start_read (GDBusMethodInvocation *invocation, const char *ns, const char *key, gboolean wrap)
{
  ReadData *rd;
  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);

  if (!check_name (invocation, "namespace", ns) || !check_name (invocation, "key", key))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  rd = g_new0 (ReadData, 1);
  rd->ns = g_strdup (ns);
  rd->key = g_strdup (key);
  rd->wrap = wrap;
  /* do_read owns rd from here on. */
  queue_query (invocation, do_read, rd, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_read (LimenDbusPortalSettings *object, GDBusMethodInvocation *invocation,
             const char *ns, const char *key)
{
  return start_read (invocation, ns, key, TRUE);
}

static gboolean
handle_read_one (LimenDbusPortalSettings *object, GDBusMethodInvocation *invocation,
                 const char *ns, const char *key)
{
  return start_read (invocation, ns, key, FALSE);
}

/* Worker thread: answer Read/ReadOne from the caches when every backend is loaded and one
 * of them has the key; anything else (loading, defaults, NotFound) goes the normal way. */
static GDBusMessage *
fast_read (GDBusMessage *call, gboolean wrap)
{
  const char *ns, *key;
  GVariant *value = NULL;
  GVariant *v;
  GDBusMessage *reply;

  g_variant_get (g_dbus_message_get_body (call), "(&s&s)", &ns, &key);
  if (strlen (ns) > NAME_MAX_LEN || strlen (key) > NAME_MAX_LEN)
    return NULL;
  g_mutex_lock (&cache_lock);
  for (guint i = 0; i < backends->len; i++)
    if (((Backend *) g_ptr_array_index (backends, i))->all == NULL)
      {
        g_mutex_unlock (&cache_lock);
        return NULL;
      }
  value = lookup_cached (ns, key);
  g_mutex_unlock (&cache_lock);
  if (value == NULL)
    return NULL;
  v = wrap ? g_variant_new_variant (g_variant_new_variant (value)) : g_variant_new_variant (value);
  g_variant_unref (value);
  reply = g_dbus_message_new_method_reply (call);
  g_dbus_message_set_body (reply, g_variant_new_tuple (&v, 1));
  return reply;
}

static GDBusMessage *
fast_read_v1 (GDBusMessage *call, LimenAppInfo *info)
{
  return fast_read (call, TRUE);
}

static GDBusMessage *
fast_read_one (GDBusMessage *call, LimenAppInfo *info)
{
  return fast_read (call, FALSE);
}

/* org.freedesktop.portal.Settings v2, merged from every configured Settings backend. */
GDBusInterfaceSkeleton *
limen_settings_new (LimenPortalContext *context)
{
  g_autoptr(GPtrArray) impls = limen_portal_config_find_all_for_desktop (context->config, IMPL_IFACE);

  connection = context->connection;
  backends = g_ptr_array_new ();
  for (guint i = 0; i < impls->len; i++)
    {
      const LimenPortalImpl *impl = g_ptr_array_index (impls, i);
      Backend *b = g_new0 (Backend, 1);

      b->name = g_strdup (impl->dbus_name);
      b->changed_id = g_dbus_connection_signal_subscribe (connection, b->name, IMPL_IFACE, "SettingChanged",
                                                          LIMEN_PORTAL_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                          on_backend_setting_changed, b, NULL);
      b->watch_id = g_bus_watch_name_on_connection (connection, b->name, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                    on_backend_appeared, on_backend_vanished, b, NULL);
      g_ptr_array_add (backends, b);
      g_debug ("Settings backend: %s", b->name);
    }

  skeleton = limen_dbus_portal_settings_skeleton_new ();

  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (skeleton));
  limen_dbus_portal_settings_set_version (skeleton, 2);
  g_signal_connect (skeleton, "handle-read-all", G_CALLBACK (handle_read_all), NULL);
  g_signal_connect (skeleton, "handle-read", G_CALLBACK (handle_read), NULL);
  g_signal_connect (skeleton, "handle-read-one", G_CALLBACK (handle_read_one), NULL);
  if (backends->len > 0)
    {
      limen_fast_path_add (S_IFACE, "Read", "ss", fast_read_v1);
      limen_fast_path_add (S_IFACE, "ReadOne", "ss", fast_read_one);
    }
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
