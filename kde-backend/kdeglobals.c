/* Limen — the kdeglobals reader of limen-kde.
 *
 * KConfig's file format read with GLib only: Settings is called the moment a frontend
 * starts, and loading QtCore + KConfigCore for it would cost more idle memory than
 * limen-kde may use before its first dialog. Handles the parts of the format KDE writes
 * into kdeglobals and colour schemes: [Group] and [Group][Sub] headers, [$i]
 * immutability (file and group), key[$e] expansion of $HOME-style variables, localized
 * keys (skipped), and the value escapes (\s \t \n \r \\ \xHH).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kdeglobals.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  GTree      *groups;            /* group → GTree (key → value), in byte order */
  GHashTable *immutable_groups;  /* set of group names */
  gboolean    immutable;         /* a file said [$i]: less important files are not read */
} Config;

/* Byte order, as KConfig's own maps have it. */
static int
compare_names (gconstpointer a, gconstpointer b, gpointer user_data)
{
  return strcmp (a, b);
}

static void
config_init (Config *cfg)
{
  cfg->groups = g_tree_new_full (compare_names, NULL, g_free, (GDestroyNotify) g_tree_unref);
  cfg->immutable_groups = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  cfg->immutable = FALSE;
}

static void
config_clear (Config *cfg)
{
  g_clear_pointer (&cfg->groups, g_tree_unref);
  g_clear_pointer (&cfg->immutable_groups, g_hash_table_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Config, config_clear)

/* A copy of @s without leading and trailing blanks (space, tab, carriage return). */
static char *
trim (const char *s, gsize len)
{
  gsize b = 0, e = len;

  while (b < e && strchr (" \t\r", s[b]) && s[b] != '\0')
    b++;
  while (e > b && strchr (" \t\r", s[e - 1]) && s[e - 1] != '\0')
    e--;
  return g_strndup (s + b, e - b);
}

static char *
unescape (const char *s)
{
  gsize n = strlen (s);
  GString *out = g_string_sized_new (n);

  for (gsize i = 0; i < n; i++)
    {
      char c;

      if (s[i] != '\\' || i + 1 == n)
        {
          g_string_append_c (out, s[i]);
          continue;
        }
      c = s[++i];
      switch (c)
        {
        case 's': g_string_append_c (out, ' '); break;
        case 't': g_string_append_c (out, '\t'); break;
        case 'n': g_string_append_c (out, '\n'); break;
        case 'r': g_string_append_c (out, '\r'); break;
        case '\\': g_string_append_c (out, '\\'); break;
        case 'x':
          if (i + 2 < n && g_ascii_isxdigit (s[i + 1]) && g_ascii_isxdigit (s[i + 2]))
            {
              g_string_append_c (out, (char) (g_ascii_xdigit_value (s[i + 1]) * 16 + g_ascii_xdigit_value (s[i + 2])));
              i += 2;
            }
          else
            g_string_append (out, "\\x");
          break;
        default:
          /* "\;" and "\," keep their backslash: they belong to list syntax. */
          g_string_append_c (out, '\\');
          g_string_append_c (out, c);
        }
    }
  return g_string_free (out, FALSE);
}

/* $VAR and ${VAR} as KConfig's [$e] does; $(cmd) is deliberately not run. */
static char *
expand (const char *s)
{
  gsize n = strlen (s);
  GString *out = g_string_sized_new (n);

  for (gsize i = 0; i < n; i++)
    {
      g_autofree char *name = NULL;
      const char *value;
      gsize j = i + 1;

      if (s[i] != '$' || i + 1 == n)
        {
          g_string_append_c (out, s[i]);
          continue;
        }
      if (s[j] == '{')
        {
          const char *close = strchr (s + j, '}');

          if (close == NULL)
            {
              g_string_append_c (out, s[i]);
              continue;
            }
          name = g_strndup (s + j + 1, close - (s + j + 1));
          j = close - s + 1;
        }
      else
        {
          while (j < n && (g_ascii_isalnum (s[j]) || s[j] == '_'))
            j++;
          name = g_strndup (s + i + 1, j - i - 1);
        }
      if (*name == '\0')
        {
          g_string_append_c (out, s[i]);
          continue;
        }
      value = g_getenv (name);
      if (value)
        g_string_append (out, value);
      i = j - 1;
    }
  return g_string_free (out, FALSE);
}

/* The group a header line names ("[A][B][$i]" → "A.B", *@locked TRUE). */
static char *
parse_header (const char *t, gboolean *locked)
{
  GString *group = g_string_new (NULL);
  gboolean first = TRUE;
  const char *pos = t;

  *locked = FALSE;
  while (*pos == '[')
    {
      const char *close = strchr (pos, ']');
      g_autofree char *part = NULL;

      if (close == NULL)
        break;
      part = g_strndup (pos + 1, close - pos - 1);
      if (g_str_equal (part, "$i"))
        *locked = TRUE;
      else
        {
          if (!first)
            g_string_append_c (group, '.');
          g_string_append (group, part);
          first = FALSE;
        }
      pos = close + 1;
    }
  return g_string_free (group, FALSE);
}

/* Store the entry line @t of @group in @cfg (unless it is a localized or empty key). */
static void
parse_entry (Config *cfg, const char *group, const char *t)
{
  const char *eq = strchr (t, '=');
  g_autofree char *key = trim (t, eq - t);
  g_autofree char *raw = trim (eq + 1, strlen (eq + 1));
  char *value;
  char *br = strchr (key, '[');
  gboolean do_expand = FALSE;
  GTree *entries;

  if (br)
    {
      /* Localized entries (key[de]) are not what the portal publishes. */
      if (strchr (br, '$') == NULL)
        return;
      do_expand = strchr (br, 'e') != NULL;
      *br = '\0';
    }
  if (*key == '\0')
    return;
  value = unescape (raw);
  if (do_expand)
    {
      char *expanded = expand (value);

      g_free (value);
      value = expanded;
    }
  entries = g_tree_lookup (cfg->groups, group);
  if (entries == NULL)
    {
      entries = g_tree_new_full (compare_names, NULL, g_free, g_free);
      g_tree_insert (cfg->groups, g_strdup (group), entries);
    }
  g_tree_replace (entries, g_steal_pointer (&key), value);
}

/* Parse one file into @cfg; entries of groups made immutable by earlier files stay. */
static void
parse_file (const char *path, Config *cfg)
{
  g_autofree char *contents = NULL;
  g_autofree char *group = g_strdup ("");
  gboolean group_locked = FALSE, file_immutable = FALSE;
  gsize len;

  if (!g_file_get_contents (path, &contents, &len, NULL))
    return;
  for (const char *line = contents; line < contents + len;)
    {
      const char *nl = memchr (line, '\n', contents + len - line);
      gsize line_len = (nl ? nl : contents + len) - line;
      g_autofree char *t = trim (line, line_len);

      line += line_len + 1;
      if (*t == '\0' || *t == '#')
        continue;
      if (*t == '[')
        {
          gboolean locked;

          if (g_str_equal (t, "[$i]"))
            {
              file_immutable = TRUE;
              continue;
            }
          g_free (group);
          group = parse_header (t, &locked);
          group_locked = g_hash_table_contains (cfg->immutable_groups, group);
          /* A group locked here still has this file's entries read. */
          if ((locked || file_immutable) && !group_locked)
            g_hash_table_add (cfg->immutable_groups, g_strdup (group));
          continue;
        }
      if (strchr (t, '=') == NULL || group_locked || *group == '\0')
        continue;
      parse_entry (cfg, group, t);
    }
  if (file_immutable)
    cfg->immutable = TRUE;
}

/* The absolute directories of the colon-separated @env, or of @fallback when it is unset. */
static GPtrArray *
split_dirs (const char *env, const char *fallback)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) dirs = g_strsplit ((env && *env) ? env : fallback, ":", -1);

  for (guint i = 0; dirs[i]; i++)
    if (dirs[i][0] == '/')
      g_ptr_array_add (out, g_strdup (dirs[i]));
  return out;
}

/* $XDG_CONFIG_HOME or $XDG_DATA_HOME (@var), else $HOME/@fallback; read every time. */
static char *
user_dir (const char *var, const char *fallback)
{
  const char *x = g_getenv (var);
  const char *home = g_getenv ("HOME");

  if (x && x[0] == '/')
    return g_strdup (x);
  return g_strconcat (home ? home : "", "/", fallback, NULL);
}

GStrv
limen_kdeglobals_get_paths (void)
{
  g_autoptr(GPtrArray) dirs = split_dirs (g_getenv ("XDG_CONFIG_DIRS"), "/etc/xdg");
  GPtrArray *files = g_ptr_array_new ();
  g_autofree char *home = user_dir ("XDG_CONFIG_HOME", ".config");

  /* Least important first. */
  for (guint i = dirs->len; i > 0; i--)
    g_ptr_array_add (files, g_build_filename (g_ptr_array_index (dirs, i - 1), "kdeglobals", NULL));
  g_ptr_array_add (files, g_build_filename (home, "kdeglobals", NULL));
  g_ptr_array_add (files, NULL);
  return (GStrv) g_ptr_array_free (files, FALSE);
}

static void
read_kdeglobals (Config *cfg)
{
  g_auto(GStrv) files = limen_kdeglobals_get_paths ();

  config_init (cfg);
  /* Immutability works from the most important file down, so read system files first
   * and let a system [$i] keep later files from overriding. */
  for (guint i = 0; files[i] && !cfg->immutable; i++)
    parse_file (files[i], cfg);
}

typedef struct {
  LimenKdeglobalsEntryFunc func;
  gpointer                 user_data;
  const char              *group;
  gsize                    n;
} ForeachData;

static gboolean
foreach_entry (gpointer key, gpointer value, gpointer user_data)
{
  ForeachData *d = user_data;

  d->func (d->group, key, value, d->user_data);
  d->n++;
  return FALSE;
}

static gboolean
foreach_group (gpointer key, gpointer value, gpointer user_data)
{
  ForeachData *d = user_data;

  d->group = key;
  g_tree_foreach (value, foreach_entry, d);
  return FALSE;
}

gsize
limen_kdeglobals_foreach (LimenKdeglobalsEntryFunc func, gpointer user_data)
{
  g_auto(Config) cfg = { 0 };
  ForeachData d = { func, user_data, NULL, 0 };

  read_kdeglobals (&cfg);
  g_tree_foreach (cfg.groups, foreach_group, &d);
  return d.n;
}

GPtrArray *
limen_kdeglobals_watch (GCallback on_changed, gpointer user_data)
{
  g_auto(GStrv) paths = limen_kdeglobals_get_paths ();
  GPtrArray *monitors = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; paths[i]; i++)
    {
      g_autoptr(GFile) file = g_file_new_for_path (paths[i]);
      g_autoptr(GError) error = NULL;
      GFileMonitor *monitor = g_file_monitor_file (file, G_FILE_MONITOR_WATCH_MOVES, NULL, &error);

      if (!monitor)
        {
          g_debug ("Not watching %s: %s", paths[i], error->message);
          continue;
        }
      g_signal_connect (monitor, "changed", on_changed, user_data);
      g_ptr_array_add (monitors, monitor);
    }
  return monitors;
}

/* ---- appearance ---------------------------------------------------------------------- */

static gboolean
parse_rgb (const char *s, double rgb[3])
{
  int r, g, b;

  if (sscanf (s, " %d , %d , %d", &r, &g, &b) != 3)
    return FALSE;
  if (r < 0 || r > 255 || g < 0 || g > 255 || b < 0 || b > 255)
    return FALSE;
  rgb[0] = r / 255.0;
  rgb[1] = g / 255.0;
  rgb[2] = b / 255.0;
  return TRUE;
}

static double
linear (double c)
{
  return c <= 0.04045 ? c / 12.92 : pow ((c + 0.055) / 1.055, 2.4);
}

/* WCAG relative luminance. */
static double
luminance (const double rgb[3])
{
  return 0.2126 * linear (rgb[0]) + 0.7152 * linear (rgb[1]) + 0.0722 * linear (rgb[2]);
}

static const char *
lookup (const Config *cfg, const char *group, const char *key)
{
  GTree *entries = cfg->groups ? g_tree_lookup (cfg->groups, group) : NULL;

  return entries ? g_tree_lookup (entries, key) : NULL;
}

/* The file of colour scheme @name in the data directories, or NULL. */
static char *
find_scheme_file (const char *name)
{
  g_autoptr(GPtrArray) dirs = split_dirs (g_getenv ("XDG_DATA_DIRS"), "/usr/local/share:/usr/share");

  if (*name == '\0' || strchr (name, '/'))
    return NULL;
  g_ptr_array_insert (dirs, 0, user_dir ("XDG_DATA_HOME", ".local/share"));
  for (guint i = 0; i < dirs->len; i++)
    {
      g_autofree char *file = g_strconcat (name, ".colors", NULL);
      g_autofree char *path = g_build_filename (g_ptr_array_index (dirs, i), "color-schemes", file, NULL);
      int fd = open (path, O_RDONLY | O_CLOEXEC);

      if (fd >= 0)
        {
          close (fd);
          return g_steal_pointer (&path);
        }
    }
  return NULL;
}

static gboolean
contains_nocase (const char *hay, const char *needle)
{
  g_autofree char *h = g_ascii_strdown (hay, -1);
  g_autofree char *n = g_ascii_strdown (needle, -1);

  return strstr (h, n) != NULL;
}

typedef struct {
  Config   cfg;
  Config   scheme;
  gboolean have_scheme;
} Colors;

/* A colour from kdeglobals (Plasma writes the applied scheme's colours there), else
 * from the scheme file. */
static gboolean
color (const Colors *c, const char *group, const char *key, double rgb[3])
{
  const char *v = lookup (&c->cfg, group, key);

  if (v && parse_rgb (v, rgb))
    return TRUE;
  v = c->have_scheme ? lookup (&c->scheme, group, key) : NULL;
  return v && parse_rgb (v, rgb);
}

/* Text on background at 18:1 or more; Breeze (light and dark) sits near 14:1. */
static gboolean
is_high_contrast (const Colors *c)
{
  double bg[3], fg[3], l1, l2;

  if (!((color (c, "Colors:View", "BackgroundNormal", bg) && color (c, "Colors:View", "ForegroundNormal", fg)) ||
        (color (c, "Colors:Window", "BackgroundNormal", bg) && color (c, "Colors:Window", "ForegroundNormal", fg))))
    return FALSE;
  l1 = luminance (bg);
  l2 = luminance (fg);
  return (MAX (l1, l2) + 0.05) / (MIN (l1, l2) + 0.05) >= 18.0;
}

void
limen_kdeglobals_read_appearance (LimenAppearance *out)
{
  Colors c = { 0 };
  const char *scheme_name, *accent_value, *anim;
  double bg[3], accent[3];

  memset (out, 0, sizeof *out);
  read_kdeglobals (&c.cfg);
  config_init (&c.scheme);
  scheme_name = lookup (&c.cfg, "General", "ColorScheme");
  if (scheme_name)
    {
      g_autofree char *path = find_scheme_file (scheme_name);

      if ((c.have_scheme = path != NULL))
        parse_file (path, &c.scheme);
    }

  if (color (&c, "Colors:Window", "BackgroundNormal", bg))
    out->color_scheme = luminance (bg) < 0.2 ? LIMEN_COLOR_SCHEME_DARK : LIMEN_COLOR_SCHEME_LIGHT;
  else if (scheme_name && *scheme_name)
    /* Neither colours nor the scheme file: the name is all we have ("BreezeDark"). */
    out->color_scheme = contains_nocase (scheme_name, "dark") ? LIMEN_COLOR_SCHEME_DARK : LIMEN_COLOR_SCHEME_LIGHT;

  accent_value = lookup (&c.cfg, "General", "AccentColor");
  if ((accent_value && parse_rgb (accent_value, accent)) || color (&c, "Colors:Selection", "BackgroundNormal", accent))
    {
      out->has_accent = TRUE;
      out->accent_r = accent[0];
      out->accent_g = accent[1];
      out->accent_b = accent[2];
    }

  out->high_contrast = is_high_contrast (&c) || (scheme_name && contains_nocase (scheme_name, "contrast"));

  anim = lookup (&c.cfg, "KDE", "AnimationDurationFactor");
  if (anim)
    {
      char *end = NULL;
      /* KConfig writes numbers in the C locale, whatever the user's locale is. */
      double f = g_ascii_strtod (anim, &end);

      out->reduced_motion = end != anim && f <= 0.0;
    }
  config_clear (&c.cfg);
  config_clear (&c.scheme);
}
