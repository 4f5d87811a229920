/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One place knows the document store's mount points: the FileChooser's current_folder and
 * current_file, and anything else an app names by its document path, go through here. */
#include "document-path.h"

#include <string.h>

#define FLATPAK_DOC_MOUNT "/run/flatpak/doc"
#define FLATPAK_DOC_PREFIX FLATPAK_DOC_MOUNT "/"

/* A path below a document may not leave it. */
static gboolean
climbs_out (const char *rest)
{
  return g_str_equal (rest, "..") || g_str_has_prefix (rest, "../") || strstr (rest, "/../") != NULL ||
         g_str_has_suffix (rest, "/..");
}

/* @below, what follows a store's mount point: the document id and a path below it. */
static gboolean
split_below (const char *below, char **doc_id, char **rest)
{
  g_auto(GStrv) parts = g_strsplit (below, "/", 2);

  if (parts[0] == NULL || parts[1] == NULL || *parts[0] == '\0' || *parts[1] == '\0' ||
      g_str_equal (parts[0], "..") || g_str_equal (parts[0], ".") || climbs_out (parts[1]))
    return FALSE;
  *doc_id = g_strdup (parts[0]);
  *rest = g_strdup (parts[1]);
  return TRUE;
}

gboolean
limen_document_path_parse (const char *path, guint uid, char **doc_id, char **rest)
{
  g_autofree char *user_prefix = g_strdup_printf ("/run/user/%u/doc/", uid);

  if (g_str_has_prefix (path, user_prefix))
    return split_below (path + strlen (user_prefix), doc_id, rest);
  if (g_str_has_prefix (path, FLATPAK_DOC_PREFIX))
    return split_below (path + strlen (FLATPAK_DOC_PREFIX), doc_id, rest);
  return FALSE;
}

gboolean
limen_document_store_path_parse (const char *path, const char *mountpoint, char **doc_id, char **rest)
{
  g_autofree char *prefix = g_strconcat (mountpoint, "/", NULL);
  const char *below;

  if (!g_str_has_prefix (path, prefix))
    return FALSE;
  below = path + strlen (prefix);
  if (g_str_has_prefix (below, "by-app/"))
    {
      below = strchr (below + strlen ("by-app/"), '/');
      if (below == NULL)
        return FALSE;
      below++;
    }
  /* by-app itself names no document. */
  return !g_str_has_prefix (below, "by-app/") && split_below (below, doc_id, rest);
}

char *
limen_document_path_to_host (const char *host_path, const char *rest)
{
  g_autofree char *parent = g_path_get_dirname (host_path);

  return g_build_filename (parent, rest, NULL);
}

const char *
limen_document_path_app_mount (LimenAppKind kind, const char *store_mountpoint)
{
  /* Flatpak binds MOUNTPOINT/by-app/APP there in every sandbox it makes, whatever the
   * runtime dir is called; a Snap's confinement sees the store where the host does. */
  return kind == LIMEN_APP_KIND_FLATPAK ? FLATPAK_DOC_MOUNT : store_mountpoint;
}
