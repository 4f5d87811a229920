/* Static file access of installed Flatpak apps (see app-access.h).
 *
 * The model, checked against `flatpak info --file-access` (flatpak 1.14) by
 * autotests/integration/test_documents_as_needed.py:
 *  - filesystem keys come from the app's metadata, then the overrides in order (system
 *    global and app files for a system-installed app, then the user's global and app
 *    files); a later key replaces an earlier one of the same name, `!key` hides that
 *    location, `!host:reset` drops every earlier key;
 *  - a path gets the mode of the deepest location that contains it (`home` with
 *    `~/Projects:ro` leaves ~/Projects read-only, `!~/Projects` hides it);
 *  - `host` covers every top-level entry of / but the system's own (/usr, /etc, /var,
 *    /tmp, /run except /run/media, ...); paths flatpak never shares (/usr, /app, /etc,
 *    /proc, ...) are reached by no key; other apps' ~/.var/app directories are hidden
 *    and the app's own is always writable.
 * Keys for locations the sandbox sees elsewhere (host-os, host-etc) or that this model
 * does not follow (xdg-config/data/cache/run) grant nothing; negating them hides the host
 * directory they name. A negation of anything else not understood makes the app reach
 * nothing: every uncertainty lands on "make a document".
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "app-access.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  char          *root;   /* canonical; NULL for the `host` rule */
  LimenAppAccess mode;
} Rule;

typedef struct {
  GArray  *rules;        /* of Rule */
  gboolean broken;       /* something did not parse: grants nothing */
} RuleSet;

struct _LimenAppAccessRules {
  char      *app_id;
  char      *var_app;    /* canonical $HOME/.var/app, or NULL */
  char      *own_data;   /* $HOME/.var/app/APP_ID, or NULL */
  GPtrArray *sets;       /* one RuleSet per installation the app is installed in */
};

/* Never shared at their own path, whatever the keys say. */
static const char * const reserved[] = {
  "/app", "/bin", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin",
  "/sys", "/usr", "/run/flatpak", "/run/host", "/.flatpak-info", NULL
};

/* Top-level entries `host` leaves out. */
static const char * const host_skips[] = {
  "app", "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "root",
  "run", "sbin", "sys", "tmp", "usr", "var", NULL
};

static const struct {
  const char   *key;
  GUserDirectory dir;
} xdg_dirs[] = {
  { "xdg-desktop", G_USER_DIRECTORY_DESKTOP },
  { "xdg-documents", G_USER_DIRECTORY_DOCUMENTS },
  { "xdg-download", G_USER_DIRECTORY_DOWNLOAD },
  { "xdg-music", G_USER_DIRECTORY_MUSIC },
  { "xdg-pictures", G_USER_DIRECTORY_PICTURES },
  { "xdg-public-share", G_USER_DIRECTORY_PUBLIC_SHARE },
  { "xdg-templates", G_USER_DIRECTORY_TEMPLATES },
  { "xdg-videos", G_USER_DIRECTORY_VIDEOS },
};

static gboolean
path_within (const char *path, const char *root)
{
  size_t n = strlen (root);

  if (n == 1 && root[0] == '/')
    return TRUE;
  return strncmp (path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static void
rule_clear (gpointer data)
{
  g_free (((Rule *) data)->root);
}

static void
rule_set_free (gpointer data)
{
  RuleSet *set = data;

  g_array_unref (set->rules);
  g_free (set);
}

/* "~/x" -> $HOME/x, "xdg-documents/x" -> its directory/x; NULL when it names no host
 * directory this model follows. *@hidden_only: the key grants nothing here but its negation
 * still hides what it names. */
static char *
key_location (const char *key, gboolean *hidden_only, gboolean *understood)
{
  static const struct {
    const char *key;
    const char *(*base) (void);
  } data_dirs[] = {
    { "xdg-config", g_get_user_config_dir },
    { "xdg-data", g_get_user_data_dir },
    { "xdg-cache", g_get_user_cache_dir },
    { "xdg-run", g_get_user_runtime_dir },
  };
  const char *home = g_get_home_dir ();

  *hidden_only = FALSE;
  *understood = TRUE;
  if (strcmp (key, "home") == 0 || strcmp (key, "~") == 0)
    return g_strdup (home);
  if (g_str_has_prefix (key, "~/"))
    return g_build_filename (home, key + 2, NULL);
  if (key[0] == '/')
    return g_strdup (key);
  if (strcmp (key, "host-os") == 0 || strcmp (key, "host-etc") == 0)
    {
      *hidden_only = TRUE;   /* seen under /run/host, never at the host's own path */
      return NULL;
    }
  for (guint i = 0; i < G_N_ELEMENTS (xdg_dirs); i++)
    {
      size_t n = strlen (xdg_dirs[i].key);

      if (strncmp (key, xdg_dirs[i].key, n) == 0 && (key[n] == '\0' || key[n] == '/'))
        {
          const char *dir = g_get_user_special_dir (xdg_dirs[i].dir);

          /* flatpak shares no user directory that is unset or is $HOME itself. */
          if (dir == NULL || strcmp (dir, home) == 0)
            return NULL;
          return key[n] ? g_build_filename (dir, key + n + 1, NULL) : g_strdup (dir);
        }
    }
  for (guint i = 0; i < G_N_ELEMENTS (data_dirs); i++)
    {
      size_t n = strlen (data_dirs[i].key);

      if (strncmp (key, data_dirs[i].key, n) == 0 && (key[n] == '\0' || key[n] == '/'))
        {
          *hidden_only = TRUE;
          return key[n] ? g_build_filename (data_dirs[i].base (), key + n + 1, NULL)
                        : g_strdup (data_dirs[i].base ());
        }
    }
  *understood = FALSE;
  return NULL;
}

static gboolean
is_reserved (const char *path)
{
  if (strcmp (path, "/") == 0)
    return TRUE;
  for (guint i = 0; reserved[i]; i++)
    if (path_within (path, reserved[i]))
      return TRUE;
  return FALSE;
}

/* Merge the filesystems of one keyfile into @keys (key -> mode). FALSE: the file exists
 * but does not parse. */
static gboolean
merge_keyfile (GHashTable *keys, const char *file)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) entries = NULL;

  if (!g_key_file_load_from_file (kf, file, G_KEY_FILE_NONE, &error))
    return g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  entries = g_key_file_get_string_list (kf, "Context", "filesystems", NULL, NULL);
  for (guint i = 0; entries && entries[i]; i++)
    {
      const char *e = entries[i];
      gboolean negated = e[0] == '!';
      g_autofree char *key = g_strdup (negated ? e + 1 : e);
      char *colon = strrchr (key, ':');
      LimenAppAccess mode = LIMEN_APP_ACCESS_WRITE;
      size_t n;

      if (colon && strchr (colon, '/') == NULL)
        {
          if (strcmp (colon, ":ro") == 0)
            mode = LIMEN_APP_ACCESS_READ;
          else if (strcmp (colon, ":rw") == 0 || strcmp (colon, ":create") == 0)
            mode = LIMEN_APP_ACCESS_WRITE;
          else if (strcmp (colon, ":reset") == 0 && strcmp (key, "host:reset") == 0 && negated)
            {
              g_hash_table_remove_all (keys);
              continue;
            }
          else
            return FALSE;
          *colon = '\0';
        }
      while ((n = strlen (key)) > 1 && key[n - 1] == '/')
        key[n - 1] = '\0';
      if (key[0] == '\0')
        continue;
      g_hash_table_insert (keys, g_steal_pointer (&key), GINT_TO_POINTER (negated ? LIMEN_APP_ACCESS_NONE : mode));
    }
  return TRUE;
}

static void
add_rule (RuleSet *set, char *root, LimenAppAccess mode)
{
  Rule r = { root, mode };

  g_array_append_val (set->rules, r);
}

static RuleSet *
load_installation (LimenAppAccessRules *rules, const char *system_dir, const char *user_dir, gboolean system)
{
  const char *inst = system ? system_dir : user_dir;
  g_autofree char *metadata = g_build_filename (inst, "app", rules->app_id, "current", "active", "metadata", NULL);
  g_autoptr(GHashTable) keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *sys_global = g_build_filename (system_dir, "overrides", "global", NULL);
  g_autofree char *sys_app = g_build_filename (system_dir, "overrides", rules->app_id, NULL);
  g_autofree char *user_global = g_build_filename (user_dir, "overrides", "global", NULL);
  g_autofree char *user_app = g_build_filename (user_dir, "overrides", rules->app_id, NULL);
  const char *layers[] = { metadata, system ? sys_global : NULL, system ? sys_app : NULL, user_global, user_app };
  GHashTableIter iter;
  gpointer k, v;
  RuleSet *set;

  if (access (metadata, F_OK) != 0)
    return NULL;
  set = g_new0 (RuleSet, 1);
  set->rules = g_array_new (FALSE, FALSE, sizeof (Rule));
  g_array_set_clear_func (set->rules, rule_clear);
  for (guint i = 0; i < G_N_ELEMENTS (layers); i++)
    if (layers[i] && !merge_keyfile (keys, layers[i]))
      {
        g_debug ("as-needed-by-app: %s does not parse: %s reaches nothing", layers[i], rules->app_id);
        set->broken = TRUE;
        return set;
      }

  g_hash_table_iter_init (&iter, keys);
  while (g_hash_table_iter_next (&iter, &k, &v))
    {
      LimenAppAccess mode = GPOINTER_TO_INT (v);
      gboolean hidden_only, understood;
      g_autofree char *location = NULL;
      char *root;

      if (strcmp (k, "host") == 0)
        {
          add_rule (set, NULL, mode);
          continue;
        }
      location = key_location (k, &hidden_only, &understood);
      if (!understood)
        {
          if (mode == LIMEN_APP_ACCESS_NONE)
            {
              g_debug ("as-needed-by-app: %s hides %s, not understood: it reaches nothing", rules->app_id,
                       (const char *) k);
              set->broken = TRUE;
              return set;
            }
          continue;
        }
      if (location == NULL || (hidden_only && mode != LIMEN_APP_ACCESS_NONE))
        continue;
      /* Nothing is resolved below the runtime directory: the document store's own mount is
       * there, and this runs on the D-Bus thread. Grants there count for nothing. */
      if (path_within (location, g_get_user_runtime_dir ()))
        {
          if (mode == LIMEN_APP_ACCESS_NONE)
            add_rule (set, g_strdup (location), mode);
          continue;
        }
      /* A hidden location is hidden under its own name and where it points. */
      if (mode == LIMEN_APP_ACCESS_NONE)
        add_rule (set, g_strdup (location), mode);
      /* A location that does not exist holds no existing file; one that is a symlink is
       * shared where it points, as flatpak does. */
      if ((root = realpath (location, NULL)) == NULL)
        continue;
      if (mode == LIMEN_APP_ACCESS_NONE && strcmp (root, location) == 0)
        {
          free (root);
          continue;
        }
      if (mode != LIMEN_APP_ACCESS_NONE && is_reserved (root))
        {
          free (root);
          continue;
        }
      add_rule (set, g_strdup (root), mode);
      free (root);
    }
  return set;
}

LimenAppAccessRules *
limen_app_access_rules_load (const char *app_id)
{
  LimenAppAccessRules *rules = g_new0 (LimenAppAccessRules, 1);
  const char *env_user = g_getenv ("FLATPAK_USER_DIR");
  const char *env_system = g_getenv ("FLATPAK_SYSTEM_DIR");
  g_autofree char *user_dir = env_user && *env_user ? g_strdup (env_user)
                                                     : g_build_filename (g_get_user_data_dir (), "flatpak", NULL);
  const char *system_dir = env_system && *env_system ? env_system : "/var/lib/flatpak";
  char *home = realpath (g_get_home_dir (), NULL);

  rules->app_id = g_strdup (app_id);
  if (home)
    {
      rules->var_app = g_build_filename (home, ".var", "app", NULL);
      rules->own_data = g_build_filename (rules->var_app, app_id, NULL);
    }
  free (home);
  rules->sets = g_ptr_array_new_with_free_func (rule_set_free);
  for (int system = 0; system <= 1; system++)
    {
      RuleSet *set = load_installation (rules, system_dir, user_dir, system);

      if (set)
        g_ptr_array_add (rules->sets, set);
    }
  return rules;
}

void
limen_app_access_rules_free (LimenAppAccessRules *rules)
{
  if (rules == NULL)
    return;
  g_free (rules->app_id);
  g_free (rules->var_app);
  g_free (rules->own_data);
  g_ptr_array_unref (rules->sets);
  g_free (rules);
}

/* The length of the part of @path that `host` shares, or 0. */
static size_t
host_covers (const char *path)
{
  const char *end = strchr (path + 1, '/');
  size_t n = end ? (size_t) (end - path - 1) : strlen (path + 1);

  if (path_within (path, "/run/media"))
    return strlen ("/run/media");
  for (guint i = 0; host_skips[i]; i++)
    if (strlen (host_skips[i]) == n && strncmp (path + 1, host_skips[i], n) == 0)
      return 0;
  return n + 1;
}

static LimenAppAccess
check_set (RuleSet *set, const char *path)
{
  LimenAppAccess best = LIMEN_APP_ACCESS_NONE;
  size_t best_len = 0;

  for (guint i = 0; i < set->rules->len; i++)
    {
      Rule *r = &g_array_index (set->rules, Rule, i);
      size_t len = r->root ? (path_within (path, r->root) ? strlen (r->root) : 0) : host_covers (path);

      if (len == 0)
        continue;
      /* The deepest location decides; two keys naming the same one give the lesser mode. */
      if (len > best_len || (len == best_len && r->mode < best))
        {
          best = r->mode;
          best_len = len;
        }
    }
  return best;
}

LimenAppAccess
limen_app_access_rules_check (LimenAppAccessRules *rules, const char *path)
{
  LimenAppAccess result = LIMEN_APP_ACCESS_WRITE;

  if (path[0] != '/' || rules->sets->len == 0 || is_reserved (path))
    return LIMEN_APP_ACCESS_NONE;
  for (guint i = 0; i < rules->sets->len; i++)
    if (((RuleSet *) rules->sets->pdata[i])->broken)
      return LIMEN_APP_ACCESS_NONE;
  if (rules->var_app && path_within (path, rules->own_data))
    return LIMEN_APP_ACCESS_WRITE;   /* the app's own data, always mounted */
  if (rules->var_app && path_within (path, rules->var_app))
    return LIMEN_APP_ACCESS_NONE;    /* other apps' data, always hidden */
  for (guint i = 0; i < rules->sets->len; i++)
    result = MIN (result, check_set (rules->sets->pdata[i], path));
  return result;
}
