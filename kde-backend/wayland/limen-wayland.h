/* Limen — limen-kde's Wayland protocol clients, seen from the impl interfaces.
 *
 * KWin's screencast (zkde_screencast_unstable_v1), fake input (org_kde_kwin_fake_input)
 * and data control (zwlr_data_control_manager_v1) on one wl_display connection of our
 * own, dispatched from the GLib main loop; activation tokens (xdg_activation_v1) on a
 * second, lighter one. The code lives in liblimen-kde-wayland.so,
 * which limen-kde opens on the first screen-sharing, remote-desktop or clipboard
 * request (loader.c), so that an idle backend maps no Wayland library.
 *
 * Plain C on GLib. Strings passed in are copied; strings handed to callbacks live for
 * the call only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#if defined(__GNUC__)
#define LIMEN_WL_EXPORT __attribute__ ((visibility ("default")))
#else
#define LIMEN_WL_EXPORT
#endif

typedef struct _LimenWl LimenWl;
typedef struct _LimenWlStream LimenWlStream;
typedef struct _LimenWlSelection LimenWlSelection;

/* What KWin offers this client (bits of LIMEN_WL_HAS_*). */
enum {
  LIMEN_WL_HAS_SCREENCAST = 1 << 0,
  LIMEN_WL_HAS_VIRTUAL_OUTPUT = 1 << 1,   /* zkde_screencast version >= 2 */
  LIMEN_WL_HAS_REGION = 1 << 2,           /* zkde_screencast version >= 3 */
  LIMEN_WL_HAS_FAKE_INPUT = 1 << 3,
  LIMEN_WL_HAS_FAKE_KEYBOARD = 1 << 4,    /* fake input version >= 4 */
  LIMEN_WL_HAS_FAKE_TOUCH = 1 << 5,       /* fake input version >= 2 */
  LIMEN_WL_HAS_FAKE_ABSOLUTE = 1 << 6,    /* fake input version >= 3 */
  LIMEN_WL_HAS_DATA_CONTROL = 1 << 7,
  LIMEN_WL_HAS_WINDOWS = 1 << 8,          /* plasma window management with uuids */
};

/* One screen as the compositor describes it (logical coordinates). */
typedef struct {
  const char *name;          /* connector, e.g. "Virtual-0" */
  const char *description;   /* make and model, or "" */
  int x, y, width, height;   /* logical */
  int pixel_width, pixel_height;
  int scale;
} LimenWlOutput;

/* One toplevel window of the workspace. */
typedef struct {
  const char *uuid;
  const char *title;
  const char *app_id;
  const char *icon;          /* themed icon name or "" */
  gboolean    active;        /* it has the focus */
} LimenWlWindow;

/* Connect to $WAYLAND_DISPLAY, learn its globals and screens (waiting at most @timeout_ms
 * for the compositor) and dispatch from the default GLib main context. NULL with a
 * message when there is no Wayland display or it does not answer. */
LIMEN_WL_EXPORT LimenWl *limen_wl_connect (int timeout_ms, char **error_message);
/* LIMEN_WL_HAS_* bits. */
LIMEN_WL_EXPORT guint limen_wl_features (LimenWl *wl);
/* The LIMEN_WL_HAS_* bits $WAYLAND_DISPLAY offers, from a connection of its own that binds
 * nothing and is closed before this returns: what the Available* properties say before the
 * first request (the module can be unloaded afterwards). 0 with a message on failure. */
LIMEN_WL_EXPORT guint limen_wl_probe_features (int timeout_ms, char **error_message);
/* The screens; @n_out gets their number. Valid until the next main-loop iteration. */
LIMEN_WL_EXPORT const LimenWlOutput *limen_wl_outputs (LimenWl *wl, gsize *n_out);
/* The windows (needs LIMEN_WL_HAS_WINDOWS); as limen_wl_outputs(). */
LIMEN_WL_EXPORT const LimenWlWindow *limen_wl_windows (LimenWl *wl, gsize *n_out);
/* Bring the windows up to date with the compositor now (two round trips, each waited for at
 * most @timeout_ms): a window the compositor already shows, with its title and app id, is
 * in the next limen_wl_windows(). FALSE when the compositor did not answer. */
LIMEN_WL_EXPORT gboolean limen_wl_windows_settle (LimenWl *wl, int timeout_ms);
/* Call @changed (coalesced) whenever a window comes, goes, or gains or loses the focus; one
 * watcher, replaced by later calls, @changed NULL to stop. */
LIMEN_WL_EXPORT void limen_wl_windows_watch (LimenWl *wl, void (*changed) (gpointer user_data), gpointer user_data);

/* A stream started (@node_id, @error NULL) or failed (@error says why). */
typedef void (*LimenWlStreamReady) (LimenWlStream *stream, guint32 node_id, const char *error,
                                    gpointer user_data);
/* The compositor ended the stream (output gone, window closed). The stream stays
 * valid until limen_wl_stream_close(). */
typedef void (*LimenWlStreamClosed) (LimenWlStream *stream, gpointer user_data);

/* Stream the screen named @output_name; NULL when no such screen (or no screencast).
 * @cursor_mode: 1 hidden, 2 embedded, 4 metadata. */
LIMEN_WL_EXPORT LimenWlStream *limen_wl_stream_output (LimenWl *wl, const char *output_name, guint cursor_mode,
                                                       LimenWlStreamReady ready, LimenWlStreamClosed closed,
                                                       gpointer user_data);
/* Stream the window of KWin's @uuid. */
LIMEN_WL_EXPORT LimenWlStream *limen_wl_stream_window (LimenWl *wl, const char *uuid, guint cursor_mode,
                                                       LimenWlStreamReady ready, LimenWlStreamClosed closed,
                                                       gpointer user_data);
/* Stream a new virtual screen of @width x @height logical pixels named @name. */
LIMEN_WL_EXPORT LimenWlStream *limen_wl_stream_virtual (LimenWl *wl, const char *name, int width, int height,
                                                        guint cursor_mode, LimenWlStreamReady ready,
                                                        LimenWlStreamClosed closed, gpointer user_data);
/* Stream the workspace's rectangle at (@x, @y) of @width x @height logical pixels, across
 * screens (needs LIMEN_WL_HAS_REGION). */
LIMEN_WL_EXPORT LimenWlStream *limen_wl_stream_region (LimenWl *wl, int x, int y, int width, int height,
                                                       guint cursor_mode, LimenWlStreamReady ready,
                                                       LimenWlStreamClosed closed, gpointer user_data);
/* Stop the stream and free it; no callback runs after this. */
LIMEN_WL_EXPORT void limen_wl_stream_close (LimenWlStream *stream);

/* Fake input (needs LIMEN_WL_HAS_FAKE_INPUT); coordinates are logical, across the
 * workspace. @button / @key are evdev codes; @state 1 pressed, 0 released. @axis 0
 * vertical, 1 horizontal. Returns FALSE when the compositor lacks the request. */
LIMEN_WL_EXPORT gboolean limen_wl_input_motion (LimenWl *wl, double dx, double dy);
LIMEN_WL_EXPORT gboolean limen_wl_input_motion_absolute (LimenWl *wl, double x, double y);
LIMEN_WL_EXPORT gboolean limen_wl_input_button (LimenWl *wl, guint32 button, guint32 state);
LIMEN_WL_EXPORT gboolean limen_wl_input_axis (LimenWl *wl, guint32 axis, double value);
LIMEN_WL_EXPORT gboolean limen_wl_input_key (LimenWl *wl, guint32 key, guint32 state);
/* Type X keysym @keysym with the compositor's keymap (Shift pressed around it where the
 * keymap needs it); FALSE when no key of the first layout types it. */
LIMEN_WL_EXPORT gboolean limen_wl_input_keysym (LimenWl *wl, guint32 keysym, guint32 state);
LIMEN_WL_EXPORT gboolean limen_wl_input_touch (LimenWl *wl, int kind, guint32 slot, double x, double y);

/* The clipboard changed: the offered @mime_types (NULL-terminated); @ours when the
 * selection is the one limen_wl_selection_set() made. */
typedef void (*LimenWlSelectionChanged) (const char *const *mime_types, gboolean ours, gpointer user_data);
/* Someone pastes our selection as @mime_type: write it to @fd (ours to close). */
typedef void (*LimenWlSelectionSend) (const char *mime_type, int fd, gpointer user_data);

/* Watch the clipboard (needs LIMEN_WL_HAS_DATA_CONTROL); one watcher, replaced by later
 * calls, @changed NULL to stop. */
LIMEN_WL_EXPORT void limen_wl_selection_watch (LimenWl *wl, LimenWlSelectionChanged changed, gpointer user_data);
/* Own the clipboard, offering @mime_types; @send serves each paste until another
 * client takes the clipboard or limen_wl_selection_clear(). */
LIMEN_WL_EXPORT gboolean limen_wl_selection_set (LimenWl *wl, const char *const *mime_types,
                                                 LimenWlSelectionSend send, gpointer user_data);
/* Give up our selection (if we still own it). */
LIMEN_WL_EXPORT void limen_wl_selection_clear (LimenWl *wl);
/* Have the current clipboard's owner write it as @mime_type into @fd (ours is closed
 * here). FALSE when nothing offers that type. */
LIMEN_WL_EXPORT gboolean limen_wl_selection_receive (LimenWl *wl, const char *mime_type, int fd);

enum { LIMEN_WL_TOUCH_DOWN, LIMEN_WL_TOUCH_MOTION, LIMEN_WL_TOUCH_UP };

/* xdg_activation_v1 tokens (activation.c), on a connection of their own that binds only
 * that global: a token request must never wait on the three round trips of
 * limen_wl_connect(), nor make limen-kde follow every window. */
typedef struct _LimenWlActivation LimenWlActivation;
/* The token the compositor granted, or NULL: refused (KWin's "not-granted-" tokens), not
 * answered in time, no xdg_activation_v1, or the connection was lost. */
typedef void (*LimenWlTokenReady) (const char *token, gpointer user_data);

/* Connect to $WAYLAND_DISPLAY without waiting for the compositor; NULL with a message only
 * when the display cannot be reached at all. */
LIMEN_WL_EXPORT LimenWlActivation *limen_wl_activation_new (char **error_message);
/* Ask for a token naming @app_id ("" or NULL: none). @ready runs exactly once, from the main
 * loop, never later than @timeout_ms from now. FALSE, and @ready never runs, when the
 * connection is lost: free it and make a new one. */
LIMEN_WL_EXPORT gboolean limen_wl_activation_request (LimenWlActivation *activation, const char *app_id,
                                                      guint timeout_ms, LimenWlTokenReady ready, gpointer user_data);
/* Close the connection; requests still waiting get NULL first. */
LIMEN_WL_EXPORT void limen_wl_activation_free (LimenWlActivation *activation);

/* Entry points of liblimen-kde-wayland.so, for the loader (X-macro). */
#define LIMEN_WL_DLOPEN_FUNCTIONS(X) \
  X (limen_wl_connect)               \
  X (limen_wl_features)              \
  X (limen_wl_outputs)               \
  X (limen_wl_windows)               \
  X (limen_wl_windows_settle)        \
  X (limen_wl_windows_watch)         \
  X (limen_wl_stream_output)         \
  X (limen_wl_stream_window)         \
  X (limen_wl_stream_virtual)        \
  X (limen_wl_stream_region)         \
  X (limen_wl_stream_close)          \
  X (limen_wl_input_motion)          \
  X (limen_wl_input_motion_absolute) \
  X (limen_wl_input_button)          \
  X (limen_wl_input_axis)            \
  X (limen_wl_input_key)             \
  X (limen_wl_input_keysym)          \
  X (limen_wl_input_touch)           \
  X (limen_wl_selection_watch)       \
  X (limen_wl_selection_set)         \
  X (limen_wl_selection_clear)       \
  X (limen_wl_selection_receive)     \
  X (limen_wl_activation_new)        \
  X (limen_wl_activation_request)    \
  X (limen_wl_activation_free)

G_END_DECLS
