/* Limen tests — a Wayland app that the screen-sharing tests look at and type into: one
 * xdg_toplevel in a known colour, redrawn every frame (so the compositor always has
 * damage to cast), that reports its input and uses the clipboard as any app does
 * (wl_data_device, with keyboard focus).
 *
 *   limen-wayland-probe TITLE RRGGBB [WIDTHxHEIGHT]     (400x300 unless given)
 *   stdout: "MAPPED", "KEYBOARD" (the seat has one), "ENTER x y", "MOTION x y", "BUTTON code state", "KEY code state",
 *           "FOCUS", "OFFER type" (per type of a new selection), "PASTE text", "COPIED"
 *   env:    LIMEN_PROBE_APP_ID (org.limen.WaylandProbe unless set)
 *   stdin:  "copy TEXT" owns the clipboard with TEXT as text/plain;charset=utf-8,
 *           "paste" reads the clipboard's text/plain;charset=utf-8, "colour RRGGBB" repaints the
 *           window in another colour (says "COLOUR rrggbb"); EOF quits
 *
 * Plain wayland-client: nothing shared with the code under test.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>

#include "xdg-shell-client-protocol.h"

/* The window's size unless the third argument says WIDTHxHEIGHT. */
static int WIDTH = 400, HEIGHT = 300;
#define TEXT_TYPE "text/plain;charset=utf-8"

struct app
{
  struct wl_display *display;
  struct wl_compositor *compositor;
  struct wl_shm *shm;
  struct xdg_wm_base *wm_base;
  struct wl_seat *seat;
  struct wl_pointer *pointer;
  struct wl_keyboard *keyboard;
  struct wl_data_device_manager *ddm;
  struct wl_data_device *data_device;
  struct wl_data_offer *pending_offer, *selection;
  struct wl_data_source *source;
  struct wl_surface *surface;
  struct xdg_surface *xdg_surface;
  struct xdg_toplevel *toplevel;
  struct wl_buffer *buffer;
  uint32_t colour;
  uint32_t serial;
  char copied[256];
  int configured, closed, selection_has_text;
};

static void
die (const char *what)
{
  fprintf (stderr, "limen-wayland-probe: %s\n", what);
  exit (1);
}

static void
say (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

#include <stdarg.h>
static void
say (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
}

static void
registry_global (void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version)
{
  struct app *app = data;

  if (strcmp (interface, wl_compositor_interface.name) == 0)
    app->compositor = wl_registry_bind (registry, name, &wl_compositor_interface, 4);
  else if (strcmp (interface, wl_shm_interface.name) == 0)
    app->shm = wl_registry_bind (registry, name, &wl_shm_interface, 1);
  else if (strcmp (interface, xdg_wm_base_interface.name) == 0)
    app->wm_base = wl_registry_bind (registry, name, &xdg_wm_base_interface, 1);
  else if (strcmp (interface, wl_seat_interface.name) == 0 && !app->seat)
    app->seat = wl_registry_bind (registry, name, &wl_seat_interface, version < 5 ? version : 5);
  else if (strcmp (interface, wl_data_device_manager_interface.name) == 0)
    app->ddm = wl_registry_bind (registry, name, &wl_data_device_manager_interface, version < 3 ? version : 3);
}

static void
registry_global_remove (void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = { registry_global, registry_global_remove };

static void
wm_base_ping (void *data, struct xdg_wm_base *wm_base, uint32_t serial)
{
  xdg_wm_base_pong (wm_base, serial);
}

static const struct xdg_wm_base_listener wm_base_listener = { wm_base_ping };

static struct wl_buffer *
make_buffer (struct app *app)
{
  int stride = WIDTH * 4, size = stride * HEIGHT;
  int fd = memfd_create ("limen-wayland-probe", MFD_CLOEXEC);
  if (fd < 0 || ftruncate (fd, size) < 0)
    die ("memfd");
  uint32_t *pixels = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (pixels == MAP_FAILED)
    die ("mmap");
  for (int i = 0; i < WIDTH * HEIGHT; i++)
    pixels[i] = 0xff000000 | app->colour;
  munmap (pixels, size);
  struct wl_shm_pool *pool = wl_shm_create_pool (app->shm, fd, size);
  struct wl_buffer *buffer = wl_shm_pool_create_buffer (pool, 0, WIDTH, HEIGHT, stride, WL_SHM_FORMAT_XRGB8888);
  wl_shm_pool_destroy (pool);
  close (fd);
  return buffer;
}

static const struct wl_callback_listener frame_listener;

/* The same colour every frame, but new damage: the compositor repaints the output and
 * so produces screen-cast frames. */
static void
redraw (struct app *app)
{
  struct wl_callback *cb = wl_surface_frame (app->surface);

  wl_callback_add_listener (cb, &frame_listener, app);
  wl_surface_attach (app->surface, app->buffer, 0, 0);
  wl_surface_damage (app->surface, 0, 0, WIDTH, HEIGHT);
  wl_surface_commit (app->surface);
}

static void
frame_done (void *data, struct wl_callback *cb, uint32_t time)
{
  wl_callback_destroy (cb);
  redraw (data);
}

static const struct wl_callback_listener frame_listener = { frame_done };

static void
xdg_surface_configure (void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
  struct app *app = data;

  xdg_surface_ack_configure (xdg_surface, serial);
  if (!app->configured)
    {
      app->buffer = make_buffer (app);
      app->configured = 1;
      redraw (app);
      say ("MAPPED");
    }
  else
    wl_surface_commit (app->surface);
}

static const struct xdg_surface_listener xdg_surface_listener = { xdg_surface_configure };

static void
toplevel_configure (void *data, struct xdg_toplevel *t, int32_t w, int32_t h, struct wl_array *states)
{
}

static void
toplevel_close (void *data, struct xdg_toplevel *toplevel)
{
  ((struct app *) data)->closed = 1;
}

static const struct xdg_toplevel_listener toplevel_listener = { toplevel_configure, toplevel_close };

/* ---- input ---- */

static void
pointer_enter (void *data, struct wl_pointer *p, uint32_t serial, struct wl_surface *s, wl_fixed_t x, wl_fixed_t y)
{
  ((struct app *) data)->serial = serial;
  say ("ENTER %d %d", wl_fixed_to_int (x), wl_fixed_to_int (y));
}

static void
pointer_leave (void *data, struct wl_pointer *p, uint32_t serial, struct wl_surface *s)
{
  say ("LEAVE");
}

static void
pointer_motion (void *data, struct wl_pointer *p, uint32_t time, wl_fixed_t x, wl_fixed_t y)
{
  say ("MOTION %d %d", wl_fixed_to_int (x), wl_fixed_to_int (y));
}

static void
pointer_button (void *data, struct wl_pointer *p, uint32_t serial, uint32_t time, uint32_t button, uint32_t state)
{
  ((struct app *) data)->serial = serial;
  say ("BUTTON %u %u", button, state);
}

static void
pointer_axis (void *data, struct wl_pointer *p, uint32_t time, uint32_t axis, wl_fixed_t value)
{
  say ("AXIS %u %d", axis, wl_fixed_to_int (value));
}

static void pointer_frame (void *data, struct wl_pointer *p) {}
static void pointer_axis_source (void *data, struct wl_pointer *p, uint32_t source) {}
static void pointer_axis_stop (void *data, struct wl_pointer *p, uint32_t time, uint32_t axis) {}
static void pointer_axis_discrete (void *data, struct wl_pointer *p, uint32_t axis, int32_t discrete) {}

static const struct wl_pointer_listener pointer_listener = {
  pointer_enter, pointer_leave, pointer_motion, pointer_button, pointer_axis,
  pointer_frame, pointer_axis_source, pointer_axis_stop, pointer_axis_discrete
};

static void
keyboard_keymap (void *data, struct wl_keyboard *k, uint32_t format, int32_t fd, uint32_t size)
{
  close (fd);
}

static void
keyboard_enter (void *data, struct wl_keyboard *k, uint32_t serial, struct wl_surface *s, struct wl_array *keys)
{
  ((struct app *) data)->serial = serial;
  say ("FOCUS");
}

static void
keyboard_leave (void *data, struct wl_keyboard *k, uint32_t serial, struct wl_surface *s)
{
  say ("UNFOCUS");
}

static void
keyboard_key (void *data, struct wl_keyboard *k, uint32_t serial, uint32_t time, uint32_t key, uint32_t state)
{
  ((struct app *) data)->serial = serial;
  say ("KEY %u %u", key, state);
}

static void
keyboard_modifiers (void *data, struct wl_keyboard *k, uint32_t serial, uint32_t d, uint32_t l, uint32_t lk,
                    uint32_t group)
{
}

static void keyboard_repeat_info (void *data, struct wl_keyboard *k, int32_t rate, int32_t delay) {}

static const struct wl_keyboard_listener keyboard_listener = {
  keyboard_keymap, keyboard_enter, keyboard_leave, keyboard_key, keyboard_modifiers, keyboard_repeat_info
};

/* KWin's seat gains a keyboard only once some input device has one: with no hardware,
 * when a client binds fake input. So take the devices as they appear. */
static void
seat_capabilities (void *data, struct wl_seat *seat, uint32_t caps)
{
  struct app *app = data;

  if ((caps & WL_SEAT_CAPABILITY_POINTER) && !app->pointer)
    {
      app->pointer = wl_seat_get_pointer (seat);
      wl_pointer_add_listener (app->pointer, &pointer_listener, app);
    }
  if ((caps & WL_SEAT_CAPABILITY_KEYBOARD) && !app->keyboard)
    {
      app->keyboard = wl_seat_get_keyboard (seat);
      wl_keyboard_add_listener (app->keyboard, &keyboard_listener, app);
      say ("KEYBOARD");
    }
}

static void seat_name (void *data, struct wl_seat *seat, const char *name) {}

static const struct wl_seat_listener seat_listener = { seat_capabilities, seat_name };

/* ---- clipboard ---- */

static void
offer_offer (void *data, struct wl_data_offer *offer, const char *type)
{
  struct app *app = data;

  say ("OFFER %s", type);
  if (strcmp (type, TEXT_TYPE) == 0 && offer == app->pending_offer)
    app->selection_has_text = 1;
}

static void offer_source_actions (void *data, struct wl_data_offer *o, uint32_t a) {}
static void offer_action (void *data, struct wl_data_offer *o, uint32_t a) {}

static const struct wl_data_offer_listener offer_listener = { offer_offer, offer_source_actions, offer_action };

static void
device_data_offer (void *data, struct wl_data_device *d, struct wl_data_offer *offer)
{
  struct app *app = data;

  app->pending_offer = offer;
  app->selection_has_text = 0;
  wl_data_offer_add_listener (offer, &offer_listener, app);
}

static void device_enter (void *data, struct wl_data_device *d, uint32_t s, struct wl_surface *su, wl_fixed_t x,
                          wl_fixed_t y, struct wl_data_offer *o) {}
static void device_leave (void *data, struct wl_data_device *d) {}
static void device_motion (void *data, struct wl_data_device *d, uint32_t t, wl_fixed_t x, wl_fixed_t y) {}
static void device_drop (void *data, struct wl_data_device *d) {}

static void
device_selection (void *data, struct wl_data_device *d, struct wl_data_offer *offer)
{
  struct app *app = data;

  if (app->selection && app->selection != offer)
    wl_data_offer_destroy (app->selection);
  app->selection = offer;
  say ("SELECTION %s", offer ? "set" : "none");
}

static const struct wl_data_device_listener device_listener = {
  device_data_offer, device_enter, device_leave, device_motion, device_drop, device_selection
};

static void source_target (void *data, struct wl_data_source *s, const char *t) {}

static void
source_send (void *data, struct wl_data_source *s, const char *type, int32_t fd)
{
  struct app *app = data;

  if (write (fd, app->copied, strlen (app->copied)) < 0)
    perror ("write");
  close (fd);
}

static void
source_cancelled (void *data, struct wl_data_source *s)
{
  wl_data_source_destroy (s);
  if (((struct app *) data)->source == s)
    ((struct app *) data)->source = NULL;
}

static const struct wl_data_source_listener source_listener = { source_target, source_send, source_cancelled };

static void
paste (struct app *app)
{
  int p[2];
  char buf[512];
  size_t len = 0;
  ssize_t n;

  if (!app->selection)
    {
      say ("PASTE-NONE");
      return;
    }
  if (pipe (p) < 0)
    die ("pipe");
  wl_data_offer_receive (app->selection, TEXT_TYPE, p[1]);
  close (p[1]);
  wl_display_flush (app->display);
  /* The owner may be another client of this compositor or ourselves: keep dispatching
   * until its end closes. */
  for (;;)
    {
      struct pollfd fds[2] = { { p[0], POLLIN, 0 }, { wl_display_get_fd (app->display), POLLIN, 0 } };
      if (poll (fds, 2, 10000) <= 0)
        break;
      if (fds[1].revents & POLLIN)
        wl_display_dispatch (app->display);
      if (fds[0].revents & (POLLIN | POLLHUP))
        {
          n = read (p[0], buf + len, sizeof buf - 1 - len);
          if (n <= 0)
            break;
          len += n;
        }
    }
  close (p[0]);
  buf[len] = '\0';
  say ("PASTE %s", buf);
}

static int
read_commands (struct app *app)
{
  char buf[512];
  ssize_t n = read (STDIN_FILENO, buf, sizeof buf - 1);

  if (n <= 0)
    return n < 0 && errno == EINTR;
  buf[n] = '\0';
  for (char *line = strtok (buf, "\n"); line; line = strtok (NULL, "\n"))
    if (strncmp (line, "copy ", 5) == 0 && app->data_device)
      {
        snprintf (app->copied, sizeof app->copied, "%s", line + 5);
        app->source = wl_data_device_manager_create_data_source (app->ddm);
        wl_data_source_add_listener (app->source, &source_listener, app);
        wl_data_source_offer (app->source, TEXT_TYPE);
        wl_data_device_set_selection (app->data_device, app->source, app->serial);
        wl_display_roundtrip (app->display);
        say ("COPIED");
      }
    else if (strcmp (line, "paste") == 0)
      paste (app);
    else if (strncmp (line, "colour ", 7) == 0)
      {
        /* The next frame shows the new colour; the compositor may still read the old buffer
         * until then, which destroying it allows (it keeps what it has). */
        struct wl_buffer *old = app->buffer;

        app->colour = (uint32_t) strtoul (line + 7, NULL, 16);
        app->buffer = make_buffer (app);
        wl_buffer_destroy (old);
        say ("COLOUR %06x", app->colour);
      }
  return 1;
}

int
main (int argc, char **argv)
{
  struct app app = { 0 };
  const char *title = argc > 1 ? argv[1] : "Limen Wayland probe";

  app.colour = argc > 2 ? (uint32_t) strtoul (argv[2], NULL, 16) : 0xd02030;
  if (argc > 3 && (sscanf (argv[3], "%dx%d", &WIDTH, &HEIGHT) != 2 || WIDTH < 1 || HEIGHT < 1 || WIDTH > 8192 ||
                   HEIGHT > 8192))
    die ("the size must be WIDTHxHEIGHT");
  app.display = wl_display_connect (NULL);
  if (!app.display)
    die ("cannot connect to the Wayland display");
  struct wl_registry *registry = wl_display_get_registry (app.display);
  wl_registry_add_listener (registry, &registry_listener, &app);
  wl_display_roundtrip (app.display);
  if (!app.compositor || !app.shm || !app.wm_base || !app.seat)
    die ("the compositor lacks wl_compositor, wl_shm, xdg_wm_base or wl_seat");
  xdg_wm_base_add_listener (app.wm_base, &wm_base_listener, &app);
  wl_seat_add_listener (app.seat, &seat_listener, &app);
  if (app.ddm)
    {
      app.data_device = wl_data_device_manager_get_data_device (app.ddm, app.seat);
      wl_data_device_add_listener (app.data_device, &device_listener, &app);
    }

  app.surface = wl_compositor_create_surface (app.compositor);
  app.xdg_surface = xdg_wm_base_get_xdg_surface (app.wm_base, app.surface);
  xdg_surface_add_listener (app.xdg_surface, &xdg_surface_listener, &app);
  app.toplevel = xdg_surface_get_toplevel (app.xdg_surface);
  xdg_toplevel_add_listener (app.toplevel, &toplevel_listener, &app);
  xdg_toplevel_set_title (app.toplevel, title);
  /* LIMEN_PROBE_APP_ID: the app a restore test restarts, or another app. */
  const char *app_id = getenv ("LIMEN_PROBE_APP_ID");
  xdg_toplevel_set_app_id (app.toplevel, app_id && *app_id ? app_id : "org.limen.WaylandProbe");
  wl_surface_commit (app.surface);

  struct pollfd fds[2] = {
    { .fd = wl_display_get_fd (app.display), .events = POLLIN },
    { .fd = STDIN_FILENO, .events = POLLIN },
  };
  while (!app.closed)
    {
      while (wl_display_prepare_read (app.display) != 0)
        wl_display_dispatch_pending (app.display);
      wl_display_flush (app.display);
      if (poll (fds, 2, -1) < 0 && errno != EINTR)
        {
          wl_display_cancel_read (app.display);
          die ("poll");
        }
      if (fds[0].revents & (POLLERR | POLLHUP))
        {
          wl_display_cancel_read (app.display);
          die ("lost the compositor");
        }
      if (fds[0].revents & POLLIN)
        {
          if (wl_display_read_events (app.display) < 0)
            die ("lost the compositor");
        }
      else
        wl_display_cancel_read (app.display);
      if (wl_display_dispatch_pending (app.display) < 0)
        die ("lost the compositor");
      if ((fds[1].revents & (POLLIN | POLLHUP)) && !read_commands (&app))
        break;
    }
  wl_display_disconnect (app.display);
  return 0;
}
