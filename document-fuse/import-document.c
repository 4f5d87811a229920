/* limen-documents — one entry of the reference's state at a time.
 *
 * The reference keeps a document as (ay path, t device, t inode, u flags) with the device
 * and inode of its folder (the file's parent directory, or the directory itself). Since
 * upstream 1.21.2 a fifth member follows, (ay handle): the folder's identifier from
 * name_to_handle_at(AT_HANDLE_FID), its bytes only (no handle type), which tells the same
 * folder from a new one when device numbers change. Upstream reads these members by
 * position, so a later version may add more; we do the same, and what we do not know we
 * leave out rather than refuse the document.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "import-private.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "app-info.h"
#include "errors.h"

#define REF_DOC_KNOWN_FLAGS (LIMEN_REF_DOC_UNIQUE | LIMEN_REF_DOC_TRANSIENT | LIMEN_REF_DOC_DIRECTORY)
#define HANDLE_MAX 128  /* MAX_HANDLE_SZ */
#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID 0x200  /* Linux 6.5; Debian 12's headers predate it */
#endif

struct _LimenImportRun {
  gboolean no_privilege;
  GStrv    mountinfo;  /* read once, when first needed */
};

LimenImportRun *
limen_import_run_new (void)
{
  return g_new0 (LimenImportRun, 1);
}

void
limen_import_run_free (LimenImportRun *run)
{
  g_strfreev (run->mountinfo);
  g_free (run);
}

gboolean
limen_import_run_lacks_privilege (LimenImportRun *run)
{
  return run->no_privilege;
}

void
limen_ref_doc_clear (LimenRefDoc *doc)
{
  g_clear_pointer (&doc->path, g_free);
  g_clear_pointer (&doc->fid, g_bytes_unref);
}

/* TRUE when @value is a tuple whose first members have the types in @types (NULL-ended);
 * the number of all its members goes to @n_items. */
static gboolean
tuple_starts_with (GVariant *value, const char * const *types, gsize *n_items)
{
  const GVariantType *type = g_variant_get_type (value);
  const GVariantType *item;

  if (!g_variant_type_is_tuple (type))
    return FALSE;
  item = g_variant_type_first (type);
  for (guint i = 0; types[i]; i++, item = g_variant_type_next (item))
    if (item == NULL || !g_variant_type_equal (item, G_VARIANT_TYPE (types[i])))
      return FALSE;
  *n_items = g_variant_type_n_items (type);
  return TRUE;
}

/* A path the reference could have recorded: absolute, one NUL at the end only, and for a
 * file a last component to name it by. */
static char *
read_path (GVariant *bytes, gboolean directory)
{
  gsize len;
  const char *p = g_variant_get_fixed_array (bytes, &len, 1);

  if (len < 2 || p[0] != '/' || p[len - 1] != '\0' || memchr (p, '\0', len - 1) != NULL)
    return NULL;
  if (!directory && (p[len - 2] == '/' || len - 1 >= PATH_MAX))
    return NULL;
  return g_strndup (p, len - 1);
}

LimenImportOutcome
limen_import_parse_document (GVariant *value, LimenRefDoc *doc, GVariant **perms, char **why)
{
  static const char * const entry_types[] = { "v", "a{sas}", NULL };
  static const char * const data_types[] = { "ay", "t", "t", "u", NULL };
  g_autoptr(GVariant) data = NULL;
  g_autoptr(GVariant) path = NULL;
  gsize n_entry, n_data;

  if (value == NULL)
    {
      *why = g_strdup ("its value cannot be read");
      return LIMEN_IMPORT_MALFORMED;
    }
  if (!tuple_starts_with (value, entry_types, &n_entry))
    {
      *why = g_strdup_printf ("an entry of type %s", g_variant_get_type_string (value));
      return LIMEN_IMPORT_UNKNOWN_LAYOUT;
    }
  g_variant_get_child (value, 0, "v", &data);
  if (!tuple_starts_with (data, data_types, &n_data))
    {
      *why = g_strdup_printf ("document data of type %s", g_variant_get_type_string (data));
      return LIMEN_IMPORT_UNKNOWN_LAYOUT;
    }
  g_variant_get_child (data, 1, "t", &doc->dev);
  g_variant_get_child (data, 2, "t", &doc->ino);
  g_variant_get_child (data, 3, "u", &doc->flags);
  path = g_variant_get_child_value (data, 0);
  doc->path = read_path (path, (doc->flags & LIMEN_REF_DOC_DIRECTORY) != 0);
  if (doc->path == NULL)
    {
      *why = g_strdup ("its path is not an absolute file name");
      return LIMEN_IMPORT_MALFORMED;
    }
  doc->n_unknown = (n_entry - 2) + (n_data > 5 ? n_data - 5 : 0) + ((doc->flags & ~REF_DOC_KNOWN_FLAGS) != 0);
  if (n_data >= 5)
    {
      g_autoptr(GVariant) handle = g_variant_get_child_value (data, 4);
      gsize len = g_variant_get_size (handle);

      if (!g_variant_is_of_type (handle, G_VARIANT_TYPE_BYTESTRING))
        doc->n_unknown++;
      else if (len > 0 && len <= HANDLE_MAX)
        doc->fid = g_bytes_new (g_variant_get_data (handle), len);
    }
  *perms = g_variant_get_child_value (value, 1);
  return LIMEN_IMPORT_IMPORTED;
}

/* The identifier of @fd as the reference records one; a kernel without AT_HANDLE_FID (before
 * 6.5) gives the plain handle, which has the same bytes on filesystems that can open it. */
static GBytes *
folder_fid (int fd)
{
  struct { struct file_handle fh; unsigned char data[HANDLE_MAX]; } h;
  int mount_id;

  h.fh.handle_bytes = HANDLE_MAX;
  if (name_to_handle_at (fd, "", &h.fh, &mount_id, AT_EMPTY_PATH | AT_HANDLE_FID) != 0)
    {
      h.fh.handle_bytes = HANDLE_MAX;
      if (name_to_handle_at (fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) != 0)
        return NULL;
    }
  return g_bytes_new (h.fh.f_handle, h.fh.handle_bytes);
}

static gboolean
same_fid (int fd, GBytes *fid)
{
  g_autoptr(GBytes) now = folder_fid (fd);

  return now && g_bytes_equal (now, fid);
}

/* The types a filesystem gives its handles when asked for no parent; the identifier was
 * stored without one, and each guess is checked against it before it is believed. */
static const int fid_types[] = {
  0x01,  /* FILEID_INO32_GEN: ext4, xfs, f2fs, tmpfs and most others */
  0x81,  /* FILEID_INO64_GEN: xfs with 64-bit inodes, FUSE */
  0x4d,  /* btrfs, without parent */
  0x71,  /* FAT, without parent */
  0xf8,  /* overlayfs */
};

static int
open_fid_on (LimenImportRun *run, int mount_fd, GBytes *fid, guint64 ino)
{
  struct { struct file_handle fh; unsigned char data[HANDLE_MAX]; } h;
  gsize len;
  const void *bytes = g_bytes_get_data (fid, &len);

  for (guint i = 0; i < G_N_ELEMENTS (fid_types) && !run->no_privilege; i++)
    {
      struct stat st;
      int fd;

      h.fh.handle_bytes = len;
      h.fh.handle_type = fid_types[i];
      memcpy (h.fh.f_handle, bytes, len);
      fd = open_by_handle_at (mount_fd, &h.fh, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0)
        {
          run->no_privilege = (errno == EPERM);
          continue;
        }
      if (fstat (fd, &st) == 0 && S_ISDIR (st.st_mode) && st.st_ino == ino && same_fid (fd, fid))
        return fd;
      close (fd);
    }
  return -1;
}

/* Mount points of device @dev, from /proc/self/mountinfo (field 3 major:minor, field 5 the
 * mount point, octal-escaped). */
static GPtrArray *
mounts_of (LimenImportRun *run, guint64 dev)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *text = NULL;

  if (run->mountinfo == NULL)
    run->mountinfo = g_file_get_contents ("/proc/self/mountinfo", &text, NULL, NULL)
                     ? g_strsplit (text, "\n", -1) : g_new0 (char *, 1);
  for (guint i = 0; run->mountinfo[i]; i++)
    {
      g_auto(GStrv) f = g_strsplit (run->mountinfo[i], " ", 6);
      unsigned maj, min;

      if (g_strv_length (f) >= 5 && sscanf (f[2], "%u:%u", &maj, &min) == 2 && makedev (maj, min) == dev)
        g_ptr_array_add (out, g_strcompress (f[4]));
    }
  return out;
}

int
limen_import_open_by_fid (LimenImportRun *run, const char *folder, guint64 dev, guint64 ino, GBytes *fid)
{
  g_autoptr(GPtrArray) places = mounts_of (run, dev);
  g_autofree char *up = g_path_get_dirname (folder);
  g_autoptr(GArray) tried = g_array_new (FALSE, FALSE, sizeof (dev_t));

  if (g_bytes_get_size (fid) > HANDLE_MAX)
    return -1;
  /* The folder was moved or renamed, most likely within its filesystem: the closest
   * ancestor still there is on it even when device numbers changed since (btrfs). */
  while (access (up, F_OK) != 0 && strcmp (up, "/") != 0)
    {
      char *next = g_path_get_dirname (up);

      g_free (up);
      up = next;
    }
  g_ptr_array_insert (places, 0, g_steal_pointer (&up));
  for (guint i = 0; i < places->len && !run->no_privilege; i++)
    {
      /* open_by_handle_at() refuses an O_PATH mount fd. */
      g_autofd int mount_fd = open (places->pdata[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      struct stat st;
      gboolean seen = FALSE;
      int fd;

      if (mount_fd < 0 || fstat (mount_fd, &st) != 0)
        continue;
      for (guint k = 0; k < tried->len; k++)
        seen |= g_array_index (tried, dev_t, k) == st.st_dev;
      if (seen)
        continue;
      g_array_append_val (tried, st.st_dev);
      if ((fd = open_fid_on (run, mount_fd, fid, ino)) >= 0)
        return fd;
    }
  return -1;
}

/* What our model keeps of the file now at @path: its own device, inode and handle. FALSE
 * when nothing of the document's kind is there, or the path goes through a symlink (we
 * never follow one on a stored path, see limen_fuse_open_doc_parent()). */
typedef struct {
  char    *path;
  guint64  dev, ino;
  int      handle_type;
  GBytes  *handle;
} FileNow;

static gboolean
file_now (const char *path, gboolean directory, FileNow *now)
{
  struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  g_autofd int fd = syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  struct stat st;

  if (fd < 0 || fstat (fd, &st) != 0 || (directory ? !S_ISDIR (st.st_mode) : !S_ISREG (st.st_mode)))
    return FALSE;
  g_free (now->path);
  now->path = g_strdup (path);
  now->dev = st.st_dev;
  now->ino = st.st_ino;
  g_clear_pointer (&now->handle, g_bytes_unref);
  now->handle = limen_doc_file_handle (fd, &now->handle_type);
  return TRUE;
}

/* Is the folder at the recorded path still the recorded one? Device and inode say so, or,
 * when device numbers changed since, the identifier does. */
static gboolean
folder_is_recorded (const LimenRefDoc *rd, const char *folder)
{
  g_autofd int fd = open (folder, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat st;

  if (fd < 0 || fstat (fd, &st) != 0)
    return FALSE;
  if ((guint64) st.st_dev == rd->dev && (guint64) st.st_ino == rd->ino)
    return TRUE;
  return rd->fid && same_fid (fd, rd->fid);
}

/* Where the document is now. Its recorded path wins whenever something of its kind is
 * there (as for our own documents, a file replaced at its path is the same document). When
 * nothing is, its folder's handle may know where the folder went; when that fails too the
 * document keeps its recorded path (a drive that is not mounted comes back). */
static void
locate (LimenImportRun *run, const LimenRefDoc *rd, FileNow *now, guint *notes)
{
  gboolean directory = (rd->flags & LIMEN_REF_DOC_DIRECTORY) != 0;
  g_autofree char *folder = directory ? g_strdup (rd->path) : g_path_get_dirname (rd->path);
  g_autofree char *name = g_path_get_basename (rd->path);

  if (file_now (rd->path, directory, now))
    {
      if (!folder_is_recorded (rd, folder))
        *notes |= LIMEN_IMPORT_NOTE_FOLDER_REPLACED;
      return;
    }
  if (rd->fid)
    {
      g_autofd int fd = limen_import_open_by_fid (run, folder, rd->dev, rd->ino, rd->fid);
      g_autofree char *moved = fd >= 0 ? limen_doc_fd_path (fd) : NULL;
      g_autofree char *path = NULL;

      if (moved && moved[0] == '/')
        path = directory ? g_strdup (moved) : g_build_filename (moved, name, NULL);
      if (path && file_now (path, directory, now))
        {
          *notes |= LIMEN_IMPORT_NOTE_MOVED;
          return;
        }
    }
  *notes |= LIMEN_IMPORT_NOTE_MISSING;
  now->path = g_strdup (rd->path);
  now->dev = rd->dev;
  now->ino = rd->ino;
}

static void
set_doc_perms (LimenDocModel *model, LimenDoc *doc, GVariant *perms, guint *notes)
{
  GVariantIter iter;
  const char *app;
  const char **names;

  g_variant_iter_init (&iter, perms);
  while (g_variant_iter_next (&iter, "{&s^a&s}", &app, &names))
    {
      guint bits = 0;

      /* Strings of later versions are rights we do not know how to give: left out. */
      for (guint i = 0; names[i]; i++)
        bits |= limen_doc_perm_from_string (names[i]);
      if (!limen_app_id_is_valid (app))
        *notes |= LIMEN_IMPORT_NOTE_APPS_DROPPED;
      else if (bits)
        limen_doc_model_set_perms (model, doc, app, bits, NULL);
      g_free (names);
    }
}

/* What the import before per-entry records accepted: exactly (va{sas}) around (ayttu). */
static gboolean
legacy_read_document (GVariant *value)
{
  g_autoptr(GVariant) data = NULL;

  if (value == NULL || !g_variant_is_of_type (value, G_VARIANT_TYPE ("(va{sas})")))
    return FALSE;
  g_variant_get_child (value, 0, "v", &data);
  return g_variant_is_of_type (data, G_VARIANT_TYPE ("(ayttu)"));
}

LimenImportOutcome
limen_import_document (LimenImportRun *run, LimenDocModel *model, const char *id, GVariant *value,
                       gboolean legacy, guint *notes, char **why)
{
  g_auto(LimenRefDoc) rd = { 0 };
  g_autoptr(GVariant) perms = NULL;
  g_autoptr(LimenDoc) existing = limen_doc_model_lookup (model, id);
  g_autoptr(LimenDoc) doc = NULL;
  g_autoptr(GError) error = NULL;
  FileNow now = { 0 };
  LimenImportOutcome outcome;

  if (existing)
    return LIMEN_IMPORT_PRESENT;
  /* Imported then, or deleted here since: either way not ours to bring back. */
  if (legacy && legacy_read_document (value))
    return LIMEN_IMPORT_READ_BEFORE;
  outcome = limen_import_parse_document (value, &rd, &perms, why);
  if (outcome != LIMEN_IMPORT_IMPORTED)
    return outcome;
  if (!limen_doc_id_is_valid (id))
    {
      *why = g_strdup ("not a valid document id");
      return LIMEN_IMPORT_MALFORMED;
    }
  if (rd.flags & LIMEN_REF_DOC_TRANSIENT)
    return LIMEN_IMPORT_SESSION_ONLY;
  if (rd.n_unknown)
    *notes |= LIMEN_IMPORT_NOTE_EXTRA;
  locate (run, &rd, &now, notes);
  doc = limen_doc_model_add_with_id (model, id, now.path, now.dev, now.ino, now.handle_type, now.handle,
                                     ((rd.flags & LIMEN_REF_DOC_DIRECTORY) ? LIMEN_DOC_FLAG_DIRECTORY : 0) |
                                     ((rd.flags & LIMEN_REF_DOC_UNIQUE) ? LIMEN_DOC_FLAG_UNIQUE : 0), &error);
  g_free (now.path);
  g_clear_pointer (&now.handle, g_bytes_unref);
  if (doc == NULL)
    {
      *why = g_strdup (error->message);
      return LIMEN_IMPORT_FAILED;
    }
  set_doc_perms (model, doc, perms, notes);
  return LIMEN_IMPORT_IMPORTED;
}

LimenImportOutcome
limen_import_permission_entry (LimenPermStore *perms, const char *table, const char *id, GVariant *value,
                               gboolean legacy, char **why)
{
  static const char * const entry_types[] = { "v", "a{sas}", NULL };
  g_autoptr(GVariant) data = NULL;
  g_autoptr(GVariant) apps = NULL;
  g_autoptr(GError) error = NULL;
  gsize n;

  if (limen_perm_store_has_entry (perms, table, id))
    return LIMEN_IMPORT_PRESENT;
  if (legacy && value && g_variant_is_of_type (value, G_VARIANT_TYPE ("(va{sas})")))
    return LIMEN_IMPORT_READ_BEFORE;
  if (value == NULL)
    {
      *why = g_strdup ("its value cannot be read");
      return LIMEN_IMPORT_MALFORMED;
    }
  /* The same tolerance as for documents: members a later version adds are left out. */
  if (!tuple_starts_with (value, entry_types, &n))
    {
      *why = g_strdup_printf ("an entry of type %s", g_variant_get_type_string (value));
      return LIMEN_IMPORT_UNKNOWN_LAYOUT;
    }
  g_variant_get_child (value, 0, "v", &data);
  apps = g_variant_get_child_value (value, 1);
  if (!limen_perm_store_import_entry (perms, table, id, data, apps, &error))
    {
      *why = g_strdup (error->message);
      /* Refused for what it holds (an id or app past our limits): it stays refused, but a
       * later version with other limits may read it, so it is not recorded as read. */
      return g_error_matches (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT) ? LIMEN_IMPORT_MALFORMED
                                                                               : LIMEN_IMPORT_FAILED;
    }
  return LIMEN_IMPORT_IMPORTED;
}
