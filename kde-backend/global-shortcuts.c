/* Limen — org.freedesktop.impl.portal.GlobalShortcuts (version 2) on KDE's kglobalaccel.
 *
 * An app's shortcuts become actions of a KGlobalAccel component named after its app id, so
 * they show in System Settings under the app's name, keep their keys in kglobalshortcutsrc
 * across restarts, and are grabbed only while a session of the app has them bound. The
 * first BindShortcuts asks the person (the shim's dialog); a shortcut the daemon already
 * knows is bound again without asking, and one the person left out is never asked again.
 * What an app holds (its keys, its refusals) is recorded in the permission store
 * (shortcut-store.c), where the permissions page shows it; taken away there, from anywhere,
 * the app's sessions end and kglobalaccel forgets its keys.
 * ConfigureShortcuts shows the dialog for everything the session proposed.
 *
 * Key events reach only the frontend that owns the session (unicast signals): key timing
 * is nobody else's business. Activated carries an activation token (shortcut-signals.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <gio/gdesktopappinfo.h>
#include <glib/gi18n.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "kglobalaccel.h"
#include "shortcut-keys.h"
#include "shortcut-signals.h"
#include "shortcut-store.h"
#include "option-tables.h"
#include "shortcuts.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.GlobalShortcuts"


typedef struct {
  char    *id;
  char    *description;
  int      proposed;   /* the app's preferred trigger as a Qt key code, 0: none or unknown */
  GArray  *keys;       /* int Qt key codes kglobalaccel holds for it */
  gboolean bound;      /* registered and grabbing for this session */
  gboolean refused;    /* the person left it out */
  gboolean force;      /* the person chose its keys just now: they replace saved ones */
} Shortcut;

typedef struct _Job Job;

typedef struct {
  LimenKdeSession *session;
  char            *handle;
  char            *sender;
  char            *app_id;
  char            *component;   /* KGlobalAccel component */
  char            *app_name;    /* its friendly name */
  gboolean         remember;    /* an identified app: choices outlive the session */
  GPtrArray       *shortcuts;   /* Shortcut: the app's last proposal with its outcome */
  Job             *job;         /* a bind or configure in progress */
  GCancellable    *cancellable; /* cancelled when the session ends */
} GsSession;

struct _Job {
  GsSession             *gs;
  GDBusMethodInvocation *invocation;   /* BindShortcuts: answered when done */
  LimenKdeRequest       *request;      /* BindShortcuts' impl Request */
  GCancellable          *cancellable;
  GPtrArray             *wanted;       /* Shortcut: what the session ends up with */
  GHashTable            *known;        /* action → GArray keys, saved by kglobalaccel */
  GHashTable            *refused;      /* ids the person refused before (BindShortcuts) */
  gboolean               has_row;      /* the app's row in its store entry */
  gboolean               has_entry;    /* the entry at all (none: bound before it was recorded) */
  LimenQtDialog         *dialog;
  char                  *parent_window;
  char                  *activation_token;
  gboolean               configure;
  gboolean               changed;      /* configure: the bound set or keys changed */
  guint                  waiting;      /* async steps in flight */
  GError                *error;        /* the first failure */
};

static LimenDbusImplPortalGlobalShortcuts *skeleton;
static GPtrArray *all_sessions;   /* GsSession, not owned: for key events */
static guint anonymous_serial;

/* ---- shortcuts ---- */

static void
shortcut_free (Shortcut *s)
{
  g_free (s->id);
  g_free (s->description);
  g_clear_pointer (&s->keys, g_array_unref);
  g_free (s);
}

/* A GCopyFunc. */
static gpointer
shortcut_copy (gconstpointer data, gpointer user_data)
{
  const Shortcut *from = data;
  Shortcut *s = g_memdup2 (from, sizeof *s);

  s->id = g_strdup (from->id);
  s->description = g_strdup (from->description);
  s->keys = g_array_copy (from->keys);
  s->force = FALSE;
  return s;
}

static void
shortcut_set_keys (Shortcut *s, const int *keys, gsize n)
{
  g_array_set_size (s->keys, 0);
  g_array_append_vals (s->keys, keys, n);
}

/* The app's proposal (already filtered) as Shortcuts. */
static GPtrArray *
shortcuts_from_proposal (GVariant *proposal)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) shortcut_free);

  for (gsize i = 0; i < g_variant_n_children (proposal); i++)
    {
      g_autoptr(GVariant) values = NULL;
      Shortcut *s = g_new0 (Shortcut, 1);
      const char *id, *description = "", *trigger = NULL;

      g_variant_get_child (proposal, i, "(&s@a{sv})", &id, &values);
      g_variant_lookup (values, "description", "&s", &description);
      g_variant_lookup (values, "preferred_trigger", "&s", &trigger);
      s->id = g_strdup (id);
      s->description = g_strdup (description);
      s->keys = g_array_new (FALSE, FALSE, sizeof (int));
      if (trigger && !limen_kde_shortcut_parse (trigger, &s->proposed))
        g_debug ("Shortcut %s: preferred trigger \"%s\" not understood; none proposed", id, trigger);
      g_ptr_array_add (out, s);
    }
  return out;
}

static Shortcut *
shortcuts_find (GPtrArray *shortcuts, const char *id)
{
  for (guint i = 0; shortcuts && i < shortcuts->len; i++)
    {
      Shortcut *s = g_ptr_array_index (shortcuts, i);

      if (g_str_equal (s->id, id))
        return s;
    }
  return NULL;
}

static gboolean
shortcuts_any_bound (GPtrArray *shortcuts)
{
  for (guint i = 0; i < shortcuts->len; i++)
    if (((Shortcut *) g_ptr_array_index (shortcuts, i))->bound)
      return TRUE;
  return FALSE;
}

/* The bound shortcuts as the portal answers them, a(sa{sv}). */
static GVariant *
shortcuts_result (GPtrArray *shortcuts)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(sa{sv})"));
  for (guint i = 0; shortcuts && i < shortcuts->len; i++)
    {
      Shortcut *s = g_ptr_array_index (shortcuts, i);
      g_autofree char *trigger = NULL;
      GVariantBuilder entry;

      if (!s->bound)
        continue;
      trigger = limen_kde_shortcut_describe ((const int *) s->keys->data, s->keys->len);
      g_variant_builder_init (&entry, G_VARIANT_TYPE_VARDICT);
      g_variant_builder_add (&entry, "{sv}", "description", g_variant_new_string (s->description));
      g_variant_builder_add (&entry, "{sv}", "trigger_description", g_variant_new_string (trigger));
      g_variant_builder_add (&b, "(sa{sv})", s->id, &entry);
    }
  return g_variant_builder_end (&b);
}

static LimenKdeAccelAction
accel_action (GsSession *gs, Shortcut *s)
{
  LimenKdeAccelAction a = { gs->component, gs->app_name, s->id, *s->description ? s->description : s->id };

  return a;
}

/* ---- signals to the session's owner ---- */

static void
emit_to_owner (GsSession *gs, const char *signal, GVariant *params)
{
  GDBusConnection *connection = g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (skeleton));
  g_autoptr(GError) error = NULL;

  g_variant_ref_sink (params);
  if (connection && !g_dbus_connection_emit_signal (connection, gs->sender, LIMEN_KDE_OBJECT_PATH, IMPL_IFACE,
                                                    signal, params, &error))
    g_debug ("%s for %s not sent: %s", signal, gs->handle, error->message);
  g_variant_unref (params);
}

static void
emit_shortcuts_changed (GsSession *gs)
{
  emit_to_owner (gs, "ShortcutsChanged", g_variant_new ("(o@a(sa{sv}))", gs->handle, shortcuts_result (gs->shortcuts)));
}

static void
on_accel_key (const char *component, const char *action, gint64 timestamp, gboolean pressed, gpointer user_data)
{
  GDBusConnection *connection = g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (skeleton));

  for (guint i = 0; connection && all_sessions && i < all_sessions->len; i++)
    {
      GsSession *gs = g_ptr_array_index (all_sessions, i);
      Shortcut *s;

      if (!g_str_equal (gs->component, component) || !(s = shortcuts_find (gs->shortcuts, action)) || !s->bound)
        continue;
      g_debug ("Shortcut %s of %s %s", action, gs->handle, pressed ? "activated" : "deactivated");
      /* A press may raise a window of the app: it carries an activation token. */
      limen_kde_shortcut_signal (connection, gs->sender, gs->handle, pressed ? "Activated" : "Deactivated", action,
                                 timestamp, pressed ? gs->app_id : NULL);
    }
}

static void
on_accel_changed (const char *component, const char *action, const int *keys, gsize n_keys, gpointer user_data)
{
  for (guint i = 0; all_sessions && i < all_sessions->len; i++)
    {
      GsSession *gs = g_ptr_array_index (all_sessions, i);
      Shortcut *s;

      if (!g_str_equal (gs->component, component) || !(s = shortcuts_find (gs->shortcuts, action)) || !s->bound)
        continue;
      shortcut_set_keys (s, keys, n_keys);
      emit_shortcuts_changed (gs);
    }
}

static void
on_rebound (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) keys = limen_kde_accel_bind_finish (result, &error);
  char *id = user_data;

  if (!keys)
    g_warning ("Shortcut %s not bound again: %s", id, error->message);
  g_free (id);
}

/* kglobalaccel restarted: it knows the keys (saved) but nobody grabs them until registered. */
static void
on_accel_appeared (gpointer user_data)
{
  for (guint i = 0; all_sessions && i < all_sessions->len; i++)
    {
      GsSession *gs = g_ptr_array_index (all_sessions, i);

      for (guint k = 0; k < gs->shortcuts->len; k++)
        {
          Shortcut *s = g_ptr_array_index (gs->shortcuts, k);
          LimenKdeAccelAction a = accel_action (gs, s);

          if (s->bound)
            limen_kde_accel_bind_async (&a, (const int *) s->keys->data, s->keys->len, TRUE, gs->cancellable,
                                        on_rebound, g_strdup (s->id));
        }
    }
}

static const LimenKdeAccelListener accel_listener = { on_accel_key, on_accel_changed, on_accel_appeared };

/* ---- jobs: one BindShortcuts or ConfigureShortcuts at a time per session ---- */

static void
job_free (Job *job)
{
  if (job->gs && job->gs->job == job)
    job->gs->job = NULL;
  g_clear_object (&job->invocation);
  g_clear_object (&job->cancellable);
  g_clear_pointer (&job->wanted, g_ptr_array_unref);
  g_clear_pointer (&job->known, g_hash_table_unref);
  g_clear_pointer (&job->refused, g_hash_table_unref);
  g_free (job->parent_window);
  g_free (job->activation_token);
  g_clear_error (&job->error);
  g_free (job);
}

static Job *
job_new (GsSession *gs, gboolean configure, const char *parent_window)
{
  Job *job = g_new0 (Job, 1);

  job->gs = gs;
  job->configure = configure;
  job->cancellable = g_cancellable_new ();
  job->parent_window = g_strdup (parent_window);
  gs->job = job;
  return job;
}

/* The job ends early (its Request closed, its session closed): nothing is bound. */
static void
job_abort (Job *job, gboolean request_gone)
{
  g_cancellable_cancel (job->cancellable);
  if (job->dialog)
    limen_kde_shim_get (NULL)->limen_qt_close (job->dialog);
  if (job->invocation)
    limen_kde_reply_response (job->invocation, 2, NULL);
  if (job->request && !request_gone)
    limen_kde_request_finish (job->request);
  job_free (job);
}

static void
on_bind_request_closed (LimenKdeRequest *request, gpointer user_data)
{
  job_abort (user_data, TRUE);
}

/* Everything is bound (or failed): answer and keep the outcome in the session. */
static void
job_finish (Job *job)
{
  GsSession *gs = job->gs;

  if (job->error)
    {
      g_warning ("Global shortcuts of %s: %s", gs->app_id, job->error->message);
      if (job->invocation)
        limen_invocation_return_gerror (job->invocation, job->error);
    }
  else
    {
      g_clear_pointer (&gs->shortcuts, g_ptr_array_unref);
      gs->shortcuts = g_steal_pointer (&job->wanted);
      if (shortcuts_any_bound (gs->shortcuts))
        limen_kde_shortcut_signals_prepare ();
      if (job->invocation)
        {
          GVariantBuilder results;

          g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
          g_variant_builder_add (&results, "{sv}", "shortcuts", shortcuts_result (gs->shortcuts));
          limen_kde_reply_response (job->invocation, 0, g_variant_builder_end (&results));
        }
      else if (job->changed)
        emit_shortcuts_changed (gs);
    }
  if (job->request)
    limen_kde_request_finish (job->request);
  job_free (job);
}

/* One async step ended; @error (taken) is kept unless it is the job's own cancellation,
 * in which case the job is gone and nothing may be touched. FALSE then. */
static gboolean
job_step_failed (Job *job, GError *error)
{
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_error_free (error);
      return FALSE;
    }
  if (!job->error)
    job->error = error;
  else
    g_error_free (error);
  return TRUE;
}

/* ---- the permission store: refused shortcuts ---- */

static void job_decide (Job *job);
static void job_bind (Job *job);

static void
on_known (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Job *job = user_data;
  GError *error = NULL;
  GHashTable *known = limen_kde_accel_list_finish (result, &error);

  if (!known && !job_step_failed (job, error))
    return;
  job->known = known;
  if (--job->waiting == 0)
    job_decide (job);
}

static void
on_refused_read (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Job *job = user_data;
  GError *error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (!reply && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_error_free (error);
      return;
    }
  if (!reply && !(g_dbus_error_is_remote_error (error) &&
                  g_str_equal (g_dbus_error_get_remote_error (error), "org.freedesktop.portal.Error.NotFound")))
    g_debug ("Refused shortcuts of %s not read: %s", job->gs->app_id, error->message);
  g_clear_error (&error);
  job->refused = limen_kde_shortcut_store_refused (reply, job->gs->app_id, &job->has_row);
  job->has_entry = reply != NULL;
  if (--job->waiting == 0)
    job_decide (job);
}

static void
on_recorded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Job *job = user_data;
  g_autoptr(GError) error = NULL;

  if (!limen_kde_shortcut_store_record_finish (result, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      /* The bindings stand; the page does not show them and a refusal may be asked again. */
      g_warning ("Global shortcuts of %s not recorded in the permission store: %s", job->gs->app_id, error->message);
    }
  job_finish (job);
}

/* The descriptions of @shortcuts, a{ss}. */
static GVariant *
descriptions_of (GPtrArray *shortcuts)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{ss}"));
  for (guint i = 0; shortcuts && i < shortcuts->len; i++)
    {
      Shortcut *s = g_ptr_array_index (shortcuts, i);

      g_variant_builder_add (&b, "{ss}", s->id, s->description);
    }
  return g_variant_builder_end (&b);
}

/* Everything is bound: what the app holds now goes to the store, then the job answers. */
static void
job_record (Job *job)
{
  GsSession *gs = job->gs;
  GDBusConnection *connection = g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (skeleton));
  g_autoptr(GPtrArray) refused = g_ptr_array_new ();

  if (!gs->remember || job->error || !connection)
    {
      job_finish (job);
      return;
    }
  for (guint i = 0; i < job->wanted->len; i++)
    {
      Shortcut *s = g_ptr_array_index (job->wanted, i);

      if (s->refused)
        g_ptr_array_add (refused, s->id);
    }
  g_ptr_array_add (refused, NULL);
  limen_kde_shortcut_store_record_async (connection, gs->app_id, gs->component, (const char *const *) refused->pdata,
                                         descriptions_of (job->wanted), job->cancellable, on_recorded, job);
}

/* ---- the dialog ---- */

static void on_dialog_done (LimenQtDialog *dialog, int response, size_t n_chosen, const LimenQtShortcut *chosen,
                            void *user_data);

static gboolean
job_open_dialog (Job *job, GArray *items, GError **error)
{
  GsSession *gs = job->gs;
  const LimenKdeShim *shim = limen_kde_shim_get_for_dialog (error);
  LimenQtShortcutsSpec spec = { 0 };

  if (!shim)
    return FALSE;
  spec.window.parent_window = job->parent_window;
  spec.window.app_id = gs->app_id;
  spec.window.modal = 1;
  spec.app_name = gs->app_name;
  spec.component = gs->component;
  spec.configure = job->configure;
  spec.activation_token = job->activation_token;
  spec.n_shortcuts = items->len;
  spec.shortcuts = (const LimenQtShortcut *) items->data;
  job->dialog = shim->limen_qt_shortcuts_open (&spec, on_dialog_done, job);
  if (!job->dialog)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "The global shortcuts dialog could not be shown");
      return FALSE;
    }
  return TRUE;
}

/* Take the person's answer for @s. */
static void
apply_choice (Job *job, Shortcut *s, const LimenQtShortcut *c)
{
  int old = s->keys->len > 0 ? g_array_index (s->keys, int, 0) : 0;

  if (c->enabled)
    {
      if (!s->bound || old != c->key || s->keys->len > 1)
        {
          job->changed = TRUE;
          s->force = TRUE;
          shortcut_set_keys (s, &c->key, c->key ? 1 : 0);
        }
      s->bound = TRUE;
      s->refused = FALSE;
      return;
    }
  /* Forget its keys too (saved ones included): a refused shortcut leaves nothing in System
   * Settings. */
  job->changed |= s->bound;
  limen_kde_accel_unregister (job->gs->component, s->id);
  s->bound = FALSE;
  s->refused = TRUE;
  g_array_set_size (s->keys, 0);
}

static void
on_dialog_done (LimenQtDialog *dialog, int response, size_t n_chosen, const LimenQtShortcut *chosen,
                void *user_data)
{
  Job *job = user_data;

  job->dialog = NULL;
  g_debug ("Global shortcuts dialog of %s answered %d", job->gs->handle, response);
  if (response != LIMEN_QT_RESPONSE_OK)
    {
      /* Nothing changes: a first bind binds nothing and is asked again next time. */
      if (job->invocation)
        limen_kde_reply_response (job->invocation, (guint) response, NULL);
      g_clear_object (&job->invocation);
      if (job->request)
        limen_kde_request_finish (job->request);
      job_free (job);
      return;
    }
  for (size_t i = 0; i < n_chosen; i++)
    {
      Shortcut *s = shortcuts_find (job->wanted, chosen[i].id);

      if (s)
        apply_choice (job, s, &chosen[i]);
    }
  job_bind (job);
}

static void
job_decide (Job *job)
{
  g_autoptr(GArray) ask = g_array_new (FALSE, TRUE, sizeof (LimenQtShortcut));
  g_autoptr(GError) error = NULL;

  if (job->error)
    {
      job_finish (job);
      return;
    }
  for (guint i = 0; i < job->wanted->len; i++)
    {
      Shortcut *s = g_ptr_array_index (job->wanted, i);
      GArray *saved;
      LimenQtShortcut item = { s->id, s->description, s->proposed, 1 };

      if (g_hash_table_contains (job->refused, s->id))
        s->refused = TRUE;
      /* Saved keys count while the app's row is in the store, or with no entry at all (bound
       * before bindings were recorded); an entry without the row was revoked: asked again. */
      else if ((saved = g_hash_table_lookup (job->known, s->id))
               && (job->has_row || !job->has_entry || !job->gs->remember))
        {
          /* Bound before (by this app, or by the person in System Settings): keep its keys. */
          shortcut_set_keys (s, (const int *) saved->data, saved->len);
          s->bound = TRUE;
        }
      else
        g_array_append_val (ask, item);
    }
  if (ask->len == 0)
    job_bind (job);
  else if (!job_open_dialog (job, ask, &error))
    {
      job->error = g_steal_pointer (&error);
      job_finish (job);
    }
}

/* ---- binding ---- */

typedef struct {
  Job      *job;
  Shortcut *shortcut;
} BindStep;

static void
on_bound (GObject *source, GAsyncResult *result, gpointer user_data)
{
  BindStep *step = user_data;
  Job *job = step->job;
  Shortcut *s = step->shortcut;
  GError *error = NULL;
  g_autoptr(GArray) keys = limen_kde_accel_bind_finish (result, &error);

  g_free (step);
  if (!keys && !job_step_failed (job, error))
    return;
  if (keys)
    {
      if (s->force && keys->len < s->keys->len)
        g_message ("Shortcut %s of %s: its keys belong to another shortcut; bound without them", s->id,
                   job->gs->app_id);
      shortcut_set_keys (s, (const int *) keys->data, keys->len);
    }
  if (--job->waiting == 0)
    job_record (job);
}

/* TRUE when a session other than @gs has @id of @gs's component bound. */
static gboolean
bound_elsewhere (GsSession *gs, const char *id)
{
  for (guint i = 0; i < all_sessions->len; i++)
    {
      GsSession *other = g_ptr_array_index (all_sessions, i);
      Shortcut *s;

      if (other != gs && g_str_equal (other->component, gs->component) &&
          (s = shortcuts_find (other->shortcuts, id)) && s->bound)
        return TRUE;
    }
  return FALSE;
}

/* Stop grabbing @s for @gs: inactive (keys kept) for an app we know, gone for one we don't. */
static void
release (GsSession *gs, Shortcut *s)
{
  LimenKdeAccelAction a = accel_action (gs, s);

  if (!gs->remember)
    limen_kde_accel_unregister (gs->component, s->id);
  else if (!bound_elsewhere (gs, s->id))
    limen_kde_accel_set_inactive (&a);
}

static void
job_bind (Job *job)
{
  GsSession *gs = job->gs;

  /* A new proposal without shortcuts the session had: they stop. */
  for (guint i = 0; !job->configure && i < gs->shortcuts->len; i++)
    {
      Shortcut *s = g_ptr_array_index (gs->shortcuts, i);
      Shortcut *w = shortcuts_find (job->wanted, s->id);

      if (s->bound && !(w && w->bound))
        release (gs, s);
    }
  for (guint i = 0; i < job->wanted->len; i++)
    {
      Shortcut *s = g_ptr_array_index (job->wanted, i);
      LimenKdeAccelAction a = accel_action (gs, s);
      BindStep *step;

      if (!s->bound)
        continue;
      step = g_new0 (BindStep, 1);
      step->job = job;
      step->shortcut = s;
      job->waiting++;
      limen_kde_accel_bind_async (&a, (const int *) s->keys->data, s->keys->len, !s->force, job->cancellable,
                                  on_bound, step);
    }
  if (job->waiting == 0)
    job_record (job);
}

/* ---- revocations made in the permission store ---- */

/* Shortcuts of @gs refused elsewhere (another session's dialog, another client) stop. */
static void
unbind_refused (GsSession *gs, const char *const *refused)
{
  gboolean changed = FALSE;

  for (guint i = 0; i < gs->shortcuts->len; i++)
    {
      Shortcut *s = g_ptr_array_index (gs->shortcuts, i);

      if (!s->bound || !g_strv_contains (refused, s->id))
        continue;
      limen_kde_accel_unregister (gs->component, s->id);
      s->bound = FALSE;
      s->refused = TRUE;
      g_array_set_size (s->keys, 0);
      changed = TRUE;
    }
  if (changed)
    emit_shortcuts_changed (gs);
}

/* @app_id's entry changed: with its row gone (the permissions page, limen-permissions, flatpak
 * permission-reset, a raw Delete) its sessions end and kglobalaccel forgets its keys. */
static void
on_store_changed (const char *app_id, const char *const *refused, gpointer user_data)
{
  g_autoptr(GPtrArray) ending = g_ptr_array_new ();

  for (guint i = 0; *app_id && i < all_sessions->len; i++)
    {
      GsSession *gs = g_ptr_array_index (all_sessions, i);

      if (!gs->remember || !g_str_equal (gs->app_id, app_id))
        continue;
      if (refused == NULL)
        g_ptr_array_add (ending, gs->session);
      else
        unbind_refused (gs, refused);
    }
  for (guint i = 0; i < ending->len; i++)
    limen_kde_session_close (g_ptr_array_index (ending, i));
  if (refused == NULL && *app_id)
    {
      g_debug ("Global shortcuts of %s revoked: %u sessions closed", app_id, ending->len);
      limen_kde_accel_forget_component (app_id);
    }
}

/* Once exported: the store's changes are watched from the start, not from a first session. */
static gboolean
watch_store (gpointer user_data)
{
  GDBusConnection *connection = g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (skeleton));

  if (connection)
    {
      limen_kde_accel_init (connection, &accel_listener, NULL);
      limen_kde_shortcut_store_watch (connection, on_store_changed, NULL);
    }
  return G_SOURCE_REMOVE;
}

/* ---- methods ---- */

static GsSession *
session_for (GDBusMethodInvocation *invocation, const char *session_handle, GError **error)
{
  LimenKdeSession *session = limen_kde_session_lookup (g_dbus_method_invocation_get_sender (invocation),
                                                       session_handle);

  gpointer data = session ? limen_kde_session_get_data (session) : NULL;

  /* The handle may name a session of another interface (an Inhibit monitor). */
  if (!data || !g_ptr_array_find (all_sessions, data, NULL))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND, "No such global shortcuts session");
      return NULL;
    }
  return data;
}

static gboolean
check_idle (GsSession *gs, GError **error)
{
  if (gs->job)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                           "The shortcuts of this session are being bound or configured already");
      return FALSE;
    }
  return TRUE;
}

static gboolean
filter_options (GVariant *options, const LimenOption *table, GVariant **out, GError **error)
{
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

  if (!limen_options_filter (options, &filtered, error, table, NULL))
    return FALSE;
  *out = g_variant_ref_sink (g_variant_builder_end (&filtered));
  return TRUE;
}

static void
on_session_closed (LimenKdeSession *session, gpointer user_data)
{
  GsSession *gs = user_data;

  if (gs->job)
    job_abort (gs->job, FALSE);
  g_cancellable_cancel (gs->cancellable);
  g_ptr_array_remove (all_sessions, gs);
  limen_kde_shortcut_signals_forget (gs->handle);
  for (guint i = 0; i < gs->shortcuts->len; i++)
    {
      Shortcut *s = g_ptr_array_index (gs->shortcuts, i);

      if (s->bound)
        release (gs, s);
    }
  g_debug ("Global shortcuts session %s closed", gs->handle);
  g_ptr_array_unref (gs->shortcuts);
  g_object_unref (gs->cancellable);
  g_free (gs->handle);
  g_free (gs->sender);
  g_free (gs->app_id);
  g_free (gs->component);
  g_free (gs->app_name);
  g_free (gs);
}

static gboolean
on_create_session (LimenDbusImplPortalGlobalShortcuts *object, GDBusMethodInvocation *invocation,
                   const char *handle, const char *session_handle, const char *app_id, GVariant *options,
                   gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) opts = NULL;
  GsSession *gs;

  if (!limen_kde_request_check_handle (handle, &error) ||
      !limen_kde_check_string_arg ("app_id", app_id, 255, &error) ||
      !filter_options (options, limen_options_global_shortcuts_create_session, &opts, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_kde_accel_init (g_dbus_method_invocation_get_connection (invocation), &accel_listener, NULL);
  gs = g_new0 (GsSession, 1);
  gs->session = limen_kde_session_new (invocation, session_handle, on_session_closed, gs, &error);
  if (!gs->session)
    {
      g_free (gs);
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  gs->handle = g_strdup (session_handle);
  gs->sender = g_strdup (g_dbus_method_invocation_get_sender (invocation));
  gs->app_id = g_strdup (app_id);
  gs->remember = *app_id != '\0';
  /* An app without an id gets a component of its own, forgotten with the session. */
  gs->component = gs->remember ? g_strdup (app_id)
                               : g_strdup_printf ("limen-unidentified-%d-%u", (int) getpid (), ++anonymous_serial);
  gs->app_name = limen_kde_app_display_name (app_id);
  gs->shortcuts = g_ptr_array_new_with_free_func ((GDestroyNotify) shortcut_free);
  gs->cancellable = g_cancellable_new ();
  g_ptr_array_add (all_sessions, gs);
  g_debug ("Global shortcuts session %s for \"%s\" (component %s)", session_handle, app_id, gs->component);
  limen_kde_reply_response (invocation, 0, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_bind_shortcuts (LimenDbusImplPortalGlobalShortcuts *object, GDBusMethodInvocation *invocation,
                   const char *handle, const char *session_handle, GVariant *shortcuts, const char *parent_window,
                   GVariant *options, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) proposal = NULL;
  g_autoptr(GVariant) opts = NULL;
  GsSession *gs = NULL;
  Job *job;

  if (!limen_kde_request_check_handle (handle, &error) || !limen_check_parent_window (parent_window, &error) ||
      !(proposal = limen_shortcuts_filter (shortcuts, limen_shortcut_proposal_keys, &error)) ||
      !filter_options (options, limen_options_global_shortcuts_request, &opts, &error) ||
      !(gs = session_for (invocation, session_handle, &error)) || !check_idle (gs, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_variant_ref_sink (proposal);
  job = job_new (gs, FALSE, parent_window);
  job->request = limen_kde_request_new (invocation, handle, on_bind_request_closed, job, &error);
  if (!job->request)
    {
      job_free (job);
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  job->invocation = g_object_ref (invocation);
  job->wanted = shortcuts_from_proposal (proposal);
  job->waiting = 1;
  limen_kde_accel_list_async (gs->component, job->cancellable, on_known, job);
  if (gs->remember)
    {
      job->waiting++;
      limen_kde_shortcut_store_lookup (g_dbus_method_invocation_get_connection (invocation), gs->app_id,
                                       job->cancellable, on_refused_read, job);
    }
  else
    job->refused = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_list_shortcuts (LimenDbusImplPortalGlobalShortcuts *object, GDBusMethodInvocation *invocation,
                   const char *handle, const char *session_handle, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  GVariantBuilder results;
  GsSession *gs = NULL;

  if (!limen_kde_request_check_handle (handle, &error) || !(gs = session_for (invocation, session_handle, &error)))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&results, "{sv}", "shortcuts", shortcuts_result (gs->shortcuts));
  limen_kde_reply_response (invocation, 0, g_variant_builder_end (&results));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_configure_shortcuts (LimenDbusImplPortalGlobalShortcuts *object, GDBusMethodInvocation *invocation,
                        const char *session_handle, const char *parent_window, GVariant *options,
                        gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) opts = NULL;
  g_autoptr(GArray) items = g_array_new (FALSE, TRUE, sizeof (LimenQtShortcut));
  GsSession *gs = NULL;
  Job *job;

  if (!limen_check_parent_window (parent_window, &error) ||
      !filter_options (options, limen_options_global_shortcuts_configure, &opts, &error) ||
      !(gs = session_for (invocation, session_handle, &error)) || !check_idle (gs, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (gs->shortcuts->len == 0)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                     "No shortcuts to configure: none were bound in this session");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  job = job_new (gs, TRUE, parent_window);
  g_variant_lookup (opts, "activation_token", "s", &job->activation_token);
  job->wanted = g_ptr_array_copy (gs->shortcuts, shortcut_copy, NULL);
  g_ptr_array_set_free_func (job->wanted, (GDestroyNotify) shortcut_free);
  for (guint i = 0; i < job->wanted->len; i++)
    {
      Shortcut *s = g_ptr_array_index (job->wanted, i);
      LimenQtShortcut item = { s->id, s->description, s->proposed, !s->refused };

      if (s->bound)
        item.key = s->keys->len > 0 ? g_array_index (s->keys, int, 0) : 0;
      g_array_append_val (items, item);
    }
  if (!job_open_dialog (job, items, &error))
    {
      job_free (job);
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_dbus_impl_portal_global_shortcuts_complete_configure_shortcuts (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_global_shortcuts_new (void)
{
  skeleton = limen_dbus_impl_portal_global_shortcuts_skeleton_new ();
  limen_dbus_impl_portal_global_shortcuts_set_version (skeleton, 2);
  all_sessions = g_ptr_array_new ();
  g_signal_connect (skeleton, "handle-create-session", G_CALLBACK (on_create_session), NULL);
  g_signal_connect (skeleton, "handle-bind-shortcuts", G_CALLBACK (on_bind_shortcuts), NULL);
  g_signal_connect (skeleton, "handle-list-shortcuts", G_CALLBACK (on_list_shortcuts), NULL);
  g_signal_connect (skeleton, "handle-configure-shortcuts", G_CALLBACK (on_configure_shortcuts), NULL);
  g_idle_add (watch_store, NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
