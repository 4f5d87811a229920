/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Image and audio parsers are where malformed input does damage, so none runs in the daemon:
 * a short lived validator process with tight resource limits reads the bytes and says yes or no. */
#include "media-validate.h"

#include <string.h>
#include <sys/resource.h>

#include "errors.h"
#include "limen-config.h"
#include "uninstalled.h"

#define VALIDATE_TIMEOUT_S 3

/* One validator run: the GTask's data; the task returns what the validator printed. */
typedef struct {
  GSubprocess *process;
  guint        timeout_id;
} Validation;

static void
validation_free (Validation *v)
{
  if (v->timeout_id)
    g_source_remove (v->timeout_id);
  g_clear_object (&v->process);
  g_free (v);
}

/* @env names the override (the reference's variable, so harnesses can swap validators). */
static const char *
validator_path (const char *env_name, const char *program, char **cache)
{
  const char *env = g_getenv (env_name);

  if (env && *env)
    return env;
  if (*cache == NULL)
    {
      g_autofree char *installed = g_build_filename (LIMEN_LIBEXECDIR, program, NULL);
      g_autofree char *relative = g_build_filename ("src", "validators", program, NULL);

      *cache = limen_uninstalled_path (relative, installed);
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
  g_autoptr(GTask) task = user_data;
  Validation *v = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) out_bytes = NULL;

  if (g_subprocess_communicate_finish (G_SUBPROCESS (source), result, &out_bytes, NULL, &error) &&
      out_bytes && g_subprocess_get_if_exited (v->process) && g_subprocess_get_exit_status (v->process) == 0)
    g_task_return_pointer (task, g_strndup (g_bytes_get_data (out_bytes, NULL), g_bytes_get_size (out_bytes)),
                           g_free);
  else
    {
      if (error)
        g_debug ("Validator: %s", error->message);
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "refused by the validator");
    }
}

/* Run @path @arg on @bytes; the task's result is its output (refused: an error). */
static void
run_validator (const char *path, const char *arg, GBytes *bytes, GTask *task)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GError) error = NULL;
  Validation *v = g_new0 (Validation, 1);

  g_task_set_task_data (task, v, (GDestroyNotify) validation_free);
  g_subprocess_launcher_set_child_setup (launcher, limit_child, NULL, NULL);
  g_subprocess_launcher_set_environ (launcher, (char *[]) { NULL });
  v->process = g_subprocess_launcher_spawn (launcher, &error, path, arg, NULL);
  if (v->process == NULL)
    {
      g_message ("Cannot run the validator %s: %s", path, error->message);
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "no validator");
      g_object_unref (task);
      return;
    }
  v->timeout_id = g_timeout_add_seconds (VALIDATE_TIMEOUT_S, on_timeout, v);
  g_subprocess_communicate_async (v->process, bytes, NULL, on_done, task);
}

/* Run validator @program (@env overrides it) with @arg on @bytes; @tag marks the task. */
static void
validate_async (const char *env, const char *program, char **path_cache, const char *arg, GBytes *bytes,
                gpointer tag, GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new (NULL, NULL, callback, user_data);

  g_task_set_source_tag (task, tag);
  run_validator (validator_path (env, program, path_cache), arg, bytes, task);
}

/* The validator's output: @format and the @n numbers after it, or FALSE (refused, garbled). */
static gboolean
validate_finish (GAsyncResult *result, char **format, guint n, guint *numbers)
{
  g_autofree char *out = g_task_propagate_pointer (G_TASK (result), NULL);
  g_auto(GStrv) words = out ? g_strsplit_set (g_strstrip (out), " \n", -1) : NULL;

  if (words == NULL || g_strv_length (words) != n + 1 || strlen (words[0]) >= 16 || *words[0] == '\0')
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      guint64 value;

      if (!g_ascii_string_to_unsigned (words[i + 1], 10, 0, G_MAXUINT, &value, NULL))
        return FALSE;
      numbers[i] = (guint) value;
    }
  if (format)
    *format = g_strdup (words[0]);
  return TRUE;
}

void
limen_icon_validate_async (GBytes *bytes, guint max_size, GAsyncReadyCallback callback, gpointer user_data)
{
  static char *path;
  g_autofree char *arg = g_strdup_printf ("--max-size=%u", max_size);

  validate_async ("XDP_VALIDATE_ICON", "limen-validate-icon", &path, arg, bytes, limen_icon_validate_async,
                  callback, user_data);
}

gboolean
limen_icon_validate_finish (GAsyncResult *result, char **format, guint *width)
{
  guint numbers[2];   /* width, height */

  if (!validate_finish (result, format, 2, numbers))
    return FALSE;
  if (width)
    *width = numbers[0];
  return TRUE;
}

void
limen_sound_validate_async (GBytes *bytes, guint max_seconds, GAsyncReadyCallback callback, gpointer user_data)
{
  static char *path;
  g_autofree char *arg = g_strdup_printf ("--max-duration=%u", max_seconds);

  validate_async ("XDP_VALIDATE_SOUND", "limen-validate-sound", &path, arg, bytes, limen_sound_validate_async,
                  callback, user_data);
}

gboolean
limen_sound_validate_finish (GAsyncResult *result, char **format, guint *milliseconds)
{
  guint numbers[3];   /* channels, rate, milliseconds */

  if (!validate_finish (result, format, 3, numbers))
    return FALSE;
  if (milliseconds)
    *milliseconds = numbers[2];
  return TRUE;
}
