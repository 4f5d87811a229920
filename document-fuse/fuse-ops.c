/* limen-documents — the FUSE filesystem at $XDG_RUNTIME_DIR/doc (libfuse3 low level).
 *
 * Layout:  /                      host only: by-app + one DOCID dir per document
 *          /by-app/APPID/         that app (or the host): the documents it was granted
 *          .../DOCID/NAME         the file (or, for export-directory, the directory)
 *
 * Every node that reaches a host object holds an O_PATH fd, and everything below it is
 * reached with *at() calls relative to those fds and O_NOFOLLOW, so no name, symlink or
 * rename can lead outside a document. Nodes are per view (host, or one app), so rights,
 * mode bits and revocation are per app. Requests run on libfuse's worker threads; the
 * D-Bus thread only queues kernel invalidations for a thread of their own, because an
 * invalidation can wait on a request that is being served.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#define FUSE_USE_VERSION 312
#include "fuse-ops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "app-info.h"
#include "compat.h"

#define HOST_PATH_XATTR "user.document-portal.host-path"
/* Entries that gate access (root's DOCIDs, by-app's APPIDs) are never cached, so every
 * path walk through them reaches us and the caller is checked. */
#define GATE_TIMEOUT 0.0
#define ENTRY_TIMEOUT 30.0
#define ATTR_TIMEOUT 5.0
#define MAX_TEMPS_PER_DOC 64
#define PID_CACHE_MAX 512

typedef enum {
  NODE_ROOT,
  NODE_BY_APP,
  NODE_APP_DIR,
  NODE_DOC_DIR,
  NODE_FILE,
  NODE_TEMP,
} NodeKind;

typedef struct Node Node;
struct Node {
  fuse_ino_t  ino;
  NodeKind    kind;
  int         ref;          /* under fs->lock: one for the kernel's lookups, one per handle/temp slot */
  guint64     nlookup;
  char       *key;          /* in fs->by_key */
  char       *app;          /* the view: NULL = host */
  LimenDoc   *doc;          /* DOC_DIR, FILE, TEMP */
  Node       *parent;       /* a reference */
  int         fd;           /* FILE: O_PATH; TEMP: O_RDWR unnamed file */
  gboolean    is_doc_file;  /* FILE that is the document's NAME itself */
  char       *temp_name;    /* TEMP */
  GHashTable *temps;        /* DOC_DIR of a single-file document: name → Node */
  /* Page-cache validity for keep_cache: what the file looked like at the last open. */
  struct timespec cached_mtime;
  off_t       cached_size;
  /* APP_DIR, under fs->lock: bumped by every grant, revoke and delete for the app; the
   * kernel's copy of the listing is current while list_cached == gen + 1 (see op_opendir). */
  guint64     list_gen;
  guint64     list_cached;
};

typedef struct {
  Node *node;
  int   fd;
} Handle;

typedef struct {
  GArray    *entries;       /* DirEntry; for by-app/APPID built at the first readdir */
  Node      *app_dir;       /* by-app/APPID: a reference */
  guint64    gen;           /* by-app/APPID: the listing generation at opendir */
  gboolean   refill;        /* by-app/APPID: opened without keep_cache */
  gboolean   read_to_end;
} DirHandle;

typedef struct {
  char  *name;
  mode_t mode;
  ino_t  ino;
} DirEntry;

typedef struct {
  fuse_ino_t parent;        /* inval_entry(parent, name) when name != NULL */
  char      *name;
  fuse_ino_t ino;           /* inval_inode(ino) otherwise */
  gboolean   stop;
} Inval;

typedef struct {
  guint64  start_time;
  gint64   checked_at;      /* monotonic µs of the last start-time check */
  gboolean host;
  char    *app;             /* NULL when unidentifiable */
} PidEntry;

/* Within this window a pid is not re-checked against /proc: reusing a pid takes the
 * kernel through the whole pid space (pid_max allocations), far beyond what fits here. */
#define PID_RECHECK_US 20000

struct _LimenFuse {
  LimenDocModel *model;
  char          *mountpoint;
  struct fuse_session *se;
  GThread       *loop_thread;
  GThread       *inval_thread;
  GAsyncQueue   *inval_queue;
  GMutex         lock;
  GHashTable    *inodes;     /* ino → Node */
  GHashTable    *by_key;     /* key → Node */
  fuse_ino_t     next_ino;
  Node          *root;
  Node          *by_app;
  guint64        all_gen;    /* under lock: bumped by changes to every view (Delete) */
  dev_t          dev;        /* of the mount, from mountinfo */
  int            mnt_id;     /* of the mount, from mountinfo */
  GMutex         pid_lock;
  GMutex         seen_lock;  /* first sight of a document: doc_first_seen */
  GHashTable    *pids;       /* pid → PidEntry */
  GMutex         done_lock;
  GCond          done_cond;
  gboolean       loop_done;
  gboolean       mounted;
};

static void node_unref_locked (LimenFuse *fs, Node *node);

/* ---- caller identity --------------------------------------------------------------- */

static void
pid_entry_free (PidEntry *e)
{
  g_free (e->app);
  g_free (e);
}

static guint64
read_start_time (pid_t pid)
{
  char path[64], buf[1024];
  g_autofd int fd = -1;
  ssize_t n;
  char *p;
  guint64 start = 0;

  g_snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* The command name may hold spaces and parentheses: fields start after the last ')'. */
  p = strrchr (buf, ')');
  if (p == NULL)
    return 0;
  p++;
  for (int field = 3; field < 22 && p; field++)
    p = strchr (p + 1, ' ');
  if (p)
    start = g_ascii_strtoull (p + 1, NULL, 10);
  return start;
}

/* May the process behind @req use the view of @view_app (NULL: the host view)?
 * Host processes may use every view; an app only its own. Cached by pid + start time. */
static gboolean
caller_allowed (LimenFuse *fs, fuse_req_t req, const char *view_app)
{
  pid_t pid = fuse_req_ctx (req)->pid;
  guint64 start;
  PidEntry *e;
  gboolean host = FALSE, ok;
  g_autofree char *app = NULL;
  gint64 now = g_get_monotonic_time ();

  if (pid <= 0)
    return FALSE;
  g_mutex_lock (&fs->pid_lock);
  e = g_hash_table_lookup (fs->pids, GINT_TO_POINTER (pid));
  if (e && now - e->checked_at < PID_RECHECK_US)
    {
      host = e->host;
      ok = host || (view_app && e->app && e->app[0] && strcmp (e->app, view_app) == 0);
      g_mutex_unlock (&fs->pid_lock);
      return ok;
    }
  g_mutex_unlock (&fs->pid_lock);

  if ((start = read_start_time (pid)) == 0)
    return FALSE;

  g_mutex_lock (&fs->pid_lock);
  e = g_hash_table_lookup (fs->pids, GINT_TO_POINTER (pid));
  if (e && e->start_time == start)
    {
      e->checked_at = now;
      host = e->host;
      app = g_strdup (e->app);
      g_mutex_unlock (&fs->pid_lock);
    }
  else
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(LimenAppInfo) info = NULL;

      g_mutex_unlock (&fs->pid_lock);
      info = limen_app_info_get_for_pid (pid, &error);
      /* Only trust the answer if it is about the process we saw (no pid reuse between). */
      if (info && limen_app_info_get_start_time (info) == start)
        {
          host = limen_app_info_is_host (info);
          app = host ? NULL : g_strdup (limen_app_info_get_id (info));
        }
      else if (error)
        g_debug ("FUSE request from unidentifiable pid %d: %s", (int) pid, error->message);
      e = g_new0 (PidEntry, 1);
      e->start_time = start;
      e->checked_at = now;
      e->host = host;
      e->app = g_strdup (app);
      g_mutex_lock (&fs->pid_lock);
      if (g_hash_table_size (fs->pids) > PID_CACHE_MAX)
        g_hash_table_remove_all (fs->pids);
      g_hash_table_replace (fs->pids, GINT_TO_POINTER (pid), e);
      g_mutex_unlock (&fs->pid_lock);
    }

  if (host)
    ok = TRUE;
  else
    ok = view_app != NULL && app != NULL && app[0] != '\0' && strcmp (app, view_app) == 0;
  return ok;
}

/* ---- nodes ------------------------------------------------------------------------ */

static Node *
node_new_locked (LimenFuse *fs, NodeKind kind, const char *key, const char *app, LimenDoc *doc,
                 Node *parent, int fd)
{
  Node *node = g_new0 (Node, 1);

  node->ino = fs->next_ino++;
  node->kind = kind;
  node->key = g_strdup (key);
  node->app = g_strdup (app);
  node->doc = doc ? limen_doc_ref (doc) : NULL;
  node->parent = parent;
  if (parent)
    parent->ref++;
  node->fd = fd;
  g_hash_table_insert (fs->inodes, GSIZE_TO_POINTER (node->ino), node);
  if (node->key)
    g_hash_table_replace (fs->by_key, node->key, node);
  return node;
}

static void
node_free_locked (LimenFuse *fs, Node *node)
{
  g_hash_table_remove (fs->inodes, GSIZE_TO_POINTER (node->ino));
  if (node->key && g_hash_table_lookup (fs->by_key, node->key) == node)
    g_hash_table_remove (fs->by_key, node->key);
  if (node->temps)
    {
      GHashTableIter iter;
      gpointer value;

      g_hash_table_iter_init (&iter, node->temps);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        {
          g_hash_table_iter_steal (&iter);
          node_unref_locked (fs, value);
        }
      g_hash_table_unref (node->temps);
    }
  if (node->fd >= 0)
    close (node->fd);
  if (node->doc)
    limen_doc_unref (node->doc);
  if (node->parent)
    node_unref_locked (fs, node->parent);
  g_free (node->key);
  g_free (node->app);
  g_free (node->temp_name);
  g_free (node);
}

static void
node_unref_locked (LimenFuse *fs, Node *node)
{
  if (--node->ref == 0 && node->kind != NODE_ROOT && node->kind != NODE_BY_APP)
    node_free_locked (fs, node);
}

/* The node for @ino with a reference, or NULL. */
static Node *
node_get (LimenFuse *fs, fuse_ino_t ino)
{
  Node *node;

  g_mutex_lock (&fs->lock);
  node = g_hash_table_lookup (fs->inodes, GSIZE_TO_POINTER (ino));
  if (node)
    node->ref++;
  g_mutex_unlock (&fs->lock);
  return node;
}

/* node_get for an operation on @ino: NULL (and ESTALE answered) when it is gone. */
static Node *
node_get_or_stale (LimenFuse *fs, fuse_req_t req, fuse_ino_t ino)
{
  Node *node = node_get (fs, ino);

  if (node == NULL)
    fuse_reply_err (req, ESTALE);
  return node;
}

static void
node_put (LimenFuse *fs, Node *node)
{
  if (node == NULL)
    return;
  g_mutex_lock (&fs->lock);
  node_unref_locked (fs, node);
  g_mutex_unlock (&fs->lock);
}

/* One kernel lookup more on @node (the caller holds a reference it hands over). */
static void
node_add_lookup_locked (Node *node)
{
  if (node->nlookup++ > 0)
    node->ref--; /* the kernel's single reference exists already */
}

static guint
node_rights (Node *node)
{
  if (node->doc == NULL)
    return LIMEN_DOC_PERM_READ;
  return limen_doc_get_perms (node->doc, node->app);
}

static gboolean
node_is_dir_doc (Node *node)
{
  return node->doc && (limen_doc_get_flags (node->doc) & LIMEN_DOC_FLAG_DIRECTORY);
}

static int
node_stat (LimenFuse *fs, Node *node, struct stat *st)
{
  guint rights;

  memset (st, 0, sizeof *st);
  st->st_uid = getuid ();
  st->st_gid = getgid ();
  st->st_nlink = 2;
  switch (node->kind)
    {
    case NODE_ROOT:
    case NODE_BY_APP:
      st->st_mode = S_IFDIR | 0555;
      break;
    case NODE_APP_DIR:
      st->st_mode = S_IFDIR | 0500;
      break;
    case NODE_DOC_DIR:
      rights = node_rights (node);
      if (rights == 0)
        return ENOENT;
      st->st_mode = S_IFDIR | 0500;
      /* Writable single-file documents need a writable directory for atomic saves. */
      if ((rights & LIMEN_DOC_PERM_WRITE) && !node_is_dir_doc (node))
        st->st_mode |= 0200;
      break;
    case NODE_FILE:
    case NODE_TEMP:
      rights = node_rights (node);
      if (rights == 0)
        return ENOENT;
      if (fstatat (node->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
        return errno;
      if (!(rights & LIMEN_DOC_PERM_READ))
        st->st_mode &= ~0444;
      if (!(rights & LIMEN_DOC_PERM_WRITE))
        st->st_mode &= ~0222;
      break;
    }
  st->st_ino = node->ino;
  return 0;
}

static void
reply_entry (LimenFuse *fs, fuse_req_t req, Node *node, double timeout)
{
  struct fuse_entry_param e = { 0 };
  int err = node_stat (fs, node, &e.attr);

  if (err)
    {
      node_put (fs, node);
      fuse_reply_err (req, err);
      return;
    }
  e.ino = node->ino;
  e.generation = 1;
  e.attr_timeout = timeout > 0 ? ATTR_TIMEOUT : 0;
  e.entry_timeout = timeout;
  g_mutex_lock (&fs->lock);
  node_add_lookup_locked (node);
  g_mutex_unlock (&fs->lock);
  if (fuse_reply_entry (req, &e) != 0)
    {
      /* The kernel will never forget what it never got. */
      g_mutex_lock (&fs->lock);
      if (--node->nlookup == 0)
        node_unref_locked (fs, node);
      g_mutex_unlock (&fs->lock);
    }
}

/* Find or make the node with @key; returns it with a reference. Takes @fd either way. */
static Node *
node_ensure (LimenFuse *fs, NodeKind kind, const char *key, const char *app, LimenDoc *doc,
             Node *parent, int fd)
{
  Node *node;

  g_mutex_lock (&fs->lock);
  node = g_hash_table_lookup (fs->by_key, key);
  if (node)
    {
      node->ref++;
      if (fd >= 0)
        close (fd);
    }
  else
    {
      node = node_new_locked (fs, kind, key, app, doc, parent, fd);
      node->ref = 1;
    }
  g_mutex_unlock (&fs->lock);
  return node;
}

/* ---- host files ------------------------------------------------------------------- */

static gboolean
name_is_valid (const char *name)
{
  return name[0] != '\0' && strcmp (name, ".") != 0 && strcmp (name, "..") != 0 &&
         strchr (name, '/') == NULL && strlen (name) <= NAME_MAX;
}

/* Open the directory holding the document's NAME, refusing symlinks anywhere on the
 * stored path: it was canonical when exported, so a symlink there now is a swap. */
static int
open_doc_parent (LimenDoc *doc, char **name_out)
{
  g_autofree char *path = limen_doc_dup_path (doc);
  g_autofree char *dir = g_path_get_dirname (path);
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  int fd = syscall (SYS_openat2, AT_FDCWD, dir, &how, sizeof how);

  if (name_out)
    *name_out = g_path_get_basename (path);
  return fd;
}

/* After the document's file moved on the host: find it again by its file handle on the
 * mount of its device (needs CAP_DAC_READ_SEARCH; without it the document stays lost). */
static int
reopen_by_handle (LimenFuse *fs, LimenDoc *doc)
{
  g_autofree char *mountinfo = NULL;
  g_auto(GStrv) lines = NULL;
  guint64 dev, ino;

  limen_doc_get_file_id (doc, &dev, &ino);
  if (!g_file_get_contents ("/proc/self/mountinfo", &mountinfo, NULL, NULL))
    return -1;
  lines = g_strsplit (mountinfo, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], " ", 6);
      unsigned maj, min;

      if (g_strv_length (f) < 5 || sscanf (f[2], "%u:%u", &maj, &min) != 2 || makedev (maj, min) != dev)
        continue;
      {
        /* open_by_handle_at() refuses an O_PATH mount fd. */
        g_autofd int mfd = open (f[4], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct { struct file_handle fh; unsigned char data[MAX_HANDLE_SZ]; } h;
        g_autoptr(GBytes) stored = NULL;
        int type = 0;
        int fd;
        struct stat st;

        if (mfd < 0)
          continue;
        stored = limen_doc_dup_handle (doc, &type);
        if (stored == NULL || g_bytes_get_size (stored) > MAX_HANDLE_SZ)
          {
            g_debug ("Document %s has no file handle", limen_doc_get_id (doc));
            return -1;
          }
        h.fh.handle_bytes = g_bytes_get_size (stored);
        h.fh.handle_type = type;
        memcpy (h.fh.f_handle, g_bytes_get_data (stored, NULL), h.fh.handle_bytes);
        fd = open_by_handle_at (mfd, &h.fh, O_PATH | O_CLOEXEC);
        if (fd < 0)
          {
            g_debug ("Document %s: its file handle no longer opens: %s", limen_doc_get_id (doc),
                     g_strerror (errno));
            return -1;
          }
        if (fstat (fd, &st) != 0 || st.st_ino != ino)
          {
            close (fd);
            return -1;
          }
        return fd;
      }
    }
  return -1;
}

/* Open the document's NAME (O_PATH, not following a final symlink) and keep the
 * model's idea of the file current. */
static int
open_doc_file (LimenFuse *fs, LimenDoc *doc, struct stat *st)
{
  g_autofree char *name = NULL;
  g_autofd int parent = open_doc_parent (doc, &name);
  int fd = -1;
  gboolean dir_doc = (limen_doc_get_flags (doc) & LIMEN_DOC_FLAG_DIRECTORY) != 0;
  guint64 dev, ino;

  if (parent >= 0)
    fd = openat (parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      fd = reopen_by_handle (fs, doc);
      if (fd >= 0)
        {
          g_autofree char *moved = limen_doc_fd_path (fd);

          if (moved && moved[0] == '/')
            {
              g_autoptr(GBytes) handle = NULL;
              int type = 0;

              g_debug ("Document %s moved to %s", limen_doc_get_id (doc), moved);
              fstat (fd, st);
              handle = limen_doc_file_handle (fd, &type);
              limen_doc_model_update_file (fs->model, doc, moved, st->st_dev, st->st_ino, type, handle);
            }
        }
      if (fd < 0)
        return -ENOENT;
    }
  if (fstat (fd, st) != 0 || (dir_doc ? !S_ISDIR (st->st_mode) : !S_ISREG (st->st_mode)))
    {
      close (fd);
      return dir_doc ? -ENOTDIR : -EACCES;
    }
  limen_doc_get_file_id (doc, &dev, &ino);
  if (dev != (guint64) st->st_dev || ino != (guint64) st->st_ino)
    {
      /* Replaced at the same path (an atomic save on the host): same document. */
      g_autofree char *path = limen_doc_dup_path (doc);
      g_autoptr(GBytes) handle = NULL;
      int type = 0;

      handle = limen_doc_file_handle (fd, &type);
      limen_doc_model_update_file (fs->model, doc, path, st->st_dev, st->st_ino, type, handle);
    }
  return fd;
}

/* Is @node (inside an exported directory) still below the document's directory? A
 * directory moved out of the tree on the host must not stay reachable through a node
 * the kernel still caches. */
static gboolean
node_within_doc (LimenFuse *fs, Node *node)
{
  g_autofree char *path = NULL;
  g_autofree char *root = NULL;

  if (node->kind != NODE_FILE || !node_is_dir_doc (node))
    return TRUE;
  path = limen_doc_fd_path (node->fd);
  for (int attempt = 0; attempt < 2 && path; attempt++)
    {
      gsize len;

      g_free (root);
      root = limen_doc_dup_path (node->doc);
      len = strlen (root);
      if (strncmp (path, root, len) == 0 && (path[len] == '\0' || path[len] == '/'))
        return TRUE;
      if (attempt == 0)
        {
          /* The exported directory itself may have moved: find it again, then recheck. */
          struct stat st;
          int fd = open_doc_file (fs, node->doc, &st);

          if (fd < 0)
            break;
          close (fd);
        }
    }
  g_debug ("%s left document %s; refusing access", path ? path : "(unknown)", limen_doc_get_id (node->doc));
  return FALSE;
}

static Node *
file_node (LimenFuse *fs, Node *parent, LimenDoc *doc, int fd, const struct stat *st, gboolean is_doc_file)
{
  g_autofree char *key = g_strdup_printf ("f:%s:%s:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT,
                                          parent->app ? parent->app : "", limen_doc_get_id (doc),
                                          (guint64) st->st_dev, (guint64) st->st_ino);
  Node *node = node_ensure (fs, NODE_FILE, key, parent->app, doc, parent, fd);

  node->is_doc_file = node->is_doc_file || is_doc_file;
  return node;
}

/* ---- invalidation thread ------------------------------------------------------------ */

static gpointer
inval_thread_func (gpointer user_data)
{
  LimenFuse *fs = user_data;

  for (;;)
    {
      Inval *inv = g_async_queue_pop (fs->inval_queue);
      gboolean stop = inv->stop;

      if (!stop && fs->se)
        {
          if (inv->name)
            fuse_lowlevel_notify_inval_entry (fs->se, inv->parent, inv->name, strlen (inv->name));
          else
            fuse_lowlevel_notify_inval_inode (fs->se, inv->ino, 0, 0);
        }
      g_free (inv->name);
      g_free (inv);
      if (stop)
        return NULL;
    }
}

static void
queue_inval (LimenFuse *fs, fuse_ino_t parent, const char *name, fuse_ino_t ino)
{
  Inval *inv = g_new0 (Inval, 1);

  inv->parent = parent;
  inv->name = g_strdup (name);
  inv->ino = ino;
  g_async_queue_push (fs->inval_queue, inv);
}

/* The model changed (D-Bus thread): drop what the kernel caches about it, and temps
 * of views that lost write access. Never blocks: the work is queued. */
static void
on_doc_changed (LimenDoc *doc, const char *app, gpointer user_data)
{
  LimenFuse *fs = user_data;
  GHashTableIter iter;
  gpointer value;
  const char *id = limen_doc_get_id (doc);
  g_autoptr(GPtrArray) dropped = g_ptr_array_new ();

  /* The kernel keeps the listings of by-app/APPID (see op_opendir): a grant, revoke or
   * delete changes them, also for a document that was never looked up. Counted here,
   * before the D-Bus reply, so every opendir after the reply lists afresh. */
  g_mutex_lock (&fs->lock);
  if (app == NULL)
    fs->all_gen++;
  else
    {
      g_autofree char *key = g_strdup_printf ("a:%s", app);
      Node *dir = g_hash_table_lookup (fs->by_key, key);

      if (dir)
        dir->list_gen++;
    }
  g_mutex_unlock (&fs->lock);
  /* Never served: the kernel holds nothing else of it (failed lookups are not cached). */
  if (!limen_doc_was_seen (doc))
    return;
  g_mutex_lock (&fs->lock);
  if (app == NULL)
    queue_inval (fs, FUSE_ROOT_ID, id, 0);
  g_hash_table_iter_init (&iter, fs->inodes);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Node *node = value;

      if (node->kind == NODE_APP_DIR && (app == NULL || g_strcmp0 (node->app, app) == 0))
        queue_inval (fs, node->ino, id, 0);
      if (node->doc != doc || (app != NULL && g_strcmp0 (node->app, app) != 0))
        continue;
      queue_inval (fs, 0, NULL, node->ino);
      if (node->temps && !(limen_doc_get_perms (doc, node->app) & LIMEN_DOC_PERM_WRITE))
        g_ptr_array_add (dropped, node);
    }
  for (guint i = 0; i < dropped->len; i++)
    {
      Node *dir = dropped->pdata[i];
      GHashTableIter titer;
      gpointer t;

      g_hash_table_iter_init (&titer, dir->temps);
      while (g_hash_table_iter_next (&titer, NULL, &t))
        {
          queue_inval (fs, dir->ino, ((Node *) t)->temp_name, 0);
          g_hash_table_iter_steal (&titer);
          node_unref_locked (fs, t);
        }
    }
  g_mutex_unlock (&fs->lock);
}

/* ---- operations ---------------------------------------------------------------------- */

static LimenFuse *
req_fs (fuse_req_t req)
{
  return fuse_req_userdata (req);
}

static void
op_init (void *userdata, struct fuse_conn_info *conn)
{
  /* Large requests: fewer round trips for sequential I/O. */
  conn->max_write = 1024 * 1024;
  conn->max_readahead = 1024 * 1024;
  if (conn->capable & FUSE_CAP_SPLICE_WRITE)
    conn->want |= FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
  if (conn->capable & FUSE_CAP_SPLICE_READ)
    conn->want |= FUSE_CAP_SPLICE_READ;
  /* We revoke through explicit invalidation; writes go straight to the host file so a
   * revoked handle can never flush data later. */
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  /* Host-side changes are caught at open (keep_cache only while the file is unchanged);
   * automatic invalidation would add a GETATTR to reads of a cached file. */
  conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
}

/* A save links the new file under .limen-save-DOCID for the instant before its rename
 * (save_temp_over); a daemon killed in that instant leaves it behind. It is removed the
 * first time this process serves the document, before any save through it can start. */
static void
doc_mark_seen (LimenFuse *fs, LimenDoc *doc)
{
  if (limen_doc_was_seen (doc))
    return;
  g_mutex_lock (&fs->seen_lock);
  if (!limen_doc_was_seen (doc))
    {
      if (!(limen_doc_get_flags (doc) & LIMEN_DOC_FLAG_DIRECTORY))
        {
          g_autofd int dirfd = open_doc_parent (doc, NULL);
          g_autofree char *hidden = g_strdup_printf (".limen-save-%s", limen_doc_get_id (doc));

          if (dirfd >= 0)
            unlinkat (dirfd, hidden, 0);
        }
      limen_doc_mark_seen (doc);
    }
  g_mutex_unlock (&fs->seen_lock);
}

static void
op_lookup (fuse_req_t req, fuse_ino_t parent_ino, const char *name)
{
  LimenFuse *fs = req_fs (req);
  Node *parent = node_get_or_stale (fs, req, parent_ino);
  Node *node = NULL;
  double timeout = ENTRY_TIMEOUT;

  if (parent == NULL)
    return;
  if (!name_is_valid (name))
    goto noent;

  switch (parent->kind)
    {
    case NODE_ROOT:
      if (strcmp (name, "by-app") == 0)
        {
          g_mutex_lock (&fs->lock);
          node = fs->by_app;
          node->ref++;
          g_mutex_unlock (&fs->lock);
        }
      else
        {
          g_autoptr(LimenDoc) doc = NULL;
          g_autofree char *key = NULL;

          if (!caller_allowed (fs, req, NULL) || !(doc = limen_doc_model_lookup (fs->model, name)))
            goto noent;
          key = g_strdup_printf ("d::%s", name);
          doc_mark_seen (fs, doc);
          node = node_ensure (fs, NODE_DOC_DIR, key, NULL, doc, parent, -1);
          timeout = GATE_TIMEOUT;
        }
      break;

    case NODE_BY_APP:
      {
        g_autofree char *key = NULL;

        if (!limen_app_id_is_valid (name) || !caller_allowed (fs, req, name))
          goto noent;
        key = g_strdup_printf ("a:%s", name);
        node = node_ensure (fs, NODE_APP_DIR, key, name, NULL, parent, -1);
        timeout = GATE_TIMEOUT;
      }
      break;

    case NODE_APP_DIR:
      {
        g_autoptr(LimenDoc) doc = limen_doc_model_lookup (fs->model, name);
        g_autofree char *key = NULL;

        if (doc == NULL || limen_doc_get_perms (doc, parent->app) == 0)
          goto noent;
        key = g_strdup_printf ("d:%s:%s", parent->app, name);
        doc_mark_seen (fs, doc);
        node = node_ensure (fs, NODE_DOC_DIR, key, parent->app, doc, parent, -1);
      }
      break;

    case NODE_DOC_DIR:
      {
        g_autofree char *docname = limen_doc_dup_name (parent->doc);

        if (node_rights (parent) == 0)
          goto noent;
        if (strcmp (name, docname) == 0)
          {
            struct stat st;
            int fd = open_doc_file (fs, parent->doc, &st);

            if (fd < 0)
              {
                node_put (fs, parent);
                fuse_reply_err (req, -fd);
                return;
              }
            node = file_node (fs, parent, parent->doc, fd, &st, TRUE);
          }
        else
          {
            g_mutex_lock (&fs->lock);
            if (parent->temps && (node = g_hash_table_lookup (parent->temps, name)))
              node->ref++;
            g_mutex_unlock (&fs->lock);
            if (node == NULL)
              goto noent;
          }
      }
      break;

    case NODE_FILE:
      {
        struct stat st;
        int fd;

        if (node_rights (parent) == 0 || !node_within_doc (fs, parent))
          goto noent;
        fd = openat (parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat (fd, &st) != 0)
          {
            int err = errno;

            if (fd >= 0)
              close (fd);
            node_put (fs, parent);
            fuse_reply_err (req, err);
            return;
          }
        node = file_node (fs, parent, parent->doc, fd, &st, FALSE);
      }
      break;

    case NODE_TEMP:
      node_put (fs, parent);
      fuse_reply_err (req, ENOTDIR);
      return;
    }

  node_put (fs, parent);
  reply_entry (fs, req, node, timeout);
  return;

noent:
  node_put (fs, parent);
  fuse_reply_err (req, ENOENT);
}

static void
do_forget (LimenFuse *fs, fuse_ino_t ino, uint64_t nlookup)
{
  Node *node;

  g_mutex_lock (&fs->lock);
  node = g_hash_table_lookup (fs->inodes, GSIZE_TO_POINTER (ino));
  if (node && node->nlookup > 0)
    {
      node->nlookup = nlookup >= node->nlookup ? 0 : node->nlookup - nlookup;
      if (node->nlookup == 0)
        node_unref_locked (fs, node);
    }
  g_mutex_unlock (&fs->lock);
}

static void
op_forget (fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
  do_forget (req_fs (req), ino, nlookup);
  fuse_reply_none (req);
}

static void
op_forget_multi (fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
  for (size_t i = 0; i < count; i++)
    do_forget (req_fs (req), forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none (req);
}

/* The view a node belongs to must be the caller's (or the caller the host). */
static gboolean
node_gate (LimenFuse *fs, fuse_req_t req, Node *node)
{
  if (node->kind == NODE_ROOT || node->kind == NODE_BY_APP)
    return caller_allowed (fs, req, NULL);
  return caller_allowed (fs, req, node->app);
}

static void
op_getattr (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  LimenFuse *fs = req_fs (req);
  Node *node = node_get_or_stale (fs, req, ino);
  struct stat st;
  int err;

  if (node == NULL)
    return;
  err = node_stat (fs, node, &st);
  if (err)
    fuse_reply_err (req, err);
  else
    fuse_reply_attr (req, &st, node->kind == NODE_FILE || node->kind == NODE_TEMP ? ATTR_TIMEOUT : 0);
  node_put (fs, node);
}

static int
reopen_node (Node *node, int flags)
{
  char proc[64];

  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
  return open (proc, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY)) | O_CLOEXEC);
}

static void
op_setattr (fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
  LimenFuse *fs = req_fs (req);
  Node *node = node_get_or_stale (fs, req, ino);
  int err = 0;
  char proc[64];

  if (node == NULL)
    return;
  if ((node->kind != NODE_FILE && node->kind != NODE_TEMP) || !node_gate (fs, req, node))
    {
      err = EACCES;
      goto out;
    }
  if (!(node_rights (node) & LIMEN_DOC_PERM_WRITE))
    {
      err = EACCES;
      goto out;
    }
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
    {
      err = EPERM;
      goto out;
    }
  if (to_set & FUSE_SET_ATTR_MODE)
    {
      if (chmod (proc, attr->st_mode & 07777) != 0)
        {
          err = errno;
          goto out;
        }
    }
  if (to_set & FUSE_SET_ATTR_SIZE)
    {
      int fd = fi ? ((Handle *) (uintptr_t) fi->fh)->fd : -1;
      g_autofd int own = -1;

      if (fd < 0)
        fd = own = reopen_node (node, O_WRONLY);
      if (fd < 0 || ftruncate (fd, attr->st_size) != 0)
        {
          err = errno;
          goto out;
        }
    }
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))
    {
      struct timespec tv[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT } };

      if (to_set & FUSE_SET_ATTR_ATIME_NOW)
        tv[0].tv_nsec = UTIME_NOW;
      else if (to_set & FUSE_SET_ATTR_ATIME)
        tv[0] = attr->st_atim;
      if (to_set & FUSE_SET_ATTR_MTIME_NOW)
        tv[1].tv_nsec = UTIME_NOW;
      else if (to_set & FUSE_SET_ATTR_MTIME)
        tv[1] = attr->st_mtim;
      if (utimensat (AT_FDCWD, proc, tv, 0) != 0)
        {
          err = errno;
          goto out;
        }
    }
out:
  if (err)
    fuse_reply_err (req, err);
  else
    {
      struct stat st;

      err = node_stat (fs, node, &st);
      if (err)
        fuse_reply_err (req, err);
      else
        fuse_reply_attr (req, &st, ATTR_TIMEOUT);
    }
  node_put (fs, node);
}

static void
op_readlink (fuse_req_t req, fuse_ino_t ino)
{
  LimenFuse *fs = req_fs (req);
  Node *node = node_get_or_stale (fs, req, ino);
  char buf[PATH_MAX + 1];
  ssize_t n;

  if (node == NULL)
    return;
  if (node->kind != NODE_FILE || !(node_rights (node) & LIMEN_DOC_PERM_READ) || !node_gate (fs, req, node))
    {
      node_put (fs, node);
      fuse_reply_err (req, EACCES);
      return;
    }
  n = readlinkat (node->fd, "", buf, PATH_MAX);
  if (n < 0)
    fuse_reply_err (req, errno);
  else
    {
      buf[n] = '\0';
      fuse_reply_readlink (req, buf);
    }
  node_put (fs, node);
}

/* Open-time check that is also the revocation point: the rights @flags need. */
static gboolean
rights_allow (guint rights, int flags)
{
  int acc = flags & O_ACCMODE;

  if ((acc == O_RDONLY || acc == O_RDWR) && !(rights & LIMEN_DOC_PERM_READ))
    return FALSE;
  if ((acc == O_WRONLY || acc == O_RDWR || (flags & O_TRUNC)) && !(rights & LIMEN_DOC_PERM_WRITE))
    return FALSE;
  return TRUE;
}

static void
finish_open (LimenFuse *fs, fuse_req_t req, Node *node, int fd, struct fuse_file_info *fi,
             const struct fuse_entry_param *entry)
{
  Handle *h = g_new0 (Handle, 1);
  struct stat st;

  h->node = node; /* keeps the caller's reference */
  h->fd = fd;
  fi->fh = (uintptr_t) h;
  /* Keep the page cache only while the file is unchanged since the last open. */
  if (fstat (fd, &st) == 0)
    {
      g_mutex_lock (&fs->lock);
      fi->keep_cache = (st.st_mtim.tv_sec == node->cached_mtime.tv_sec &&
                        st.st_mtim.tv_nsec == node->cached_mtime.tv_nsec &&
                        st.st_size == node->cached_size);
      node->cached_mtime = st.st_mtim;
      node->cached_size = st.st_size;
      g_mutex_unlock (&fs->lock);
    }
  if (entry)
    {
      if (fuse_reply_create (req, entry, fi) != 0)
        {
          close (fd);
          g_free (h);
          node_put (fs, node);
        }
    }
  else if (fuse_reply_open (req, fi) != 0)
    {
      close (fd);
      g_free (h);
      node_put (fs, node);
    }
}

static void
op_open (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  LimenFuse *fs = req_fs (req);
  Node *node = node_get_or_stale (fs, req, ino);
  struct stat st;
  int fd;

  if (node == NULL)
    return;
  if ((node->kind != NODE_FILE && node->kind != NODE_TEMP) || !node_gate (fs, req, node) ||
      !rights_allow (node_rights (node), fi->flags) || !node_within_doc (fs, node))
    {
      node_put (fs, node);
      fuse_reply_err (req, EACCES);
      return;
    }
  if (fstatat (node->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
    st.st_mode = 0;   /* refused below, not read uninitialised */
  if (!S_ISREG (st.st_mode))
    {
      node_put (fs, node);
      fuse_reply_err (req, S_ISDIR (st.st_mode) ? EISDIR : EACCES);
      return;
    }
  fd = reopen_node (node, fi->flags);
  if (fd < 0)
    {
      int err = errno;

      node_put (fs, node);
      fuse_reply_err (req, err);
      return;
    }
  finish_open (fs, req, node, fd, fi, NULL);
}

static Handle *
handle_checked (fuse_req_t req, struct fuse_file_info *fi, guint need)
{
  Handle *h = (Handle *) (uintptr_t) fi->fh;

  if ((node_rights (h->node) & need) != need)
    {
      fuse_reply_err (req, EACCES);
      return NULL;
    }
  return h;
}

static void
op_read (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
  Handle *h = handle_checked (req, fi, LIMEN_DOC_PERM_READ);
  struct fuse_bufvec buf = FUSE_BUFVEC_INIT (size);

  if (h == NULL)
    return;
  buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
  buf.buf[0].fd = h->fd;
  buf.buf[0].pos = off;
  fuse_reply_data (req, &buf, FUSE_BUF_SPLICE_MOVE);
}

static void
op_write (fuse_req_t req, fuse_ino_t ino, const char *data, size_t size, off_t off, struct fuse_file_info *fi)
{
  Handle *h = handle_checked (req, fi, LIMEN_DOC_PERM_WRITE);
  ssize_t n;

  if (h == NULL)
    return;
  n = pwrite (h->fd, data, size, off);
  if (n < 0)
    fuse_reply_err (req, errno);
  else
    fuse_reply_write (req, n);
}

/* Writes spliced from the channel into the host file when the kernel allows it. */
static void
op_write_buf (fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in_buf, off_t off, struct fuse_file_info *fi)
{
  Handle *h = handle_checked (req, fi, LIMEN_DOC_PERM_WRITE);
  struct fuse_bufvec out = FUSE_BUFVEC_INIT (fuse_buf_size (in_buf));
  ssize_t n;

  if (h == NULL)
    return;
  out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
  out.buf[0].fd = h->fd;
  out.buf[0].pos = off;
  n = fuse_buf_copy (&out, in_buf, 0);
  if (n < 0)
    fuse_reply_err (req, -n);
  else
    fuse_reply_write (req, n);
}

static void
op_release (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  LimenFuse *fs = req_fs (req);
  Handle *h = (Handle *) (uintptr_t) fi->fh;

  close (h->fd);
  node_put (fs, h->node);
  g_free (h);
  fuse_reply_err (req, 0);
}

static void
op_fsync (fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
  Handle *h = (Handle *) (uintptr_t) fi->fh;
  int r = datasync ? fdatasync (h->fd) : fsync (h->fd);

  fuse_reply_err (req, r == 0 ? 0 : errno);
}

/* ---- directories --------------------------------------------------------------------- */

static void
dir_add (GArray *entries, const char *name, mode_t mode, ino_t ino)
{
  DirEntry e = { g_strdup (name), mode, ino };

  g_array_append_val (entries, e);
}

static void
dir_entry_clear (DirEntry *e)
{
  g_free (e->name);
}

static void
op_opendir (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  LimenFuse *fs = req_fs (req);
  Node *node = node_get_or_stale (fs, req, ino);
  g_autoptr(GArray) entries = g_array_new (FALSE, FALSE, sizeof (DirEntry));
  DirHandle *dh;

  g_array_set_clear_func (entries, (GDestroyNotify) dir_entry_clear);
  if (node == NULL)
    return;
  if (!node_gate (fs, req, node))
    {
      node_put (fs, node);
      fuse_reply_err (req, EACCES);
      return;
    }
  dir_add (entries, ".", S_IFDIR, node->ino);
  dir_add (entries, "..", S_IFDIR, node->parent ? node->parent->ino : node->ino);
  switch (node->kind)
    {
    case NODE_ROOT:
      {
        g_autoptr(GPtrArray) docs = limen_doc_model_list (fs->model, NULL);

        dir_add (entries, "by-app", S_IFDIR, 0);
        for (guint i = 0; i < docs->len; i++)
          dir_add (entries, limen_doc_get_id (docs->pdata[i]), S_IFDIR, 0);
      }
      break;
    case NODE_BY_APP:
      {
        g_autoptr(GPtrArray) apps = limen_doc_model_list_apps (fs->model);

        for (guint i = 0; i < apps->len; i++)
          dir_add (entries, apps->pdata[i], S_IFDIR, 0);
      }
      break;
    case NODE_APP_DIR:
      /* Listed at the first readdir: while the kernel's copy is valid there is none. */
      break;
    case NODE_DOC_DIR:
      {
        g_autofree char *name = NULL;
        g_autofd int file = -1;
        struct stat st;

        if (node_rights (node) == 0)
          break;
        /* Resolves a moved file by its handle, so the listing shows its current name. */
        file = open_doc_file (fs, node->doc, &st);
        name = limen_doc_dup_name (node->doc);
        if (file >= 0)
          dir_add (entries, name, st.st_mode & S_IFMT, 0);
        g_mutex_lock (&fs->lock);
        if (node->temps)
          {
            GHashTableIter iter;
            gpointer key;

            g_hash_table_iter_init (&iter, node->temps);
            while (g_hash_table_iter_next (&iter, &key, NULL))
              dir_add (entries, key, S_IFREG, 0);
          }
        g_mutex_unlock (&fs->lock);
      }
      break;
    case NODE_FILE:
      {
        int dfd;
        DIR *dir;
        struct dirent *de;

        if (!(node_rights (node) & LIMEN_DOC_PERM_READ) || !node_within_doc (fs, node))
          {
            node_put (fs, node);
            fuse_reply_err (req, EACCES);
            return;
          }
        dfd = openat (node->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || (dir = fdopendir (dfd)) == NULL)
          {
            int err = errno;

            if (dfd >= 0)
              close (dfd);
            node_put (fs, node);
            fuse_reply_err (req, err);
            return;
          }
        while ((de = readdir (dir)))
          if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
            dir_add (entries, de->d_name, DTTOIF (de->d_type), 0);
        closedir (dir);
      }
      break;
    case NODE_TEMP:
      node_put (fs, node);
      fuse_reply_err (req, ENOTDIR);
      return;
    }
  dh = g_new0 (DirHandle, 1);
  /* An app's listing is kept by the kernel across opens (10,001 entries are ~120 readdir
   * round trips otherwise). An open without keep_cache makes the kernel drop its copy and
   * list through us; the copy counts as current once such an open was read to the end
   * with no change since it was opened (op_releasedir). A change only bumps a counter
   * (on_doc_changed, before its D-Bus reply): no kernel notification, and no window in
   * which a later open sees the old listing. Every opendir still comes here and is
   * gated, and every name in it is still looked up through us. */
  if (node->kind == NODE_APP_DIR)
    {
      g_mutex_lock (&fs->lock);
      dh->gen = node->list_gen + fs->all_gen;
      dh->refill = node->list_cached != dh->gen + 1;
      g_mutex_unlock (&fs->lock);
      fi->cache_readdir = 1;
      fi->keep_cache = !dh->refill;
      dh->app_dir = node;   /* our reference, dropped at releasedir */
    }
  else
    {
      dh->entries = g_steal_pointer (&entries);
      node_put (fs, node);
    }
  fi->fh = (uintptr_t) dh;
  if (fuse_reply_open (req, fi) != 0)
    {
      if (dh->app_dir)
        node_put (fs, dh->app_dir);
      g_clear_pointer (&dh->entries, g_array_unref);
      g_free (dh);
    }
}

static void
op_readdir (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
  DirHandle *dh = (DirHandle *) (uintptr_t) fi->fh;
  g_autofree char *buf = g_malloc (size);
  size_t used = 0;

  if (dh->entries == NULL)
    {
      Node *dir = dh->app_dir;
      g_autoptr(GPtrArray) docs = limen_doc_model_list (req_fs (req)->model, dir->app);

      dh->entries = g_array_new (FALSE, FALSE, sizeof (DirEntry));
      g_array_set_clear_func (dh->entries, (GDestroyNotify) dir_entry_clear);
      dir_add (dh->entries, ".", S_IFDIR, dir->ino);
      dir_add (dh->entries, "..", S_IFDIR, dir->parent->ino);
      for (guint i = 0; i < docs->len; i++)
        if (limen_doc_get_perms (docs->pdata[i], dir->app))
          dir_add (dh->entries, limen_doc_get_id (docs->pdata[i]), S_IFDIR, 0);
    }
  if (off >= (off_t) dh->entries->len)
    dh->read_to_end = TRUE;

  for (off_t i = off; i < (off_t) dh->entries->len; i++)
    {
      DirEntry *e = &g_array_index (dh->entries, DirEntry, i);
      struct stat st = { .st_ino = e->ino ? e->ino : (ino_t) -1, .st_mode = e->mode };
      size_t n = fuse_add_direntry (req, buf + used, size - used, e->name, &st, i + 1);

      if (n > size - used)
        break;
      used += n;
    }
  fuse_reply_buf (req, buf, used);
}

static void
op_releasedir (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  DirHandle *dh = (DirHandle *) (uintptr_t) fi->fh;
  LimenFuse *fs = req_fs (req);

  if (dh->app_dir)
    {
      g_mutex_lock (&fs->lock);
      if (dh->refill && dh->read_to_end && dh->app_dir->list_gen + fs->all_gen == dh->gen)
        dh->app_dir->list_cached = dh->gen + 1;
      g_mutex_unlock (&fs->lock);
      node_put (fs, dh->app_dir);
    }
  g_clear_pointer (&dh->entries, g_array_unref);
  g_free (dh);
  fuse_reply_err (req, 0);
}

/* ---- changes to names ---------------------------------------------------------------- */

/* The parent for a change: a writable directory of the caller's view. */
static Node *
writable_parent (LimenFuse *fs, fuse_req_t req, fuse_ino_t ino, const char *name, int *err)
{
  Node *parent = node_get (fs, ino);

  *err = 0;
  if (parent == NULL)
    *err = ESTALE;
  else if (!name_is_valid (name))
    *err = EINVAL;
  else if ((parent->kind != NODE_DOC_DIR && parent->kind != NODE_FILE) || !node_gate (fs, req, parent))
    *err = EACCES;
  else if (!(node_rights (parent) & LIMEN_DOC_PERM_WRITE) || !node_within_doc (fs, parent))
    *err = EACCES;
  else if (parent->kind == NODE_DOC_DIR && node_is_dir_doc (parent))
    *err = EACCES;  /* the exported directory itself cannot be replaced */
  if (*err && parent)
    {
      node_put (fs, parent);
      parent = NULL;
    }
  return parent;
}

static void
entry_for_new (LimenFuse *fs, Node *parent, int fd_path_only, struct fuse_entry_param *e, Node **out)
{
  struct stat st;

  fstat (fd_path_only, &st);
  *out = file_node (fs, parent, parent->doc, fd_path_only, &st, FALSE);
  memset (e, 0, sizeof *e);
  node_stat (fs, *out, &e->attr);
  e->ino = (*out)->ino;
  e->generation = 1;
  e->attr_timeout = ATTR_TIMEOUT;
  e->entry_timeout = ENTRY_TIMEOUT;
}

static void
op_create (fuse_req_t req, fuse_ino_t parent_ino, const char *name, mode_t mode, struct fuse_file_info *fi)
{
  LimenFuse *fs = req_fs (req);
  int err;
  Node *parent = writable_parent (fs, req, parent_ino, name, &err);
  Node *node = NULL;
  struct fuse_entry_param e;
  int fd = -1;

  if (parent == NULL)
    {
      fuse_reply_err (req, err);
      return;
    }
  if (parent->kind == NODE_DOC_DIR)
    {
      g_autofree char *docname = NULL;
      g_autofd int dirfd = open_doc_parent (parent->doc, &docname);

      if (dirfd < 0)
        {
          err = ENOENT;
          goto fail;
        }
      if (strcmp (name, docname) == 0)
        {
          /* The document's own file, e.g. one added with AddNamed that does not exist yet. */
          struct stat st;
          int pfd;

          fd = openat (dirfd, name, (fi->flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC) & ~O_EXCL, mode & 0777);
          if (fd < 0)
            {
              err = errno;
              goto fail;
            }
          pfd = open_doc_file (fs, parent->doc, &st);
          if (pfd < 0)
            {
              err = -pfd;
              goto fail;
            }
          node = file_node (fs, parent, parent->doc, pfd, &st, TRUE);
        }
      else
        {
          /* A temporary file for an atomic save: unnamed on the host until renamed over
           * the document, so a failed save leaves nothing behind. */
          Node *temp;
          g_autofree char *key = NULL;

          g_mutex_lock (&fs->lock);
          if (parent->temps == NULL)
            parent->temps = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
          temp = g_hash_table_lookup (parent->temps, name);
          if (temp == NULL && g_hash_table_size (parent->temps) >= MAX_TEMPS_PER_DOC)
            {
              g_mutex_unlock (&fs->lock);
              err = ENOSPC;
              goto fail;
            }
          if (temp && (fi->flags & O_EXCL))
            {
              g_mutex_unlock (&fs->lock);
              err = EEXIST;
              goto fail;
            }
          if (temp)
            temp->ref++;
          g_mutex_unlock (&fs->lock);
          if (temp == NULL)
            {
              int tfd = openat (dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, (mode & 0777) | 0600);

              if (tfd < 0)
                {
                  err = errno == EISDIR ? EOPNOTSUPP : errno;
                  goto fail;
                }
              key = g_strdup_printf ("t:%s:%s:%s", parent->app ? parent->app : "",
                                     limen_doc_get_id (parent->doc), name);
              g_mutex_lock (&fs->lock);
              temp = node_new_locked (fs, NODE_TEMP, key, parent->app, parent->doc, parent, tfd);
              temp->temp_name = g_strdup (name);
              temp->ref = 2; /* the temps table + this request */
              g_hash_table_insert (parent->temps, g_strdup (name), temp);
              g_mutex_unlock (&fs->lock);
            }
          node = temp;
        }
      if (node->kind == NODE_TEMP && (fi->flags & O_TRUNC))
        {
          if (ftruncate (node->fd, 0) != 0)
            {
              err = errno;
              goto fail;
            }
        }
      if (fd < 0)
        fd = reopen_node (node, fi->flags);
    }
  else
    {
      int pfd;

      fd = openat (parent->fd, name, fi->flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
      if (fd < 0)
        {
          err = errno;
          goto fail;
        }
      pfd = openat (parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (pfd < 0)
        {
          err = errno;
          goto fail;
        }
      {
        struct stat st;

        fstat (pfd, &st);
        node = file_node (fs, parent, parent->doc, pfd, &st, FALSE);
      }
    }
  if (fd < 0)
    {
      err = errno;
      goto fail;
    }
  memset (&e, 0, sizeof e);
  node_stat (fs, node, &e.attr);
  e.ino = node->ino;
  e.generation = 1;
  e.attr_timeout = ATTR_TIMEOUT;
  e.entry_timeout = ENTRY_TIMEOUT;
  g_mutex_lock (&fs->lock);
  node_add_lookup_locked (node);
  node->ref++; /* the handle's */
  g_mutex_unlock (&fs->lock);
  node_put (fs, parent);
  finish_open (fs, req, node, fd, fi, &e);
  return;

fail:
  if (fd >= 0)
    close (fd);
  node_put (fs, node);
  node_put (fs, parent);
  fuse_reply_err (req, err);
}

static void
op_mkdir (fuse_req_t req, fuse_ino_t parent_ino, const char *name, mode_t mode)
{
  LimenFuse *fs = req_fs (req);
  int err;
  Node *parent = writable_parent (fs, req, parent_ino, name, &err);
  struct fuse_entry_param e;
  Node *node;
  int fd;

  if (parent == NULL)
    {
      fuse_reply_err (req, err);
      return;
    }
  if (parent->kind != NODE_FILE)
    {
      node_put (fs, parent);
      fuse_reply_err (req, EACCES);
      return;
    }
  if (mkdirat (parent->fd, name, mode & 07777) != 0 ||
      (fd = openat (parent->fd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC)) < 0)
    {
      err = errno;
      node_put (fs, parent);
      fuse_reply_err (req, err);
      return;
    }
  entry_for_new (fs, parent, fd, &e, &node);
  g_mutex_lock (&fs->lock);
  node_add_lookup_locked (node);
  g_mutex_unlock (&fs->lock);
  node_put (fs, parent);
  fuse_reply_entry (req, &e);
}

static void
remove_entry (fuse_req_t req, fuse_ino_t parent_ino, const char *name, int flags)
{
  LimenFuse *fs = req_fs (req);
  int err;
  Node *parent = writable_parent (fs, req, parent_ino, name, &err);

  if (parent == NULL)
    {
      fuse_reply_err (req, err);
      return;
    }
  if (parent->kind == NODE_DOC_DIR)
    {
      Node *temp = NULL;

      g_mutex_lock (&fs->lock);
      if (parent->temps && (temp = g_hash_table_lookup (parent->temps, name)))
        g_hash_table_remove (parent->temps, name);
      if (temp)
        node_unref_locked (fs, temp);
      g_mutex_unlock (&fs->lock);
      /* The document's own file is not removed through its document. */
      err = temp ? 0 : (flags ? ENOTDIR : EPERM);
    }
  else if (unlinkat (parent->fd, name, flags) != 0)
    err = errno;
  node_put (fs, parent);
  fuse_reply_err (req, err);
}

static void
op_unlink (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  remove_entry (req, parent, name, 0);
}

static void
op_rmdir (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  remove_entry (req, parent, name, AT_REMOVEDIR);
}

/* Replace the document's file with temp @temp (an atomic save). */
static int
save_temp_over (LimenFuse *fs, Node *dir, Node *temp, const char *docname, unsigned int flags)
{
  g_autofd int dirfd = open_doc_parent (dir->doc, NULL);
  char proc[64], hidden[64];
  guint32 rnd;
  struct stat st;
  int err = 0;
  g_autoptr(GBytes) handle = NULL;
  int type = 0;

  if (dirfd < 0)
    return ENOENT;
  if ((flags & RENAME_NOREPLACE) && fstatat (dirfd, docname, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return EEXIST;
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", temp->fd);
  /* Give the unnamed file a hidden name for the instant before the rename: the document's
   * own (doc_mark_seen removes it after a crash), or a random one while another save of the
   * same document holds that. */
  for (int attempt = 0; ; attempt++)
    {
      if (attempt == 0)
        g_snprintf (hidden, sizeof hidden, ".limen-save-%s", limen_doc_get_id (dir->doc));
      else
        {
          if (getrandom (&rnd, sizeof rnd, 0) != sizeof rnd)
            rnd = g_random_int ();
          g_snprintf (hidden, sizeof hidden, ".limen-save-%08x", rnd);
        }
      if (linkat (AT_FDCWD, proc, dirfd, hidden, AT_SYMLINK_FOLLOW) == 0)
        break;
      if (errno != EEXIST || attempt > 8)
        return errno;
    }
  if (renameat (dirfd, hidden, dirfd, docname) != 0)
    {
      err = errno;
      unlinkat (dirfd, hidden, 0);
      return err;
    }
  if (fstat (temp->fd, &st) == 0)
    {
      g_autofree char *path = limen_doc_dup_path (dir->doc);
      g_autofd int pfd = openat (dirfd, docname, O_PATH | O_NOFOLLOW | O_CLOEXEC);

      if (pfd >= 0)
        handle = limen_doc_file_handle (pfd, &type);
      limen_doc_model_update_file (fs->model, dir->doc, path, st.st_dev, st.st_ino, type, handle);
    }
  return 0;
}

static void
op_rename (fuse_req_t req, fuse_ino_t parent_ino, const char *name, fuse_ino_t newparent_ino,
           const char *newname, unsigned int flags)
{
  LimenFuse *fs = req_fs (req);
  int err;
  Node *parent = writable_parent (fs, req, parent_ino, name, &err);
  Node *newparent = NULL;

  if (parent == NULL)
    {
      fuse_reply_err (req, err);
      return;
    }
  newparent = writable_parent (fs, req, newparent_ino, newname, &err);
  if (newparent == NULL)
    goto out;
  if (newparent->doc != parent->doc || g_strcmp0 (newparent->app, parent->app) != 0 ||
      newparent->kind != parent->kind)
    {
      err = EXDEV;
      goto out;
    }
  if (parent->kind == NODE_FILE)
    {
      if (syscall (SYS_renameat2, parent->fd, name, newparent->fd, newname, flags) != 0)
        err = errno;
      goto out;
    }

  /* Single-file document directory: only temps move, possibly over the document. */
  {
    g_autofree char *docname = limen_doc_dup_name (parent->doc);
    Node *temp = NULL;

    if (flags & RENAME_EXCHANGE)
      {
        err = EINVAL;
        goto out;
      }
    g_mutex_lock (&fs->lock);
    if (parent->temps && (temp = g_hash_table_lookup (parent->temps, name)))
      temp->ref++;
    g_mutex_unlock (&fs->lock);
    if (temp == NULL)
      {
        err = strcmp (name, docname) == 0 ? EPERM : ENOENT;
        goto out;
      }
    if (strcmp (newname, docname) == 0)
      {
        err = save_temp_over (fs, parent, temp, docname, flags);
        if (err == 0)
          {
            /* The kernel now knows this inode as the document's file: make it one. */
            GHashTableIter iter;
            gpointer value;
            struct stat st;
            g_autofd int pfd = -1;
            g_autofd int dirfd = open_doc_parent (parent->doc, NULL);

            if (dirfd >= 0)
              pfd = openat (dirfd, docname, O_PATH | O_NOFOLLOW | O_CLOEXEC);
            g_mutex_lock (&fs->lock);
            g_hash_table_remove (parent->temps, name);
            node_unref_locked (fs, temp); /* the temps table's reference */
            if (pfd >= 0 && fstat (pfd, &st) == 0)
              {
                if (g_hash_table_lookup (fs->by_key, temp->key) == temp)
                  g_hash_table_remove (fs->by_key, temp->key);
                g_free (temp->key);
                temp->key = g_strdup_printf ("f:%s:%s:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT,
                                             parent->app ? parent->app : "", limen_doc_get_id (parent->doc),
                                             (guint64) st.st_dev, (guint64) st.st_ino);
                g_hash_table_replace (fs->by_key, temp->key, temp);
                /* Swap the file behind the fd number in one step: other workers may be
                 * using temp->fd right now, and a close() would let the number be reused. */
                if (dup3 (pfd, temp->fd, O_CLOEXEC) < 0)
                  g_warning ("Cannot switch the saved file's node: %s", g_strerror (errno));
                temp->kind = NODE_FILE;
                temp->is_doc_file = TRUE;
                g_clear_pointer (&temp->temp_name, g_free);
              }
            /* Other views still cache the old file under this name. */
            g_hash_table_iter_init (&iter, fs->inodes);
            while (g_hash_table_iter_next (&iter, NULL, &value))
              {
                Node *n = value;

                if (n->kind == NODE_DOC_DIR && n->doc == parent->doc && n != parent)
                  queue_inval (fs, n->ino, docname, 0);
              }
            g_mutex_unlock (&fs->lock);
          }
      }
    else
      {
        Node *old;

        g_mutex_lock (&fs->lock);
        if ((old = g_hash_table_lookup (parent->temps, newname)) && (flags & RENAME_NOREPLACE))
          err = EEXIST;
        else
          {
            if (old)
              {
                g_hash_table_remove (parent->temps, newname);
                node_unref_locked (fs, old);
              }
            g_hash_table_steal (parent->temps, name);
            g_free (temp->temp_name);
            temp->temp_name = g_strdup (newname);
            g_hash_table_insert (parent->temps, g_strdup (newname), temp);
          }
        g_mutex_unlock (&fs->lock);
      }
    node_put (fs, temp);
  }

out:
  node_put (fs, newparent);
  node_put (fs, parent);
  fuse_reply_err (req, err);
}

static void
op_refuse (fuse_req_t req)
{
  fuse_reply_err (req, EPERM);
}

static void
op_symlink (fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
  /* A new symlink inside a document could point anywhere once the host follows it. */
  op_refuse (req);
}

static void
op_link (fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
  op_refuse (req);
}

static void
op_mknod (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
  op_refuse (req);
}

static void
op_statfs (fuse_req_t req, fuse_ino_t ino)
{
  LimenFuse *fs = req_fs (req);
  Node *node = node_get (fs, ino);
  struct statvfs sv = { .f_bsize = 4096, .f_frsize = 4096, .f_namemax = NAME_MAX };

  if (node && node->fd >= 0)
    fstatvfs (node->fd, &sv);
  node_put (fs, node);
  fuse_reply_statfs (req, &sv);
}

static void
op_access (fuse_req_t req, fuse_ino_t ino, int mask)
{
  LimenFuse *fs = req_fs (req);
  Node *node = node_get_or_stale (fs, req, ino);
  struct stat st;
  int err = 0;

  if (node == NULL)
    return;
  if (!node_gate (fs, req, node))
    err = EACCES;
  else if ((err = node_stat (fs, node, &st)) == 0 && mask != F_OK)
    {
      if (((mask & R_OK) && !(st.st_mode & 0444)) || ((mask & W_OK) && !(st.st_mode & 0222)) ||
          ((mask & X_OK) && !(st.st_mode & 0111)))
        err = EACCES;
    }
  node_put (fs, node);
  fuse_reply_err (req, err);
}

static gboolean
xattr_node_ok (LimenFuse *fs, fuse_req_t req, Node *node, guint need)
{
  return (node->kind == NODE_FILE || node->kind == NODE_TEMP) && node_gate (fs, req, node) &&
         (node_rights (node) & need) == need;
}

static void
reply_xattr_value (fuse_req_t req, size_t size, const void *value, ssize_t len)
{
  if (len < 0)
    fuse_reply_err (req, errno);
  else if (size == 0)
    fuse_reply_xattr (req, len);
  else if ((size_t) len > size)
    fuse_reply_err (req, ERANGE);
  else
    fuse_reply_buf (req, value, len);
}

static void
op_getxattr (fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
  LimenFuse *fs = req_fs (req);
  Node *node = node_get_or_stale (fs, req, ino);
  char proc[64];
  g_autofree char *buf = NULL;
  ssize_t len;

  if (node == NULL)
    return;
  if (!xattr_node_ok (fs, req, node, LIMEN_DOC_PERM_READ))
    {
      node_put (fs, node);
      fuse_reply_err (req, node->kind == NODE_FILE || node->kind == NODE_TEMP ? EACCES : ENODATA);
      return;
    }
  if (strcmp (name, HOST_PATH_XATTR) == 0)
    {
      g_autofree char *path = node->kind == NODE_FILE ? limen_doc_fd_path (node->fd) : NULL;

      node_put (fs, node);
      if (path == NULL)
        {
          fuse_reply_err (req, ENODATA);
          return;
        }
      reply_xattr_value (req, size, path, strlen (path));
      return;
    }
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
  buf = g_malloc (size ? size : 1);
  len = node->kind == NODE_TEMP ? fgetxattr (node->fd, name, buf, size) : getxattr (proc, name, buf, size);
  node_put (fs, node);
  reply_xattr_value (req, size, buf, len);
}

static void
op_listxattr (fuse_req_t req, fuse_ino_t ino, size_t size)
{
  LimenFuse *fs = req_fs (req);
  Node *node = node_get_or_stale (fs, req, ino);
  char proc[64];
  char buf[65536];
  ssize_t len = 0;

  if (node == NULL)
    return;
  if (!xattr_node_ok (fs, req, node, LIMEN_DOC_PERM_READ))
    {
      node_put (fs, node);
      fuse_reply_xattr (req, 0);
      return;
    }
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
  len = node->kind == NODE_TEMP ? flistxattr (node->fd, buf, sizeof buf - sizeof HOST_PATH_XATTR)
                                : listxattr (proc, buf, sizeof buf - sizeof HOST_PATH_XATTR);
  if (len < 0)
    len = 0;
  if (node->kind == NODE_FILE)
    {
      memcpy (buf + len, HOST_PATH_XATTR, sizeof HOST_PATH_XATTR);
      len += sizeof HOST_PATH_XATTR;
    }
  node_put (fs, node);
  reply_xattr_value (req, size, buf, len);
}

/* The node of @ino when the caller may change its user xattr @name; NULL after replying. */
static Node *
xattr_node_for_change (LimenFuse *fs, fuse_req_t req, fuse_ino_t ino, const char *name)
{
  Node *node = node_get_or_stale (fs, req, ino);

  if (node == NULL)
    return NULL;
  if (!xattr_node_ok (fs, req, node, LIMEN_DOC_PERM_WRITE) || !g_str_has_prefix (name, "user.") ||
      strcmp (name, HOST_PATH_XATTR) == 0)
    {
      node_put (fs, node);
      fuse_reply_err (req, EACCES);
      return NULL;
    }
  return node;
}

static void
op_setxattr (fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size, int flags)
{
  LimenFuse *fs = req_fs (req);
  Node *node = xattr_node_for_change (fs, req, ino, name);
  char proc[64];
  int r;

  if (node == NULL)
    return;
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
  r = node->kind == NODE_TEMP ? fsetxattr (node->fd, name, value, size, flags)
                              : setxattr (proc, name, value, size, flags);
  node_put (fs, node);
  fuse_reply_err (req, r == 0 ? 0 : errno);
}

static void
op_removexattr (fuse_req_t req, fuse_ino_t ino, const char *name)
{
  LimenFuse *fs = req_fs (req);
  Node *node = xattr_node_for_change (fs, req, ino, name);
  char proc[64];
  int r;

  if (node == NULL)
    return;
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", node->fd);
  r = node->kind == NODE_TEMP ? fremovexattr (node->fd, name) : removexattr (proc, name);
  node_put (fs, node);
  fuse_reply_err (req, r == 0 ? 0 : errno);
}

static const struct fuse_lowlevel_ops limen_fuse_ops = {
  .init = op_init,
  .lookup = op_lookup,
  .forget = op_forget,
  .forget_multi = op_forget_multi,
  .getattr = op_getattr,
  .setattr = op_setattr,
  .readlink = op_readlink,
  .mknod = op_mknod,
  .mkdir = op_mkdir,
  .unlink = op_unlink,
  .rmdir = op_rmdir,
  .symlink = op_symlink,
  .rename = op_rename,
  .link = op_link,
  .open = op_open,
  .read = op_read,
  .write = op_write,
  .write_buf = op_write_buf,
  .release = op_release,
  .fsync = op_fsync,
  .opendir = op_opendir,
  .readdir = op_readdir,
  .releasedir = op_releasedir,
  .statfs = op_statfs,
  .setxattr = op_setxattr,
  .getxattr = op_getxattr,
  .listxattr = op_listxattr,
  .removexattr = op_removexattr,
  .access = op_access,
  .create = op_create,
};

/* ---- lifecycle ------------------------------------------------------------------------ */

LimenFuse *
limen_fuse_new (LimenDocModel *model, const char *mountpoint)
{
  LimenFuse *fs = g_new0 (LimenFuse, 1);

  fs->model = model;
  fs->mountpoint = g_strdup (mountpoint);
  g_mutex_init (&fs->lock);
  g_mutex_init (&fs->pid_lock);
  g_mutex_init (&fs->seen_lock);
  g_mutex_init (&fs->done_lock);
  g_cond_init (&fs->done_cond);
  fs->inodes = g_hash_table_new (g_direct_hash, g_direct_equal);
  fs->by_key = g_hash_table_new (g_str_hash, g_str_equal);
  fs->pids = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) pid_entry_free);
  fs->next_ino = FUSE_ROOT_ID;
  g_mutex_lock (&fs->lock);
  fs->root = node_new_locked (fs, NODE_ROOT, NULL, NULL, NULL, NULL, -1);
  fs->root->ref = 1;
  fs->by_app = node_new_locked (fs, NODE_BY_APP, NULL, NULL, NULL, fs->root, -1);
  fs->by_app->ref = 1;
  g_mutex_unlock (&fs->lock);
  fs->inval_queue = g_async_queue_new ();
  limen_doc_model_set_changed_func (model, on_doc_changed, fs);
  return fs;
}

const char *
limen_fuse_get_mountpoint (LimenFuse *fs)
{
  return fs->mountpoint;
}

/* The device of whatever is mounted exactly at @path, from mountinfo (no stat, which
 * could wait on a dead FUSE server); 0 when nothing is. */
static dev_t
mounted_dev_full (const char *path, gboolean *is_fuse, int *mnt_id)
{
  g_autofree char *mountinfo = NULL;
  g_auto(GStrv) lines = NULL;
  dev_t dev = 0;

  if (is_fuse)
    *is_fuse = FALSE;
  if (!g_file_get_contents ("/proc/self/mountinfo", &mountinfo, NULL, NULL))
    return 0;
  lines = g_strsplit (mountinfo, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], " ", -1);
      unsigned maj, min;
      guint n = g_strv_length (f);

      if (n < 7 || sscanf (f[2], "%u:%u", &maj, &min) != 2)
        continue;
      {
        g_autofree char *mp = g_strcompress (f[4]);

        /* mountinfo escapes spaces as \040: g_strcompress undoes octal escapes. */
        if (strcmp (mp, path) != 0)
          continue;
      }
      dev = makedev (maj, min);
      if (mnt_id)
        *mnt_id = atoi (f[0]);
      if (is_fuse)
        for (guint j = 6; j + 1 < n; j++)
          if (strcmp (f[j], "-") == 0)
            *is_fuse = g_str_has_prefix (f[j + 1], "fuse");
    }
  return dev;
}

static dev_t
mounted_dev (const char *path, gboolean *is_fuse)
{
  return mounted_dev_full (path, is_fuse, NULL);
}

static gpointer
loop_thread_func (gpointer user_data)
{
  LimenFuse *fs = user_data;
  struct fuse_loop_config *cfg = fuse_loop_cfg_create ();

  fuse_loop_cfg_set_clone_fd (cfg, 0);
  fuse_loop_cfg_set_idle_threads (cfg, 4);
  fuse_loop_cfg_set_max_threads (cfg, 16);
  fuse_session_loop_mt (fs->se, cfg);
  fuse_loop_cfg_destroy (cfg);
  g_mutex_lock (&fs->done_lock);
  fs->loop_done = TRUE;
  g_cond_signal (&fs->done_cond);
  g_mutex_unlock (&fs->done_lock);
  return NULL;
}

static void
unmount_stale (const char *mountpoint)
{
  gboolean is_fuse = FALSE;

  while (mounted_dev (mountpoint, &is_fuse) != 0 && is_fuse)
    {
      g_autoptr(GError) error = NULL;
      const char *argv[] = { "fusermount3", "-u", "-z", mountpoint, NULL };
      int status = 0;

      g_message ("Unmounting a stale filesystem at %s", mountpoint);
      if (umount2 (mountpoint, MNT_DETACH) == 0)
        continue;
      if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                         NULL, NULL, NULL, NULL, &status, &error) || !g_spawn_check_wait_status (status, NULL))
        {
          g_warning ("Could not unmount %s: %s", mountpoint, error ? error->message : "fusermount3 failed");
          return;
        }
    }
}

gboolean
limen_fuse_start (LimenFuse *fs, GError **error)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  struct fuse_args args;

  unmount_stale (fs->mountpoint);
  if (g_mkdir_with_parents (fs->mountpoint, 0700) != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "Cannot create %s: %s",
                   fs->mountpoint, g_strerror (errno));
      return FALSE;
    }

  g_ptr_array_add (argv, (char *) "limen-documents");
  g_ptr_array_add (argv, (char *) "-o");
  /* Root's mount would otherwise be closed to sandboxes in their own user namespace. */
  g_ptr_array_add (argv, (char *) (geteuid () == 0 ? "fsname=portal,subtype=limen,allow_other"
                                                   : "fsname=portal,subtype=limen"));
  g_ptr_array_add (argv, NULL);
  args.argc = argv->len - 1;
  args.argv = (char **) argv->pdata;
  args.allocated = 0;

  fs->se = fuse_session_new (&args, &limen_fuse_ops, sizeof limen_fuse_ops, fs);
  fuse_opt_free_args (&args);
  if (fs->se == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "Cannot create the FUSE session");
      return FALSE;
    }
  if (fuse_session_mount (fs->se, fs->mountpoint) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "Cannot mount the document filesystem at %s",
                   fs->mountpoint);
      fuse_session_destroy (fs->se);
      fs->se = NULL;
      return FALSE;
    }
  fs->mounted = TRUE;
  fs->dev = mounted_dev_full (fs->mountpoint, NULL, &fs->mnt_id);
  fs->inval_thread = g_thread_new ("limen-inval", inval_thread_func, fs);
  fs->loop_thread = g_thread_new ("limen-fuse", loop_thread_func, fs);
  g_debug ("Document filesystem mounted at %s (dev %u:%u)", fs->mountpoint, major (fs->dev), minor (fs->dev));
  return TRUE;
}

void
limen_fuse_stop (LimenFuse *fs)
{
  Inval *stop = g_new0 (Inval, 1);
  gint64 deadline;
  gboolean done;

  limen_doc_model_set_changed_func (fs->model, NULL, NULL);
  if (fs->se)
    {
      char abort_path[64];

      fuse_session_exit (fs->se);
      /* Abort the connection first: open files then fail at once instead of keeping the
       * filesystem (and our worker threads) busy; then detach the mount. */
      g_snprintf (abort_path, sizeof abort_path, "/sys/fs/fuse/connections/%u/abort", minor (fs->dev));
      if (fs->dev)
        g_file_set_contents (abort_path, "1", 1, NULL);
      /* Lazy for root, fusermount3 -u -z otherwise; but only while the mount there is
       * still ours: after --replace the successor has mounted its own in its place. */
      if (mounted_dev (fs->mountpoint, NULL) == fs->dev)
        fuse_session_unmount (fs->se);
      else
        g_debug ("%s is no longer our mount; leaving it alone", fs->mountpoint);
      fs->mounted = FALSE;
    }
  stop->stop = TRUE;
  g_async_queue_push (fs->inval_queue, stop);

  /* Bounded wait: a worker stuck in the kernel must not keep the daemon alive. */
  deadline = g_get_monotonic_time () + 400 * G_TIME_SPAN_MILLISECOND;
  g_mutex_lock (&fs->done_lock);
  while (fs->loop_thread && !fs->loop_done)
    if (!g_cond_wait_until (&fs->done_cond, &fs->done_lock, deadline))
      break;
  done = fs->loop_done || fs->loop_thread == NULL;
  g_mutex_unlock (&fs->done_lock);
  if (done)
    {
      if (fs->loop_thread)
        g_thread_join (fs->loop_thread);
      if (fs->inval_thread)
        g_thread_join (fs->inval_thread);
      if (fs->se)
        fuse_session_destroy (fs->se);
      /* Nodes and the rest die with the process; nothing else refers to them now. */
    }
  else
    g_warning ("FUSE workers did not stop in time; leaving them to the exit");
}

gboolean
limen_fuse_identify_fd (LimenFuse *fs, int fd, LimenDoc **doc, char **app, gboolean *is_doc_file)
{
  char proc[64];
  g_autofree char *info = NULL;
  g_autofree char *path = NULL;
  g_auto(GStrv) parts = NULL;
  const char *p;
  const char *id, *name;
  int mnt_id = -1;
  gsize len = strlen (fs->mountpoint);

  *doc = NULL;
  *app = NULL;
  *is_doc_file = FALSE;
  if (!fs->mounted)
    return FALSE;
  /* The mount id and the fd's path come from the kernel's own tables: nothing here sends
   * a request to our filesystem, so the D-Bus thread never waits on it. statx asked for
   * the mount id alone (and told not to sync) answers from the VFS without asking the
   * filesystem, at a tenth of reading fdinfo; kernels before 5.8 leave it out of the mask. */
  struct statx stx;
  if (statx (fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
      (stx.stx_mask & STATX_MNT_ID))
    mnt_id = (int) stx.stx_mnt_id;
  else
    {
      g_snprintf (proc, sizeof proc, "/proc/self/fdinfo/%d", fd);
      if (!g_file_get_contents (proc, &info, NULL, NULL))
        return FALSE;
      p = strstr (info, "mnt_id:");
      if (p)
        mnt_id = atoi (p + 7);
    }
  if (mnt_id != fs->mnt_id)
    return FALSE;
  path = limen_doc_fd_path (fd);
  if (path == NULL || strncmp (path, fs->mountpoint, len) != 0 || (path[len] != '/' && path[len] != '\0'))
    return TRUE;
  parts = g_strsplit (path + len + (path[len] == '/'), "/", -1);
  if (parts[0] && strcmp (parts[0], "by-app") == 0 && parts[1] && parts[2] && parts[3] && !parts[4])
    {
      *app = g_strdup (parts[1]);
      id = parts[2];
      name = parts[3];
    }
  else if (parts[0] && parts[1] && !parts[2])
    {
      id = parts[0];
      name = parts[1];
    }
  else
    return TRUE;
  if (limen_doc_id_is_valid (id) && (*doc = limen_doc_model_lookup (fs->model, id)))
    {
      g_autofree char *docname = limen_doc_dup_name (*doc);

      *is_doc_file = strcmp (docname, name) == 0 && !(limen_doc_get_flags (*doc) & LIMEN_DOC_FLAG_DIRECTORY);
    }
  return TRUE;
}
