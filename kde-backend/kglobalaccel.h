/* Limen — a client of KDE's global shortcut daemon (org.kde.kglobalaccel) over GDBus.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* One action as KGlobalAccel names it: component and action, each unique and friendly. */
typedef struct {
  const char *component;
  const char *component_name;
  const char *action;
  const char *action_name;
} LimenKdeAccelAction;

typedef struct {
  /* A bound key went down (@pressed) or up. @timestamp: the input event's time, in ms. */
  void (*key) (const char *component, const char *action, gint64 timestamp, gboolean pressed,
               gpointer user_data);
  /* Someone else (System Settings) gave @action new keys (Qt key codes). */
  void (*changed) (const char *component, const char *action, const int *keys, gsize n_keys,
                   gpointer user_data);
  /* The daemon came (back) on the bus: actions must be registered again to be active. */
  void (*appeared) (gpointer user_data);
} LimenKdeAccelListener;

/* Start listening to the daemon's signals on @connection. Never blocks, starts nothing. */
void limen_kde_accel_init (GDBusConnection *connection, const LimenKdeAccelListener *listener,
                           gpointer user_data);

/* Register @action and make it present with @keys (Qt key codes, the first chord of each
 * sequence). @keep_saved: keys the daemon already saved for it win over @keys (a restart, a
 * shortcut bound before); else @keys replace them. The task's value is a GArray of int: the
 * keys the daemon really set (it drops a key another component holds). */
void limen_kde_accel_bind_async (const LimenKdeAccelAction *action, const int *keys, gsize n_keys,
                                 gboolean keep_saved, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
GArray *limen_kde_accel_bind_finish (GAsyncResult *result, GError **error);

/* The actions the daemon knows for @component (saved or registered): a table of action id →
 * GArray of int keys; empty when the component is unknown. */
void limen_kde_accel_list_async (const char *component, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
GHashTable *limen_kde_accel_list_finish (GAsyncResult *result, GError **error);

/* The action stops grabbing its keys until registered again; its keys stay saved. */
void limen_kde_accel_set_inactive (const LimenKdeAccelAction *action);

/* Forget @action of @component, keys included (a shortcut the person refused). */
void limen_kde_accel_unregister (const char *component, const char *action);

/* Forget every action of @component, keys included (what an app held was revoked). */
void limen_kde_accel_forget_component (const char *component);

G_END_DECLS
