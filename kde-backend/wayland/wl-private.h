/* Limen — state shared by the files of liblimen-kde-wayland.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <wayland-client.h>

#include "limen-wayland.h"
#include "zkde-screencast-unstable-v1-client-protocol.h"
#include "fake-input-client-protocol.h"
#include "wlr-data-control-unstable-v1-client-protocol.h"

typedef struct {
  struct wl_output *output;
  guint32           global;
  char             *name;
  char             *description;
  int               x, y, pixel_width, pixel_height, scale;
  int               logical_width, logical_height;
} LimenWlOutputState;

typedef struct _LimenWlOffer LimenWlOffer;

struct _LimenWl {
  struct wl_display                    *display;
  struct wl_registry                   *registry;
  struct wl_seat                       *seat;
  struct zkde_screencast_unstable_v1   *screencast;
  guint32                               screencast_version;
  struct org_kde_kwin_fake_input       *fake_input;
  guint32                               fake_input_version;
  struct zwlr_data_control_manager_v1  *data_control;
  struct zwlr_data_control_device_v1   *data_device;
  struct wl_proxy                      *window_management;
  GPtrArray                            *windows;       /* windows.c */
  GArray                               *window_view;
  void                                (*windows_changed) (gpointer user_data);
  gpointer                              windows_changed_data;
  guint                                 windows_changed_id;  /* a report is due */
  struct wl_keyboard                   *keyboard;      /* keymap.c: only for its keymap */
  struct xkb_context                   *xkb;
  struct xkb_keymap                    *keymap;
  GSource                              *source;
  GPtrArray                            *outputs;       /* LimenWlOutputState */
  GArray                               *output_view;   /* LimenWlOutput, rebuilt on demand */
  /* the clipboard (data-control.c) */
  LimenWlOffer                         *pending_offer; /* announced, types arriving */
  LimenWlOffer                         *selection;     /* the current one, or NULL */
  struct zwlr_data_control_source_v1   *our_source;
  gboolean                              selection_is_ours;
  LimenWlSelectionChanged               changed;
  gpointer                              changed_data;
  LimenWlSelectionSend                  send;
  gpointer                              send_data;
  gboolean                              broken;
};

/* Dispatch @display from the default GLib main context; a failure sets *@broken. */
GSource *limen_wl_source_attach (struct wl_display *display, gboolean *broken);
/* Flush requests now: the main loop may not come round before the caller's reply. */
void limen_wl_flush (LimenWl *wl);
/* The wl_output of the screen named @name (connection.c). */
struct wl_output *limen_wl_find_output (LimenWl *wl, const char *name);
/* windows.c: bind org_kde_plasma_window_management from the registry. */
void limen_wl_windows_bind (LimenWl *wl, struct wl_registry *registry, guint32 name, guint32 version);
/* keymap.c: follow the seat's keymap, for keysyms. */
void limen_wl_keymap_start (LimenWl *wl);
/* data-control.c: the device's listener, once the seat and the manager are bound. */
void limen_wl_data_control_start (LimenWl *wl);
