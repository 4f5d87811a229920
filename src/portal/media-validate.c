/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Image and audio parsers are where malformed input does damage, so none runs in the daemon:
 * a short lived validator process with tight resource limits reads the bytes and says yes or no. */
#include "media-validate.h"

#include <stdio.h>
#include <sys/resource.h>

#include "limen-config.h"

#define VALIDATE_TIMEOUT_S 3

/* What the validator printed on success, or NULL. */
typedef void (*DoneFunc) (const char *out, gpointer user_data);

typedef struct {
  GSubprocess *process;
  guint        timeout_id;
  DoneFunc     func;
  gpointer     user_data;
} Validation;

/* @env names the override (the reference's variable, so harnesses can swap validators). */
static const char *
validator_path (const char *env_name, const char *program, char **cache)
{
  const char *env = g_getenv (env_name);

  if (env && *env)
    return env;
  if (*cache == NULL)
    {
      g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);

      if (self && g_str_has_prefix (self, LIMEN_BUILD_DIR "/"))
        *cache = g_build_filename (LIMEN_BUILD_DIR, "src", "validators", program, NULL);
      else
        *cache = g_build_filename (LIMEN_LIBEXECDIR, program, NULL);
    }
  return *cache;
}

static void
limit_child (gpointer user_data)
{
  struct rlimit cpu = { VALIDATE_TIMEOUT_S, VALIDATE_TIMEOUT_S };
  struct rlimit as = { 256 * 1024 * 1024, 256 * 1024 * 1024 };
  /* Room for a shell-script validator too: dash moves the script's fd to 10. */
  struct rlimit nofile = { 16, 16 };

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

  if (g_subprocess_communicate_finish (G_SUBPROCESS (source), result, &out_bytes, NULL, &error) &&
      out_bytes && g_subprocess_get_if_exited (v->process) && g_subprocess_get_exit_status (v->process) == 0)
    out = g_strndup (g_bytes_get_data (out_bytes, NULL), g_bytes_get_size (out_bytes));
  else if (error)
    g_debug ("Validator: %s", error->message);
  if (v->timeout_id)
    g_source_remove (v->timeout_id);
  v->func (out, v->user_data);
  g_object_unref (v->process);
  g_free (v);
}

static void
run_validator (const char *path, const char *arg, GBytes *bytes, DoneFunc func, gpointer user_data)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GError) error = NULL;
  Validation *v = g_new0 (Validation, 1);

  v->func = func;
  v->user_data = user_data;
  g_subprocess_launcher_set_child_setup (launcher, limit_child, NULL, NULL);
  g_subprocess_launcher_set_environ (launcher, (char *[]) { NULL });
  v->process = g_subprocess_launcher_spawn (launcher, &error, path, arg, NULL);
  if (v->process == NULL)
    {
      g_message ("Cannot run the validator %s: %s", path, error->message);
      func (NULL, user_data);
      g_free (v);
      return;
    }
  v->timeout_id = g_timeout_add_seconds (VALIDATE_TIMEOUT_S, on_timeout, v);
  g_subprocess_communicate_async (v->process, bytes, NULL, on_done, v);
}

typedef struct {
  LimenIconValidateFunc  icon_func;
  LimenSoundValidateFunc sound_func;
  gpointer               user_data;
} Waiter;

static void
on_icon_done (const char *out, gpointer user_data)
{
  Waiter *w = user_data;
  char format[16] = "";
  guint width = 0, height = 0;
  gboolean ok = out && sscanf (out, "%15s %u %u", format, &width, &height) == 3;

  w->icon_func (ok, ok ? format : NULL, width, w->user_data);
  g_free (w);
}

void
limen_icon_validate (GBytes *bytes, guint max_size, LimenIconValidateFunc func, gpointer user_data)
{
  static char *path;
  g_autofree char *arg = g_strdup_printf ("--max-size=%u", max_size);
  Waiter *w = g_new0 (Waiter, 1);

  w->icon_func = func;
  w->user_data = user_data;
  run_validator (validator_path ("XDP_VALIDATE_ICON", "limen-validate-icon", &path), arg, bytes, on_icon_done, w);
}

static void
on_sound_done (const char *out, gpointer user_data)
{
  Waiter *w = user_data;
  char format[16] = "";
  guint channels = 0, rate = 0, ms = 0;
  gboolean ok = out && sscanf (out, "%15s %u %u %u", format, &channels, &rate, &ms) == 4;

  w->sound_func (ok, ok ? format : NULL, ms, w->user_data);
  g_free (w);
}

void
limen_sound_validate (GBytes *bytes, guint max_seconds, LimenSoundValidateFunc func, gpointer user_data)
{
  static char *path;
  g_autofree char *arg = g_strdup_printf ("--max-duration=%u", max_seconds);
  Waiter *w = g_new0 (Waiter, 1);

  w->sound_func = func;
  w->user_data = user_data;
  run_validator (validator_path ("XDP_VALIDATE_SOUND", "limen-validate-sound", &path), arg, bytes, on_sound_done, w);
}
