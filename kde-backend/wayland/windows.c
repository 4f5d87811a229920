/* Limen — the workspace's windows through org_kde_plasma_window_management, for the
 * screen-sharing picker (KWin names each window by the uuid its screencast protocol
 * streams by) and for Background.GetAppState (which apps have windows, which one is
 * active).
 *
 * The window interface has thirty-odd events of which the picker needs four; a generic
 * dispatcher takes them by name and ignores the rest, instead of thirty empty handlers.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include <unistd.h>

#include "wl-private.h"
#include "plasma-window-management-client-protocol.h"

typedef struct {
  LimenWl                 *wl;
  struct org_kde_plasma_window *proxy;
  char                    *uuid, *title, *app_id, *icon;
  guint32                  pid;
  gboolean                 ready;   /* initial_state came */
  gboolean                 active;
} WindowState;

static void
window_state_free (gpointer data)
{
  WindowState *w = data;

  org_kde_plasma_window_destroy (w->proxy);
  g_free (w->uuid);
  g_free (w->title);
  g_free (w->app_id);
  g_free (w->icon);
  g_free (w);
}

static void
replace (char **field, const char *value)
{
  g_free (*field);
  /* Titles come from the apps: keep them printable and bounded for the dialog. */
  *field = g_utf8_make_valid (value ? value : "", MIN (strlen (value ? value : ""), 512));
}

static gboolean
emit_windows_changed (gpointer data)
{
  LimenWl *wl = data;

  wl->windows_changed_id = 0;
  if (wl->windows_changed)
    wl->windows_changed (wl->windows_changed_data);
  return G_SOURCE_REMOVE;
}

/* Windows come and go in bursts (an app maps several): one report per burst. */
static void
windows_changed (LimenWl *wl)
{
  if (wl->windows_changed && wl->windows_changed_id == 0)
    wl->windows_changed_id = g_timeout_add (200, emit_windows_changed, wl);
}

static int
window_dispatch (const void *impl, void *target, uint32_t opcode, const struct wl_message *message,
                 union wl_argument *args)
{
  WindowState *w = wl_proxy_get_user_data (target);
  LimenWl *wl = w->wl;

  if (g_str_equal (message->name, "title_changed"))
    replace (&w->title, args[0].s);
  else if (g_str_equal (message->name, "app_id_changed"))
    {
      replace (&w->app_id, args[0].s);
      if (w->ready)
        windows_changed (wl);
    }
  else if (g_str_equal (message->name, "themed_icon_name_changed"))
    replace (&w->icon, args[0].s);
  else if (g_str_equal (message->name, "pid_changed"))
    w->pid = args[0].u;
  else if (g_str_equal (message->name, "state_changed"))
    {
      gboolean active = (args[0].u & ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_ACTIVE) != 0;

      if (active != w->active && w->ready)
        windows_changed (wl);
      w->active = active;
    }
  else if (g_str_equal (message->name, "initial_state"))
    {
      w->ready = TRUE;
      windows_changed (wl);
    }
  else if (g_str_equal (message->name, "unmapped"))
    {
      g_ptr_array_remove (wl->windows, w);
      windows_changed (wl);
    }
  return 0;
}

static int
manager_dispatch (const void *impl, void *target, uint32_t opcode, const struct wl_message *message,
                  union wl_argument *args)
{
  LimenWl *wl = wl_proxy_get_user_data (target);
  WindowState *w;

  if (!g_str_equal (message->name, "window_with_uuid") || !args[1].s || wl->windows->len >= 512)
    return 0;
  w = g_new0 (WindowState, 1);
  w->wl = wl;
  w->uuid = g_strdup (args[1].s);
  w->proxy = org_kde_plasma_window_management_get_window_by_uuid ((struct org_kde_plasma_window_management *) target, args[1].s);
  wl_proxy_add_dispatcher ((struct wl_proxy *) w->proxy, window_dispatch, NULL, w);
  g_ptr_array_add (wl->windows, w);
  return 0;
}

/* Bind the manager (connection.c calls this from the registry). */
void
limen_wl_windows_bind (LimenWl *wl, struct wl_registry *registry, guint32 name, guint32 version)
{
  /* Windows are announced with their uuid from version 13 on. */
  if (version < 13 || wl->window_management)
    return;
  wl->windows = g_ptr_array_new_with_free_func (window_state_free);
  wl->window_view = g_array_new (FALSE, TRUE, sizeof (LimenWlWindow));
  wl->window_management = wl_registry_bind (registry, name, &org_kde_plasma_window_management_interface,
                                            MIN (version, 16));
  wl_proxy_add_dispatcher (wl->window_management, manager_dispatch, NULL, wl);
}

const LimenWlWindow *
limen_wl_windows (LimenWl *wl, gsize *n_out)
{
  *n_out = 0;
  if (!wl->windows)
    return NULL;
  g_array_set_size (wl->window_view, 0);
  for (guint i = 0; i < wl->windows->len; i++)
    {
      WindowState *s = g_ptr_array_index (wl->windows, i);
      LimenWlWindow w = { s->uuid, s->title ? s->title : "", s->app_id ? s->app_id : "", s->icon ? s->icon : "",
                          s->active };

      /* Our own dialogs (the picker itself) are not offered. */
      if (!s->ready || s->pid == (guint32) getpid ())
        continue;
      g_array_append_val (wl->window_view, w);
    }
  *n_out = wl->window_view->len;
  return (const LimenWlWindow *) wl->window_view->data;
}

void
limen_wl_windows_watch (LimenWl *wl, void (*changed) (gpointer user_data), gpointer user_data)
{
  wl->windows_changed = changed;
  wl->windows_changed_data = user_data;
}
