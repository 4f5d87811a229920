/* Limen tests — an app that raises its window with an xdg_activation_v1 token, as an app
 * given one by GlobalShortcuts' Activated would; it reports whether the compositor made
 * it the active window.
 *
 *   limen-wayland-activate TITLE
 *   stdout: "MAPPED", "ACTIVE 1" / "ACTIVE 0" (each change of the toplevel's activated
 *           state), "TOKEN t" (the answer to "token")
 *   stdin:  "activate TOKEN" asks the compositor to activate the window with TOKEN;
 *           "token" asks for a token as a client without the focus (no surface); EOF quits
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

#include "xdg-activation-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

#define WIDTH 320
#define HEIGHT 200

struct app
{
  struct wl_display *display;
  struct wl_compositor *compositor;
  struct wl_shm *shm;
  struct xdg_wm_base *wm_base;
  struct xdg_activation_v1 *activation;
  struct wl_surface *surface;
  struct xdg_surface *xdg_surface;
  struct xdg_toplevel *toplevel;
  int configured, closed, active;
};

static void
die (const char *what)
{
  fprintf (stderr, "limen-wayland-activate: %s\n", what);
  exit (1);
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
  else if (strcmp (interface, xdg_activation_v1_interface.name) == 0)
    app->activation = wl_registry_bind (registry, name, &xdg_activation_v1_interface, 1);
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

/* One grey buffer, attached once: the window needs content to be mapped. */
static void
attach_buffer (struct app *app)
{
  int stride = WIDTH * 4, size = stride * HEIGHT;
  int fd = memfd_create ("limen-wayland-activate", MFD_CLOEXEC);

  if (fd < 0 || ftruncate (fd, size) < 0)
    die ("memfd");
  uint32_t *pixels = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (pixels == MAP_FAILED)
    die ("mmap");
  for (int i = 0; i < WIDTH * HEIGHT; i++)
    pixels[i] = 0xff808080;
  munmap (pixels, size);
  struct wl_shm_pool *pool = wl_shm_create_pool (app->shm, fd, size);
  struct wl_buffer *buffer = wl_shm_pool_create_buffer (pool, 0, WIDTH, HEIGHT, stride, WL_SHM_FORMAT_XRGB8888);
  wl_shm_pool_destroy (pool);
  close (fd);
  wl_surface_attach (app->surface, buffer, 0, 0);
  wl_surface_damage (app->surface, 0, 0, WIDTH, HEIGHT);
}

static void
xdg_surface_configure (void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
  struct app *app = data;

  xdg_surface_ack_configure (xdg_surface, serial);
  if (!app->configured)
    attach_buffer (app);
  wl_surface_commit (app->surface);
  if (!app->configured)
    {
      app->configured = 1;
      printf ("MAPPED\n");
      fflush (stdout);
    }
}

static const struct xdg_surface_listener xdg_surface_listener = { xdg_surface_configure };

static void
toplevel_configure (void *data, struct xdg_toplevel *t, int32_t w, int32_t h, struct wl_array *states)
{
  struct app *app = data;
  uint32_t *state;
  int active = 0;

  wl_array_for_each (state, states)
    if (*state == XDG_TOPLEVEL_STATE_ACTIVATED)
      active = 1;
  if (active != app->active)
    {
      app->active = active;
      printf ("ACTIVE %d\n", active);
      fflush (stdout);
    }
}

static void
toplevel_close (void *data, struct xdg_toplevel *toplevel)
{
  ((struct app *) data)->closed = 1;
}

static const struct xdg_toplevel_listener toplevel_listener = { toplevel_configure, toplevel_close };

static void
token_done (void *data, struct xdg_activation_token_v1 *token, const char *name)
{
  printf ("TOKEN %s\n", name);
  fflush (stdout);
  xdg_activation_token_v1_destroy (token);
}

static const struct xdg_activation_token_v1_listener token_listener = { token_done };

static int
read_commands (struct app *app)
{
  char buf[1024];
  ssize_t n = read (STDIN_FILENO, buf, sizeof buf - 1);

  if (n <= 0)
    return n < 0 && errno == EINTR;
  buf[n] = '\0';
  for (char *line = strtok (buf, "\n"); line; line = strtok (NULL, "\n"))
    if (strncmp (line, "activate ", 9) == 0)
      xdg_activation_v1_activate (app->activation, line + 9, app->surface);
    else if (strcmp (line, "token") == 0)
      {
        struct xdg_activation_token_v1 *token = xdg_activation_v1_get_activation_token (app->activation);

        xdg_activation_token_v1_add_listener (token, &token_listener, app);
        xdg_activation_token_v1_commit (token);
      }
  return 1;
}

static void
run (struct app *app)
{
  struct pollfd fds[2] = {
    { .fd = wl_display_get_fd (app->display), .events = POLLIN },
    { .fd = STDIN_FILENO, .events = POLLIN },
  };

  while (!app->closed)
    {
      while (wl_display_prepare_read (app->display) != 0)
        wl_display_dispatch_pending (app->display);
      wl_display_flush (app->display);
      if (poll (fds, 2, -1) < 0 && errno != EINTR)
        {
          wl_display_cancel_read (app->display);
          die ("poll");
        }
      if (fds[0].revents & POLLIN)
        {
          if (wl_display_read_events (app->display) < 0)
            die ("lost the compositor");
        }
      else
        wl_display_cancel_read (app->display);
      if ((fds[0].revents & (POLLERR | POLLHUP)) || wl_display_dispatch_pending (app->display) < 0)
        die ("lost the compositor");
      if ((fds[1].revents & (POLLIN | POLLHUP)) && !read_commands (app))
        break;
    }
}

int
main (int argc, char **argv)
{
  struct app app = { 0 };

  app.display = wl_display_connect (NULL);
  if (!app.display)
    die ("cannot connect to the Wayland display");
  struct wl_registry *registry = wl_display_get_registry (app.display);
  wl_registry_add_listener (registry, &registry_listener, &app);
  wl_display_roundtrip (app.display);
  if (!app.compositor || !app.shm || !app.wm_base || !app.activation)
    die ("the compositor lacks wl_compositor, wl_shm, xdg_wm_base or xdg_activation_v1");
  xdg_wm_base_add_listener (app.wm_base, &wm_base_listener, &app);
  app.surface = wl_compositor_create_surface (app.compositor);
  app.xdg_surface = xdg_wm_base_get_xdg_surface (app.wm_base, app.surface);
  xdg_surface_add_listener (app.xdg_surface, &xdg_surface_listener, &app);
  app.toplevel = xdg_surface_get_toplevel (app.xdg_surface);
  xdg_toplevel_add_listener (app.toplevel, &toplevel_listener, &app);
  xdg_toplevel_set_title (app.toplevel, argc > 1 ? argv[1] : "Limen activation test");
  xdg_toplevel_set_app_id (app.toplevel, "org.limen.ActivationTest");
  wl_surface_commit (app.surface);
  run (&app);
  wl_display_disconnect (app.display);
  return 0;
}
