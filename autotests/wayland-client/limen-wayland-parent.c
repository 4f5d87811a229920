/* Limen tests — a minimal Wayland app that plays the portal caller: it maps one xdg_toplevel
 * (a plain coloured buffer), exports it with zxdg_exporter_v2 and prints the handle.
 *
 *   limen-wayland-parent TITLE
 *   stdout: "HANDLE <handle>" once exported, "UNEXPORTED" after the "unexport" command
 *   stdin:  "unexport" destroys the export (the handle expires), EOF quits
 *
 * Plain wayland-client on purpose: the parent side must not share code with the shim.
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

#include "xdg-foreign-unstable-v2-client-protocol.h"
#include "xdg-shell-client-protocol.h"

#define WIDTH 480
#define HEIGHT 320

struct app
{
  struct wl_display *display;
  struct wl_compositor *compositor;
  struct wl_shm *shm;
  struct xdg_wm_base *wm_base;
  struct zxdg_exporter_v2 *exporter;
  struct wl_surface *surface;
  struct xdg_surface *xdg_surface;
  struct xdg_toplevel *toplevel;
  struct zxdg_exported_v2 *exported;
  struct wl_buffer *buffer;
  int configured;
  int closed;
};

static void
die (const char *what)
{
  fprintf (stderr, "limen-wayland-parent: %s\n", what);
  exit (1);
}

static void
registry_global (void *data, struct wl_registry *registry, uint32_t name, const char *interface,
                 uint32_t version)
{
  struct app *app = data;

  if (strcmp (interface, wl_compositor_interface.name) == 0)
    app->compositor = wl_registry_bind (registry, name, &wl_compositor_interface, version < 4 ? version : 4);
  else if (strcmp (interface, wl_shm_interface.name) == 0)
    app->shm = wl_registry_bind (registry, name, &wl_shm_interface, 1);
  else if (strcmp (interface, xdg_wm_base_interface.name) == 0)
    app->wm_base = wl_registry_bind (registry, name, &xdg_wm_base_interface, 1);
  else if (strcmp (interface, zxdg_exporter_v2_interface.name) == 0)
    app->exporter = wl_registry_bind (registry, name, &zxdg_exporter_v2_interface, 1);
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

/* A shared-memory buffer in one colour, so the window is visible in screenshots. */
static struct wl_buffer *
make_buffer (struct app *app)
{
  int stride = WIDTH * 4, size = stride * HEIGHT;
  int fd = memfd_create ("limen-wayland-parent", MFD_CLOEXEC);
  if (fd < 0 || ftruncate (fd, size) < 0)
    die ("memfd");
  uint32_t *pixels = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (pixels == MAP_FAILED)
    die ("mmap");
  for (int i = 0; i < WIDTH * HEIGHT; i++)
    pixels[i] = (i / WIDTH) < 40 ? 0xff303030 : 0xff2a7ab0;
  munmap (pixels, size);
  struct wl_shm_pool *pool = wl_shm_create_pool (app->shm, fd, size);
  struct wl_buffer *buffer = wl_shm_pool_create_buffer (pool, 0, WIDTH, HEIGHT, stride, WL_SHM_FORMAT_XRGB8888);
  wl_shm_pool_destroy (pool);
  close (fd);
  return buffer;
}

static void
xdg_surface_configure (void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
  struct app *app = data;

  xdg_surface_ack_configure (xdg_surface, serial);
  if (!app->configured)
    {
      app->buffer = make_buffer (app);
      wl_surface_attach (app->surface, app->buffer, 0, 0);
      wl_surface_damage (app->surface, 0, 0, WIDTH, HEIGHT);
    }
  wl_surface_commit (app->surface);
  app->configured = 1;
}

static const struct xdg_surface_listener xdg_surface_listener = { xdg_surface_configure };

static void
toplevel_configure (void *data, struct xdg_toplevel *toplevel, int32_t width, int32_t height,
                    struct wl_array *states)
{
}

static void
toplevel_close (void *data, struct xdg_toplevel *toplevel)
{
  ((struct app *) data)->closed = 1;
}

static const struct xdg_toplevel_listener toplevel_listener = { toplevel_configure, toplevel_close };

static void
exported_handle (void *data, struct zxdg_exported_v2 *exported, const char *handle)
{
  printf ("HANDLE %s\n", handle);
  fflush (stdout);
}

static const struct zxdg_exported_v2_listener exported_listener = { exported_handle };

/* Commands from the test on stdin; FALSE on EOF. */
static int
read_commands (struct app *app)
{
  char buf[256];
  ssize_t n = read (STDIN_FILENO, buf, sizeof buf - 1);
  if (n <= 0)
    return n < 0 && errno == EINTR;
  buf[n] = '\0';
  if (strstr (buf, "unexport") && app->exported)
    {
      zxdg_exported_v2_destroy (app->exported);
      app->exported = NULL;
      wl_display_roundtrip (app->display);
      printf ("UNEXPORTED\n");
      fflush (stdout);
    }
  return 1;
}

int
main (int argc, char **argv)
{
  struct app app = { 0 };
  const char *title = argc > 1 ? argv[1] : "Limen Wayland parent";

  app.display = wl_display_connect (NULL);
  if (!app.display)
    die ("cannot connect to the Wayland display");
  struct wl_registry *registry = wl_display_get_registry (app.display);
  wl_registry_add_listener (registry, &registry_listener, &app);
  wl_display_roundtrip (app.display);
  if (!app.compositor || !app.shm || !app.wm_base)
    die ("the compositor lacks wl_compositor, wl_shm or xdg_wm_base");
  if (!app.exporter)
    die ("the compositor offers no zxdg_exporter_v2");
  xdg_wm_base_add_listener (app.wm_base, &wm_base_listener, &app);

  app.surface = wl_compositor_create_surface (app.compositor);
  app.xdg_surface = xdg_wm_base_get_xdg_surface (app.wm_base, app.surface);
  xdg_surface_add_listener (app.xdg_surface, &xdg_surface_listener, &app);
  app.toplevel = xdg_surface_get_toplevel (app.xdg_surface);
  xdg_toplevel_add_listener (app.toplevel, &toplevel_listener, &app);
  xdg_toplevel_set_title (app.toplevel, title);
  xdg_toplevel_set_app_id (app.toplevel, "org.limen.WaylandParent");
  wl_surface_commit (app.surface);
  while (!app.configured)
    if (wl_display_dispatch (app.display) < 0)
      die ("lost the compositor before the first configure");

  app.exported = zxdg_exporter_v2_export_toplevel (app.exporter, app.surface);
  zxdg_exported_v2_add_listener (app.exported, &exported_listener, &app);

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
