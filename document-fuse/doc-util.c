/* limen-documents — what documents are named and made of: permission names, document
 * ids, the file behind an fd.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "doc-model.h"
#include "doc-model-private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "errors.h"

static const char *perm_names[] = { "read", "write", "grant-permissions", "delete" };

guint
limen_doc_perm_from_string (const char *perm)
{
  for (guint i = 0; i < G_N_ELEMENTS (perm_names); i++)
    if (strcmp (perm, perm_names[i]) == 0)
      return 1u << i;
  return 0;
}

gboolean
limen_doc_perms_from_strv (const char * const *perms, const char *key, guint *out, GError **error)
{
  guint bits = 0;

  for (guint i = 0; perms && perms[i]; i++)
    {
      guint bit = limen_doc_perm_from_string (perms[i]);

      if (bit == 0)
        {
          g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                       "Invalid %s: unknown permission (expected read, write, grant-permissions or delete)", key);
          return FALSE;
        }
      bits |= bit;
    }
  *out = bits;
  return TRUE;
}

const char **
limen_doc_perms_to_strv (guint perms)
{
  const char **v = g_new0 (const char *, G_N_ELEMENTS (perm_names) + 1);
  guint n = 0;

  for (guint i = 0; i < G_N_ELEMENTS (perm_names); i++)
    if (perms & (1u << i))
      v[n++] = perm_names[i];
  return v;
}

gboolean
limen_doc_id_is_valid (const char *id)
{
  gsize len = strlen (id);

  if (len == 0 || len > 64)
    return FALSE;
  for (const char *p = id; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '-')
      return FALSE;
  return TRUE;
}

/* Random bytes for document ids, read from the kernel 32 ids at a time (one getrandom()
 * per Add was a tenth of an Add's system calls). Bytes handed out are wiped. */
#define ID_BYTES 20
static guint8 id_pool[ID_BYTES * 32];
static gsize id_pool_left;
G_LOCK_DEFINE_STATIC (id_pool);

static gboolean
take_random (guint8 *out, GError **error)
{
  G_LOCK (id_pool);
  if (id_pool_left < ID_BYTES)
    {
      gsize got = 0;

      while (got < sizeof id_pool)
        {
          ssize_t r = getrandom (id_pool + got, sizeof id_pool - got, 0);

          if (r < 0 && errno == EINTR)
            continue;
          if (r < 0)
            {
              int errsv = errno;

              G_UNLOCK (id_pool);
              g_warning ("Cannot make a document id: getrandom: %s", g_strerror (errsv));
              g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "No random numbers for a document id: %s",
                           g_strerror (errsv));
              return FALSE;
            }
          got += r;
        }
      id_pool_left = sizeof id_pool;
    }
  id_pool_left -= ID_BYTES;
  memcpy (out, id_pool + id_pool_left, ID_BYTES);
  memset (id_pool + id_pool_left, 0, ID_BYTES);
  G_UNLOCK (id_pool);
  return TRUE;
}

/* 20 base-32 characters from the kernel's random pool: 100 bits nobody can guess.
 * NULL (and @error) when the pool cannot be read: never a guessable id instead. */
char *
limen_doc_new_id (GError **error)
{
  static const char alphabet[] = "0123456789abcdefghijklmnopqrstuv";
  guint8 bytes[ID_BYTES];
  char *id;

  if (!take_random (bytes, error))
    return NULL;
  id = g_malloc (sizeof bytes + 1);
  for (gsize i = 0; i < sizeof bytes; i++)
    id[i] = alphabet[bytes[i] & 31];
  id[sizeof bytes] = '\0';
  return id;
}

/* /proc/self/fd, opened once: reading a link through it walks one name, not four. */
static int
proc_self_fd (void)
{
  static gsize once;
  static int dirfd = -1;

  if (g_once_init_enter (&once))
    {
      dirfd = open ("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
      g_once_init_leave (&once, 1);
    }
  return dirfd;
}

char *
limen_doc_fd_path (int fd)
{
  char proc[64];
  char buf[PATH_MAX];
  ssize_t n;

  g_snprintf (proc, sizeof proc, "%d", fd);
  if (proc_self_fd () >= 0 && (n = readlinkat (proc_self_fd (), proc, buf, sizeof buf)) >= 0 &&
      (gsize) n < sizeof buf)
    return g_strndup (buf, n);
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
  return g_file_read_link (proc, NULL);
}

GBytes *
limen_doc_file_handle (int fd, int *type)
{
  struct { struct file_handle fh; unsigned char data[MAX_HANDLE_SZ]; } h;
  int mount_id;

  h.fh.handle_bytes = MAX_HANDLE_SZ;
  *type = 0;
  if (name_to_handle_at (fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) != 0)
    return NULL;
  *type = h.fh.handle_type;
  return g_bytes_new (h.fh.f_handle, h.fh.handle_bytes);
}
