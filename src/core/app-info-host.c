/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host apps: an unsandboxed process is named by the systemd unit its launcher started it
 * in ("app-[launcher-]ID-RANDOM.scope", "app-[launcher-]ID[@RANDOM].service"), read from
 * its cgroup. A process outside such a unit is a host app without an id.
 */
#include "app-info-private.h"

#include <string.h>

/* systemd unit-name escaping: "\x2d" and friends. */
static char *
unescape_unit_part (const char *s, gsize len)
{
  GString *out = g_string_sized_new (len);

  for (gsize i = 0; i < len; i++)
    {
      if (s[i] == '\\' && i + 3 < len && s[i + 1] == 'x' &&
          g_ascii_isxdigit (s[i + 2]) && g_ascii_isxdigit (s[i + 3]))
        {
          g_string_append_c (out, (char) (g_ascii_xdigit_value (s[i + 2]) * 16 + g_ascii_xdigit_value (s[i + 3])));
          i += 3;
        }
      else
        g_string_append_c (out, s[i]);
    }
  return g_string_free (out, FALSE);
}

char *
limen_app_id_from_unit_name (const char *unit)
{
  g_autofree char *body = NULL;
  g_auto(GStrv) parts = NULL;
  guint n;
  const char *id_part;
  char *id;

  if (!g_str_has_prefix (unit, "app-"))
    return NULL;
  if (g_str_has_suffix (unit, ".scope"))
    {
      /* app[-<launcher>]-<ApplicationID>-<RANDOM>.scope */
      body = g_strndup (unit + 4, strlen (unit) - 4 - strlen (".scope"));
      parts = g_strsplit (body, "-", -1);
      n = g_strv_length (parts);
      if (n < 2)
        return NULL;
      id_part = parts[n - 2];
    }
  else if (g_str_has_suffix (unit, ".service"))
    {
      /* app[-<launcher>]-<ApplicationID>[@<RANDOM>].service */
      char *at;

      body = g_strndup (unit + 4, strlen (unit) - 4 - strlen (".service"));
      at = strchr (body, '@');
      if (at)
        *at = '\0';
      parts = g_strsplit (body, "-", -1);
      n = g_strv_length (parts);
      if (n < 1)
        return NULL;
      id_part = parts[n - 1];
    }
  else
    return NULL;

  if (*id_part == '\0')
    return NULL;
  id = unescape_unit_part (id_part, strlen (id_part));
  /* Unit names of apps started without an id ("app-org.kde.konsole-1234.scope" → fine;
   * "app-glib-foo-1234.scope" → "foo", not a reverse-DNS id) name nothing we can use. */
  if (!limen_app_id_is_valid (id))
    {
      g_free (id);
      return NULL;
    }
  return id;
}

/* The systemd unit a process lives in, from the unified (0::) line of /proc/PID/cgroup. */
static char *
cgroup_leaf (const char *cgroup_contents)
{
  g_auto(GStrv) lines = g_strsplit (cgroup_contents, "\n", -1);

  for (guint i = 0; lines[i]; i++)
    {
      const char *path;
      const char *slash;

      if (!g_str_has_prefix (lines[i], "0::"))
        continue;
      path = lines[i] + 3;
      slash = strrchr (path, '/');
      return g_strdup (slash ? slash + 1 : path);
    }
  return NULL;
}

char *
limen_app_id_from_cgroup (const char *cgroup_contents)
{
  g_autofree char *leaf = cgroup_leaf (cgroup_contents);

  return leaf ? limen_app_id_from_unit_name (leaf) : NULL;
}

void
limen_app_info_host_identify (LimenAppInfo *info, const char *cgroup)
{
  if (cgroup)
    info->id = limen_app_id_from_cgroup (cgroup);
}
