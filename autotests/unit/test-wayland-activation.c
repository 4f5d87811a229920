/* Limen tests — the activation-token client of liblimen-kde-wayland (activation.c) against
 * small compositors of our own (libwayland-server in a thread): one that grants, one that
 * refuses the way KWin does ("not-granted-…"), one that never answers, one without
 * xdg_activation_v1, one that drops the connection, and a socket nobody reads. Every
 * request must end exactly once, by its deadline at the latest, and never with a token
 * the compositor refused.
 *
 * The module is opened with dlopen, as limen-kde does.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dlfcn.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <wayland-server.h>

#include "limen-wayland.h"
#include "xdg-activation-v1-server-protocol.h"

typedef enum { GRANT, REFUSE, SILENT, NO_GLOBAL, HANG_UP } Mode;

/* One compositor at a time: its behaviour, set before its thread starts. */
static Mode mode;

/* ---- a compositor in a thread ---- */

typedef struct {
  struct wl_display *display;
  GThread           *thread;
  char              *socket;
} Compositor;

static void
token_set_serial (struct wl_client *c, struct wl_resource *r, uint32_t serial, struct wl_resource *seat)
{
}

static void
token_set_app_id (struct wl_client *c, struct wl_resource *r, const char *app_id)
{
  g_free (wl_resource_get_user_data (r));
  wl_resource_set_user_data (r, g_strdup (app_id));
}

static void
token_set_surface (struct wl_client *c, struct wl_resource *r, struct wl_resource *surface)
{
}

static void
token_commit (struct wl_client *c, struct wl_resource *r)
{
  const char *app_id = wl_resource_get_user_data (r);
  g_autofree char *name = g_strdup_printf ("granted-for-%s", app_id ? app_id : "nobody");

  if (mode == GRANT)
    xdg_activation_token_v1_send_done (r, name);
  else if (mode == REFUSE)
    xdg_activation_token_v1_send_done (r, "not-granted-666");
  else if (mode == HANG_UP)
    wl_client_destroy (c);
}

static void
token_destroy (struct wl_client *c, struct wl_resource *r)
{
  wl_resource_destroy (r);
}

static const struct xdg_activation_token_v1_interface token_impl = {
  token_set_serial, token_set_app_id, token_set_surface, token_commit, token_destroy
};

static void
token_free (struct wl_resource *r)
{
  g_free (wl_resource_get_user_data (r));
}

static void
manager_destroy (struct wl_client *c, struct wl_resource *r)
{
  wl_resource_destroy (r);
}

static void
manager_get_token (struct wl_client *c, struct wl_resource *r, uint32_t id)
{
  struct wl_resource *token = wl_resource_create (c, &xdg_activation_token_v1_interface, 1, id);

  wl_resource_set_implementation (token, &token_impl, NULL, token_free);
}

static void
manager_activate (struct wl_client *c, struct wl_resource *r, const char *token, struct wl_resource *surface)
{
}

static const struct xdg_activation_v1_interface manager_impl = { manager_destroy, manager_get_token, manager_activate };

static void
bind_manager (struct wl_client *c, void *data, uint32_t version, uint32_t id)
{
  struct wl_resource *r = wl_resource_create (c, &xdg_activation_v1_interface, 1, id);

  wl_resource_set_implementation (r, &manager_impl, NULL, NULL);
}

static gpointer
compositor_run (gpointer data)
{
  wl_display_run (((Compositor *) data)->display);
  return NULL;
}

static Compositor *
compositor_start (Mode behaviour)
{
  static int serial;
  Compositor *comp = g_new0 (Compositor, 1);

  mode = behaviour;
  comp->socket = g_strdup_printf ("limen-test-activation-%d", ++serial);
  comp->display = wl_display_create ();
  if (mode != NO_GLOBAL)
    wl_global_create (comp->display, &xdg_activation_v1_interface, 1, NULL, bind_manager);
  g_assert_cmpint (wl_display_add_socket (comp->display, comp->socket), ==, 0);
  g_setenv ("WAYLAND_DISPLAY", comp->socket, TRUE);
  comp->thread = g_thread_new ("compositor", compositor_run, comp);
  return comp;
}

static void
compositor_stop (Compositor *comp)
{
  wl_display_terminate (comp->display);
  g_thread_join (comp->thread);
  wl_display_destroy_clients (comp->display);
  wl_display_destroy (comp->display);
  g_free (comp->socket);
  g_free (comp);
}

/* ---- the module ---- */

static struct {
#define FIELD(name) __typeof__ (name) *name;
  LIMEN_WL_DLOPEN_FUNCTIONS (FIELD)
#undef FIELD
} wl;

static void
open_module (void)
{
  void *handle = dlopen (LIMEN_WAYLAND_MODULE, RTLD_NOW | RTLD_LOCAL);

  g_assert_nonnull (handle);
#define RESOLVE(name)                                       \
  wl.name = (__typeof__ (name) *) dlsym (handle, #name);   \
  g_assert_nonnull (wl.name);
  LIMEN_WL_DLOPEN_FUNCTIONS (RESOLVE)
#undef RESOLVE
}

typedef struct {
  int     calls;
  char   *token;
  gint64  elapsed_ms;
  gint64  started;
} Answer;

static void
on_ready (const char *token, gpointer user_data)
{
  Answer *a = user_data;

  a->calls++;
  a->token = g_strdup (token);
  a->elapsed_ms = (g_get_monotonic_time () - a->started) / 1000;
}

/* Ask once and run the main loop until the answer and @linger ms more (a second answer
 * would show then). */
static Answer
ask (LimenWlActivation *activation, const char *app_id, guint timeout_ms)
{
  Answer a = { 0, NULL, 0, g_get_monotonic_time () };
  gint64 give_up = a.started + 10 * G_USEC_PER_SEC, linger_until = 0;

  g_assert_true (wl.limen_wl_activation_request (activation, app_id, timeout_ms, on_ready, &a));
  while (g_get_monotonic_time () < give_up)
    {
      if (a.calls && !linger_until)
        linger_until = g_get_monotonic_time () + 300 * 1000;
      if (linger_until && g_get_monotonic_time () > linger_until)
        break;
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  return a;
}

static void
test_granted (void)
{
  Compositor *comp = compositor_start (GRANT);
  g_autofree char *message = NULL;
  LimenWlActivation *activation = wl.limen_wl_activation_new (&message);
  Answer a;

  g_assert_nonnull (activation);
  a = ask (activation, "org.example.Talk", 5000);
  g_assert_cmpint (a.calls, ==, 1);
  g_assert_cmpstr (a.token, ==, "granted-for-org.example.Talk");
  g_free (a.token);
  /* Without an app id, none is named. */
  a = ask (activation, "", 5000);
  g_assert_cmpstr (a.token, ==, "granted-for-nobody");
  g_free (a.token);
  wl.limen_wl_activation_free (activation);
  compositor_stop (comp);
}

static void
test_refused (void)
{
  Compositor *comp = compositor_start (REFUSE);
  g_autofree char *message = NULL;
  LimenWlActivation *activation = wl.limen_wl_activation_new (&message);
  Answer a = ask (activation, "org.example.Talk", 5000);

  g_assert_cmpint (a.calls, ==, 1);
  g_assert_null (a.token);
  /* It came with KWin's answer, not by the deadline. */
  g_assert_cmpint (a.elapsed_ms, <, 4000);
  wl.limen_wl_activation_free (activation);
  compositor_stop (comp);
}

static void
test_never_answered (void)
{
  Compositor *comp = compositor_start (SILENT);
  g_autofree char *message = NULL;
  LimenWlActivation *activation = wl.limen_wl_activation_new (&message);
  Answer a = ask (activation, "org.example.Talk", 200);

  g_assert_cmpint (a.calls, ==, 1);
  g_assert_null (a.token);
  g_assert_cmpint (a.elapsed_ms, >=, 200);
  wl.limen_wl_activation_free (activation);
  compositor_stop (comp);
}

static void
test_no_global (void)
{
  Compositor *comp = compositor_start (NO_GLOBAL);
  g_autofree char *message = NULL;
  LimenWlActivation *activation = wl.limen_wl_activation_new (&message);
  Answer a = ask (activation, "org.example.Talk", 5000);

  /* Known to be missing once the globals are listed: no waiting for the deadline. */
  g_assert_cmpint (a.calls, ==, 1);
  g_assert_null (a.token);
  g_assert_cmpint (a.elapsed_ms, <, 4000);
  a = ask (activation, "org.example.Talk", 5000);
  g_assert_cmpint (a.calls, ==, 1);
  g_assert_cmpint (a.elapsed_ms, <, 4000);
  wl.limen_wl_activation_free (activation);
  compositor_stop (comp);
}

static void
test_hang_up (void)
{
  Compositor *comp = compositor_start (HANG_UP);
  g_autofree char *message = NULL;
  LimenWlActivation *activation = wl.limen_wl_activation_new (&message);
  Answer a;

  g_test_expect_message ("limen-kde", G_LOG_LEVEL_WARNING, "*compositor closed*");
  a = ask (activation, "org.example.Talk", 1000);
  g_test_assert_expected_messages ();
  g_assert_cmpint (a.calls, ==, 1);
  g_assert_null (a.token);
  /* The connection is known to be gone: the caller is told to make a new one. */
  g_assert_false (wl.limen_wl_activation_request (activation, "x", 1000, on_ready, &a));
  wl.limen_wl_activation_free (activation);
  compositor_stop (comp);
}

/* A socket that takes the connection and never reads it: a stopped compositor. */
static void
test_silent_socket (void)
{
  g_autofree char *path = g_build_filename (g_getenv ("XDG_RUNTIME_DIR"), "limen-test-silent", NULL);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM, 0);
  g_autofree char *message = NULL;
  LimenWlActivation *activation;
  Answer first = { 0 }, second = { 0 };

  g_strlcpy (addr.sun_path, path, sizeof addr.sun_path);
  g_assert_cmpint (bind (fd, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  g_assert_cmpint (listen (fd, 4), ==, 0);
  g_setenv ("WAYLAND_DISPLAY", "limen-test-silent", TRUE);
  activation = wl.limen_wl_activation_new (&message);
  g_assert_nonnull (activation);
  /* Two requests waiting together end in order, each by its own deadline. */
  first.started = second.started = g_get_monotonic_time ();
  g_assert_true (wl.limen_wl_activation_request (activation, "a", 200, on_ready, &first));
  g_assert_true (wl.limen_wl_activation_request (activation, "b", 400, on_ready, &second));
  while (second.calls == 0 && (g_get_monotonic_time () - first.started) < 10 * G_USEC_PER_SEC)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpint (first.calls, ==, 1);
  g_assert_cmpint (second.calls, ==, 1);
  g_assert_null (first.token);
  g_assert_cmpint (first.elapsed_ms, >=, 200);
  g_assert_cmpint (second.elapsed_ms, >=, 400);
  /* Freeing with a request still waiting answers it first. */
  second.calls = 0;
  g_assert_true (wl.limen_wl_activation_request (activation, "c", 60000, on_ready, &second));
  wl.limen_wl_activation_free (activation);
  g_assert_cmpint (second.calls, ==, 1);
  close (fd);
  g_unlink (path);
}

static void
test_no_display (void)
{
  g_autofree char *message = NULL;

  g_setenv ("WAYLAND_DISPLAY", "limen-test-nobody-here", TRUE);
  g_assert_null (wl.limen_wl_activation_new (&message));
  g_assert_nonnull (message);
}

int
main (int argc, char **argv)
{
  g_autofree char *runtime = g_dir_make_tmp ("limen-wl-activation-XXXXXX", NULL);
  int status;

  g_test_init (&argc, &argv, NULL);
  g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);
  open_module ();
  g_test_add_func ("/wayland-activation/granted", test_granted);
  g_test_add_func ("/wayland-activation/refused", test_refused);
  g_test_add_func ("/wayland-activation/never-answered", test_never_answered);
  g_test_add_func ("/wayland-activation/no-global", test_no_global);
  g_test_add_func ("/wayland-activation/hang-up", test_hang_up);
  g_test_add_func ("/wayland-activation/silent-socket", test_silent_socket);
  g_test_add_func ("/wayland-activation/no-display", test_no_display);
  status = g_test_run ();
  g_rmdir (runtime);
  return status;
}
