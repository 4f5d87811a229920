/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Image parsers are where malformed input does damage, so none runs in the daemon: a short
 * lived validator process with tight resource limits reads the bytes and says yes or no. */
#include "icon-validate.h"

#include <stdio.h>
#include <sys/resource.h>

#include "limen-config.h"

#define VALIDATE_TIMEOUT_S 3

typedef struct {
  GSubprocess          *process;
  guint                 timeout_id;
  LimenIconValidateFunc func;
  gpointer              user_data;
} Validation;

static const char *
validator_path (void)
{
  static char *path;
  const char *env = g_getenv ("XDP_VALIDATE_ICON");

  if (env && *env)
    return env;
  if (path == NULL)
    {
      g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);

      if (self && g_str_has_prefix (self, LIMEN_BUILD_DIR "/"))
        path = g_build_filename (LIMEN_BUILD_DIR, "src", "portal", "limen-validate-icon", NULL);
      else
        path = g_build_filename (LIMEN_LIBEXECDIR, "limen-validate-icon", NULL);
    }
  return path;
}

static void
limit_child (gpointer user_data)
{
  struct rlimit cpu = { VALIDATE_TIMEOUT_S, VALIDATE_TIMEOUT_S };
  struct rlimit as = { 256 * 1024 * 1024, 256 * 1024 * 1024 };
  struct rlimit nofile = { 8, 8 };

  setrlimit (RLIMIT_CPU, &cpu);
#ifndef __SANITIZE_ADDRESS__
  /* An ASan build of the validator reserves terabytes of shadow address space. */
  setrlimit (RLIMIT_AS, &as);
#else
  (void) as;
#endif
  setrlimit (RLIMIT_NOFILE, &nofile);
}

static gboolean
on_timeout (gpointer user_data)
{
  Validation *v = user_data;

  v->timeout_id = 0;
  g_subprocess_force_exit (v->process);
  return G_SOURCE_REMOVE;
}

static void
on_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Validation *v = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) out_bytes = NULL;
  g_autofree char *out = NULL;
  gboolean ok = FALSE;
  char format[16] = "";
  guint width = 0, height = 0;

  if (g_subprocess_communicate_finish (G_SUBPROCESS (source), result, &out_bytes, NULL, &error) &&
      out_bytes && (out = g_strndup (g_bytes_get_data (out_bytes, NULL), g_bytes_get_size (out_bytes))) &&
      g_subprocess_get_if_exited (v->process) && g_subprocess_get_exit_status (v->process) == 0 &&
      out && sscanf (out, "%15s %u %u", format, &width, &height) == 3)
    ok = TRUE;
  else if (error)
    g_debug ("Icon validator: %s", error->message);
  if (v->timeout_id)
    g_source_remove (v->timeout_id);
  v->func (ok, ok ? format : NULL, width, v->user_data);
  g_object_unref (v->process);
  g_free (v);
}

void
limen_icon_validate (GBytes *bytes, guint max_size, LimenIconValidateFunc func, gpointer user_data)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GError) error = NULL;
  g_autofree char *max_arg = g_strdup_printf ("--max-size=%u", max_size);
  Validation *v = g_new0 (Validation, 1);

  v->func = func;
  v->user_data = user_data;
  g_subprocess_launcher_set_child_setup (launcher, limit_child, NULL, NULL);
  g_subprocess_launcher_set_environ (launcher, (char *[]) { NULL });
  v->process = g_subprocess_launcher_spawn (launcher, &error, validator_path (), max_arg, NULL);
  if (v->process == NULL)
    {
      g_message ("Cannot run the icon validator %s: %s", validator_path (), error->message);
      func (FALSE, NULL, 0, user_data);
      g_free (v);
      return;
    }
  v->timeout_id = g_timeout_add_seconds (VALIDATE_TIMEOUT_S, on_timeout, v);
  g_subprocess_communicate_async (v->process, bytes, NULL, on_done, v);
}
