/* Limen — the desktop entry DynamicLauncher.Install writes, built from an app's untrusted one.
 *
 * What a launcher may do is "start this app" (in its sandbox, for a Flatpak app), nothing
 * else: desktop-file readers act on far more keys than Exec (KIO turns Path, Terminal,
 * TerminalOptions and X-KDE-SubstituteUID into a working directory, a terminal's arguments
 * and kdesu; KConfig reads a translated Exec[xx] before Exec; actions have an Exec of their
 * own), so the launcher is written afresh from an allow-list instead of by removing what is
 * known to be bad. Every Exec is parsed once and written back fully quoted, so that GIO and
 * KIO (which hands a line with unquoted shell syntax to /bin/sh) read the same arguments.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "launcher-entry.h"

#include <string.h>

#include "app-info.h"
#include "errors.h"

#define ACTION_GROUP_PREFIX "Desktop Action "
#define ACTION_ID_MAX 64

static gboolean
invalid (GError **error, const char *what)
{
  g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid value for desktop_entry: %s", what);
  return FALSE;
}

/* One line of text: no control characters (a newline in a value would be a new line for a
 * reader that unescapes before it splits). */
static gboolean
text_ok (const char *s)
{
  if (!g_utf8_validate (s, -1, NULL))
    return FALSE;
  for (const guchar *p = (const guchar *) s; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      return FALSE;
  return TRUE;
}

/* ---- Exec ---------------------------------------------------------------------------- */

/* An argument needs no quotes only if no reader can take any of it as syntax: KShell expands
 * an unquoted leading '~', GIO expands '%' anywhere, the rest is shell syntax. */
static char *
exec_quote (const char *arg)
{
  for (const char *p = arg; *p; p++)
    if (!g_ascii_isalnum (*p) && !strchr ("-_/.:=@+,", *p))
      return g_shell_quote (arg);
  return *arg ? g_strdup (arg) : g_shell_quote (arg);
}

/* A field code must be a whole argument: GIO expands one inside quotes without knowing it is
 * quoted, so "%f" in a quoted argument splits a file name into arguments of flatpak's own.
 * Inside any other argument only the escaped "%%" may appear. */
static gboolean
exec_arg_ok (const char *arg, gboolean *had_file_code)
{
  if (arg[0] == '%' && arg[1] && !arg[2] && strchr ("fFuUick", arg[1]))
    {
      if (strchr ("fFuU", arg[1]))
        {
          if (*had_file_code)
            return FALSE;   /* the specification allows one of them per line */
          *had_file_code = TRUE;
        }
      return TRUE;
    }
  for (const char *p = arg; *p; p++)
    if (*p == '%' && *++p != '%')
      return FALSE;
  return TRUE;
}

/* The Exec line to install for @exec: its arguments re-quoted; for a Flatpak app the command
 * runs inside the app's sandbox, with every argument after the app id (where `flatpak run`
 * stops reading options of its own). NULL + InvalidArgument naming @key. */
static char *
exec_rewrite (const char *exec, const LimenLauncherTarget *target, const char *key, GError **error)
{
  g_auto(GStrv) argv = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  gboolean had_file_code = FALSE;
  g_autofree char *cmd = NULL;

  if (exec == NULL || !text_ok (exec) || !g_shell_parse_argv (exec, NULL, &argv, NULL) || argv[0] == NULL ||
      argv[0][0] == '\0' || strchr (argv[0], '%') != NULL)
    {
      invalid (error, key);
      return NULL;
    }
  cmd = exec_quote (argv[0]);
  if (target->flatpak)
    g_string_append_printf (out, "flatpak run --command=%s %s", cmd, target->app_id);
  else
    g_string_append (out, cmd);
  for (guint i = 1; argv[i]; i++)
    {
      g_autofree char *q = NULL;

      if (!exec_arg_ok (argv[i], &had_file_code))
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                       "Invalid value for desktop_entry: %s (a field code must be an argument of its own)", key);
          return NULL;
        }
      q = argv[i][0] == '%' && argv[i][1] != '%' ? g_strdup (argv[i]) : exec_quote (argv[i]);
      g_string_append_c (out, ' ');
      g_string_append (out, q);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* ---- plain keys ---------------------------------------------------------------------- */

/* "ll", "ll_CC", with an optional ".encoding" and "@modifier": what the specification
 * allows between the brackets, and nothing a KConfig reader takes as an option ("$e"). */
static gboolean
locale_ok (const char *locale)
{
  return g_regex_match_simple ("^[a-zA-Z]{2,3}(_[a-zA-Z0-9]{2,3})?(\\.[a-zA-Z0-9-]{1,20})?(@[a-zA-Z0-9]{1,20})?$",
                               locale, 0, 0);
}

/* The locale of @key when it is @base[LOCALE] (new string), else NULL. */
static char *
key_locale (const char *key, const char *base)
{
  gsize n = strlen (base);

  if (strncmp (key, base, n) != 0 || key[n] != '[' || !g_str_has_suffix (key + n, "]"))
    return NULL;
  return g_strndup (key + n + 1, strlen (key + n + 1) - 1);
}

static gboolean
list_ok (char **items, gboolean token)
{
  for (char **p = items; *p; p++)
    {
      if (!text_ok (*p))
        return FALSE;
      for (const char *c = *p; token && *c; c++)
        if (!g_ascii_isalnum (*c) && *c != '-' && *c != '_')
          return FALSE;
    }
  return TRUE;
}

/* Copy @key of @group (one line of text, or with @list a list; @token: of [A-Za-z0-9_-]
 * items) when present. */
static gboolean
copy_value (GKeyFile *src, GKeyFile *dst, const char *group, const char *key, const char *locale,
            gboolean list, gboolean token, GError **error)
{
  g_autofree char *name = locale ? g_strdup_printf ("%s[%s]", key, locale) : g_strdup (key);
  g_autofree char *value = NULL;
  g_auto(GStrv) items = NULL;

  if (!g_key_file_has_key (src, group, name, NULL))
    return TRUE;
  if (list)
    {
      items = g_key_file_get_string_list (src, group, name, NULL, NULL);
      if (items == NULL || !list_ok (items, token))
        return invalid (error, key);
      if (locale)
        g_key_file_set_locale_string_list (dst, group, key, locale, (const char * const *) items,
                                           g_strv_length (items));
      else
        g_key_file_set_string_list (dst, group, key, (const char * const *) items, g_strv_length (items));
      return TRUE;
    }
  value = g_key_file_get_string (src, group, name, NULL);
  if (value == NULL || !text_ok (value))
    return invalid (error, key);
  if (locale)
    g_key_file_set_locale_string (dst, group, key, locale, value);
  else
    g_key_file_set_string (dst, group, key, value);
  return TRUE;
}

/* Copy @key and every translation of it (KEY[LOCALE]) in @group. */
static gboolean
copy_translated (GKeyFile *src, GKeyFile *dst, const char *group, const char *key, gboolean list, GError **error)
{
  g_auto(GStrv) keys = g_key_file_get_keys (src, group, NULL, NULL);

  if (!copy_value (src, dst, group, key, NULL, list, FALSE, error))
    return FALSE;
  for (char **k = keys; k && *k; k++)
    {
      g_autofree char *locale = key_locale (*k, key);

      if (locale == NULL)
        continue;
      if (!locale_ok (locale))
        return invalid (error, key);
      if (!copy_value (src, dst, group, key, locale, list, FALSE, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
copy_boolean (GKeyFile *src, GKeyFile *dst, const char *group, const char *key, GError **error)
{
  g_autoptr(GError) local = NULL;
  gboolean value;

  if (!g_key_file_has_key (src, group, key, NULL))
    return TRUE;
  value = g_key_file_get_boolean (src, group, key, &local);
  if (local)
    return invalid (error, key);
  g_key_file_set_boolean (dst, group, key, value);
  return TRUE;
}

static gboolean
copy_exec (GKeyFile *src, GKeyFile *dst, const char *group, const LimenLauncherTarget *target, const char *what,
           GError **error)
{
  g_autofree char *exec = g_key_file_get_string (src, group, G_KEY_FILE_DESKTOP_KEY_EXEC, NULL);
  g_autofree char *line = exec_rewrite (exec, target, what, error);

  if (line == NULL)
    return FALSE;
  g_key_file_set_string (dst, group, G_KEY_FILE_DESKTOP_KEY_EXEC, line);
  return TRUE;
}

/* ---- groups -------------------------------------------------------------------------- */

static gboolean
action_id_ok (const char *id)
{
  gsize n = strlen (id);

  if (n == 0 || n > ACTION_ID_MAX)
    return FALSE;
  for (const char *p = id; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-')
      return FALSE;
  return TRUE;
}

/* The listed actions, each with its group; every group of @src must be [Desktop Entry] or
 * one of these (another group would be read by someone, some day). */
static GStrv
actions_get (GKeyFile *src, GError **error)
{
  g_auto(GStrv) listed = g_key_file_get_string_list (src, G_KEY_FILE_DESKTOP_GROUP, "Actions", NULL, NULL);
  g_auto(GStrv) groups = g_key_file_get_groups (src, NULL);
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  g_autoptr(GPtrArray) ids = g_ptr_array_new ();

  for (char **a = listed; a && *a; a++)
    {
      g_autofree char *group = g_strconcat (ACTION_GROUP_PREFIX, *a, NULL);

      if (**a == '\0' || g_ptr_array_find_with_equal_func (ids, *a, g_str_equal, NULL))
        continue;
      if (!action_id_ok (*a) || !g_key_file_has_group (src, group) || ids->len == LIMEN_LAUNCHER_ACTIONS_MAX)
        {
          invalid (error, "Actions (at most 16 ids of [A-Za-z0-9-], each with its [Desktop Action] group)");
          return NULL;
        }
      g_ptr_array_add (ids, *a);
      g_strv_builder_add (b, *a);
    }
  for (char **g = groups; *g; g++)
    if (!g_str_equal (*g, G_KEY_FILE_DESKTOP_GROUP) &&
        !(g_str_has_prefix (*g, ACTION_GROUP_PREFIX) &&
          g_ptr_array_find_with_equal_func (ids, *g + strlen (ACTION_GROUP_PREFIX), g_str_equal, NULL)))
      {
        invalid (error, "only [Desktop Entry] and the [Desktop Action] groups its Actions list are allowed");
        return NULL;
      }
  return g_strv_builder_end (b);
}

/* [Desktop Action ID]: its Name (and translations) and its Exec, rewritten as the main one. */
static gboolean
action_copy (GKeyFile *src, GKeyFile *dst, const char *id, const LimenLauncherTarget *target, GError **error)
{
  g_autofree char *group = g_strconcat (ACTION_GROUP_PREFIX, id, NULL);

  if (!g_key_file_has_key (src, group, G_KEY_FILE_DESKTOP_KEY_NAME, NULL))
    return invalid (error, "a [Desktop Action] needs a Name");
  return copy_translated (src, dst, group, G_KEY_FILE_DESKTOP_KEY_NAME, FALSE, error) &&
         copy_exec (src, dst, group, target, "Exec of a [Desktop Action]", error);
}

/* [Desktop Entry]'s own keys, past Type, Name, Icon and Exec. */
static gboolean
main_copy (GKeyFile *src, GKeyFile *dst, GError **error)
{
  const char *g = G_KEY_FILE_DESKTOP_GROUP;

  return copy_translated (src, dst, g, G_KEY_FILE_DESKTOP_KEY_COMMENT, FALSE, error) &&
         copy_translated (src, dst, g, "Keywords", TRUE, error) &&
         copy_value (src, dst, g, G_KEY_FILE_DESKTOP_KEY_CATEGORIES, NULL, TRUE, TRUE, error) &&
         copy_value (src, dst, g, G_KEY_FILE_DESKTOP_KEY_STARTUP_WM_CLASS, NULL, FALSE, FALSE, error) &&
         copy_boolean (src, dst, g, G_KEY_FILE_DESKTOP_KEY_STARTUP_NOTIFY, error);
}

/* The launcher for the desktop entry in @src. */
static GKeyFile *
entry_build (GKeyFile *src, const LimenLauncherTarget *target, GError **error)
{
  g_autoptr(GKeyFile) dst = g_key_file_new ();
  g_autofree char *type = NULL;
  g_auto(GStrv) actions = NULL;
  const char *g = G_KEY_FILE_DESKTOP_GROUP;

  type = g_key_file_get_string (src, g, G_KEY_FILE_DESKTOP_KEY_TYPE, NULL);
  if (type && !g_str_equal (type, G_KEY_FILE_DESKTOP_TYPE_APPLICATION))
    {
      invalid (error, "Type must be Application");
      return NULL;
    }
  if ((actions = actions_get (src, error)) == NULL)
    return NULL;
  g_key_file_set_string (dst, g, G_KEY_FILE_DESKTOP_KEY_TYPE, G_KEY_FILE_DESKTOP_TYPE_APPLICATION);
  g_key_file_set_string (dst, g, G_KEY_FILE_DESKTOP_KEY_NAME, target->name);
  g_key_file_set_string (dst, g, G_KEY_FILE_DESKTOP_KEY_ICON, target->icon);
  if (!copy_exec (src, dst, g, target, "Exec", error) || !main_copy (src, dst, error))
    return NULL;
  if (target->flatpak)
    g_key_file_set_string (dst, g, "X-Flatpak", target->app_id);
  if (actions[0])
    g_key_file_set_string_list (dst, g, "Actions", (const char * const *) actions, g_strv_length (actions));
  for (char **a = actions; *a; a++)
    if (!action_copy (src, dst, *a, target, error))
      return NULL;
  return g_steal_pointer (&dst);
}

/* @raw with every escape one GLib reads without an error (NULL when one is not): the key
 * file escapes, and the Exec quoting escapes \" \` \$ that desktop files use at this level,
 * which GLib and KConfig both keep as they are, written as the escaped backslash they
 * amount to. GLib 2.74 reads a value with two bad escapes by setting an error over an error. */
static char *
raw_normalize (const char *raw)
{
  g_autoptr(GString) out = g_string_new (NULL);

  for (const char *p = raw; *p; p++)
    {
      if (*p != '\\')
        g_string_append_c (out, *p);
      else if (*++p != '\0' && strchr ("sntr\\;", *p))
        g_string_append_c (g_string_append_c (out, '\\'), *p);
      else if (*p != '\0' && strchr ("\"`$", *p))
        g_string_append_c (g_string_append (out, "\\\\"), *p);
      else
        return NULL;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static GKeyFile *
entry_load (const char *data, GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_auto(GStrv) groups = NULL;

  if (!g_key_file_load_from_data (kf, data, -1, G_KEY_FILE_KEEP_TRANSLATIONS, NULL) ||
      !g_key_file_has_group (kf, G_KEY_FILE_DESKTOP_GROUP))
    {
      invalid (error, "not a desktop entry");
      return NULL;
    }
  groups = g_key_file_get_groups (kf, NULL);
  for (char **g = groups; *g; g++)
    {
      g_auto(GStrv) keys = g_key_file_get_keys (kf, *g, NULL, NULL);

      for (char **k = keys; k && *k; k++)
        {
          g_autofree char *raw = g_key_file_get_value (kf, *g, *k, NULL);
          g_autofree char *normal = raw ? raw_normalize (raw) : NULL;

          if (normal == NULL)
            {
              invalid (error, "a value with an escape sequence the specification does not define");
              return NULL;
            }
          if (!g_str_equal (raw, normal))
            g_key_file_set_value (kf, *g, *k, normal);
        }
    }
  return g_steal_pointer (&kf);
}

GKeyFile *
limen_launcher_entry_build (const char *entry, const LimenLauncherTarget *target, GError **error)
{
  g_autoptr(GKeyFile) src = entry_load (entry, error);

  return src ? entry_build (src, target, error) : NULL;
}

/* ---- launchers installed before ------------------------------------------------------ */

/* The app's own command line inside @group's installed `flatpak run --command=CMD APP ARGS`
 * (as Limen and the reference write it), put back as Exec; FALSE when it is anything else. */
static gboolean
exec_unwrap (GKeyFile *kf, const char *group, const char *app_id)
{
  g_autofree char *exec = g_key_file_get_string (kf, group, G_KEY_FILE_DESKTOP_KEY_EXEC, NULL);
  g_auto(GStrv) argv = NULL;
  g_autoptr(GString) inner = g_string_new (NULL);

  if (exec == NULL || !g_shell_parse_argv (exec, NULL, &argv, NULL) || g_strv_length (argv) < 4 ||
      !g_str_equal (argv[0], "flatpak") || !g_str_equal (argv[1], "run") ||
      !g_str_has_prefix (argv[2], "--command=") || !g_str_equal (argv[3], app_id))
    return FALSE;
  for (guint i = 2; argv[i]; i++)
    {
      const char *arg = i == 2 ? argv[2] + strlen ("--command=") : argv[i];
      g_autofree char *q = arg[0] == '%' && arg[1] != '%' ? g_strdup (arg) : exec_quote (arg);

      if (i == 3)
        continue;
      if (inner->len)
        g_string_append_c (inner, ' ');
      g_string_append (inner, q);
    }
  g_key_file_set_string (kf, group, G_KEY_FILE_DESKTOP_KEY_EXEC, inner->str);
  return TRUE;
}

char *
limen_launcher_entry_recheck (const char *desktop_id, const char *data, const char *icon_dir, GError **error)
{
  g_autoptr(GKeyFile) kf = NULL;
  g_autofree char *app_id = NULL;
  g_autofree char *name = NULL;
  g_autofree char *icon = NULL;
  g_auto(GStrv) groups = NULL;
  g_autoptr(GKeyFile) out = NULL;
  LimenLauncherTarget target;
  const char *g = G_KEY_FILE_DESKTOP_GROUP;

  /* A host app's launcher crosses no boundary and is left as its app and the person made it;
   * Limen and the reference mark every Flatpak app's with X-Flatpak (any mention of it, here,
   * even where GLib would not read it). */
  if (!g_str_has_prefix (desktop_id, "snap.") && strstr (data, "X-Flatpak") == NULL)
    return g_strdup (data);
  if ((kf = entry_load (data, error)) == NULL)
    return NULL;
  app_id = g_key_file_get_string (kf, g, "X-Flatpak", NULL);
  /* A Snap app's launcher was installed with its command as it was: nothing to keep. */
  if (g_str_has_prefix (desktop_id, "snap.") || app_id == NULL || !limen_app_id_is_valid (app_id) ||
      !g_str_has_prefix (desktop_id, app_id) || desktop_id[strlen (app_id)] != '.')
    {
      invalid (error, "not a launcher of the app it names");
      return NULL;
    }
  name = g_key_file_get_string (kf, g, G_KEY_FILE_DESKTOP_KEY_NAME, NULL);
  icon = g_key_file_get_string (kf, g, G_KEY_FILE_DESKTOP_KEY_ICON, NULL);
  if (name == NULL || !text_ok (name) || icon == NULL || !g_str_has_prefix (icon, icon_dir) ||
      icon[strlen (icon_dir)] != '/' || strstr (icon, "/../") || !text_ok (icon))
    {
      invalid (error, "Name or Icon");
      return NULL;
    }
  groups = g_key_file_get_groups (kf, NULL);
  for (char **gr = groups; *gr; gr++)
    if (!exec_unwrap (kf, *gr, app_id))
      {
        invalid (error, "an Exec that is not the app's own `flatpak run`");
        return NULL;
      }
  target = (LimenLauncherTarget) { app_id, TRUE, name, icon };
  out = entry_build (kf, &target, error);
  return out ? g_key_file_to_data (out, NULL, NULL) : NULL;
}
