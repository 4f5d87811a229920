/* limen-documents — what the files of the FUSE filesystem share: the node model, the
 * filesystem's state and the helpers the operations use. Not installed, not for main.c.
 *
 * Files: fuse-ops.c (file and attribute operations, the ops table), fuse-listing.c
 * (listings), fuse-dir-ops.c (changes to names), fuse-rename.c (rename and atomic saves),
 * fuse-xattr.c (extended attributes), fuse-nodes.c (nodes and the host files behind them),
 * fuse-caller.c (who sends a request), fuse-pid-cache.c (its cache), fuse-inval.c (the
 * kernel-cache invalidation thread), fuse-loop.c (the request loop), fuse-mount.c (mount,
 * unmount, stale mounts).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <gio/gio.h>
#include <sys/stat.h>

#include "compat.h"
#include "doc-model.h"
#include "fuse-ops.h"
#include "fuse-pid-cache.h"

#define HOST_PATH_XATTR "user.document-portal.host-path"
/* Entries that gate access (root's DOCIDs, by-app's APPIDs) are never cached, so every
 * path walk through them reaches us and the caller is checked. */
#define GATE_TIMEOUT 0.0
#define ENTRY_TIMEOUT 30.0
/* A document's entry in by-app/APPID changes only by a grant, revoke or delete, and each
 * drops it from the kernel at once (limen_fuse_on_doc_changed); every walk to it still
 * passes the app's gate entry above, which reaches us each time. Kept long, so a listing
 * with details (`ls -l`, a file manager) costs no lookup of each document again once the
 * short ENTRY_TIMEOUT has passed. */
#define DOC_ENTRY_TIMEOUT 3600.0
/* Attributes of our own directories. A host file's are never kept (limen_fuse_attr_timeout()):
 * every stat by path reaches us, so a file the host deleted or replaced shows at once. */
#define ATTR_TIMEOUT 5.0
#define MAX_TEMPS_PER_DOC 64

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
  gboolean    is_doc_file;  /* FILE that is the document's NAME itself; set under fs->lock */
  char       *temp_name;    /* TEMP */
  char       *hidden;       /* TEMP that was the document's file: its hidden name on the host */
  /* FILE below an exported directory, under fs->lock: the name it was last looked up or
   * made under in its parent, and the inode found there instead once (see op_open). */
  char       *name;
  ino_t       replaced_by;
  /* FILE, TEMP, under fs->lock: handles open on it (see op_getattr); FILE: the kernel was
   * told once to drop its entry because the host deleted the file. */
  int         n_open;
  gboolean    gone_told;
  GHashTable *temps;        /* DOC_DIR of a single-file document: name → Node */
  /* Page-cache validity for keep_cache: what the file looked like at the last open. */
  struct timespec cached_mtime;
  off_t       cached_size;
  /* APP_DIR, under fs->lock: bumped by every grant, revoke and delete for the app; the
   * kernel's copy of the listing is current while list_cached == gen + 1 (see op_opendir). */
  guint64     list_gen;
  guint64     list_cached;
  /* DOC_DIR, under fs->lock: the names in the kernel's copy of the listing, NULL when
   * it is not known to hold a complete one (see open_doc_listing). */
  char       *list_sig;
};

typedef struct {
  Node *node;
  int   fd;
} Handle;

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
  /* Under lock: document id → GPtrArray of its nodes in every view, and the APP_DIR
   * nodes. A change to one document (a save, a grant) visits its own nodes: a walk of
   * every node held the lock for the time of thousands of them on each change. */
  GHashTable    *by_doc;
  GPtrArray     *app_dirs;
  fuse_ino_t     next_ino;
  Node          *root;
  Node          *by_app;
  guint64        all_gen;    /* under lock: bumped by changes to every view (Delete) */
  dev_t          dev;        /* of the mount, from mountinfo */
  int            mnt_id;     /* of the mount, from mountinfo */
  LimenFusePidCache *pids;
  GMutex         seen_lock;  /* first sight of a document: doc_first_seen */
  GMutex         done_lock;
  GCond          done_cond;
  GCond          release_cond; /* with lock: a handle was released (n_open went down) */
  gboolean       loop_done;
  gboolean       stopping;   /* under done_lock: limen_fuse_stop ended the loop */
  gboolean       mounted;
  LimenFuseLostFunc lost_func;
  gpointer       lost_data;
  char          *status_file; /* test hooks: TEST_DOCUMENT_PORTAL_FUSE_STATUS */
};

/* The filesystem a request belongs to. */
static inline LimenFuse *
req_fs (fuse_req_t req)
{
  return fuse_req_userdata (req);
}

/* The operations table (fuse-ops.c). */
extern const struct fuse_lowlevel_ops limen_fuse_lowlevel_ops;

/* ---- nodes (fuse-nodes.c) ---- */
/* A new node in the tables, no reference counted yet; fs->lock held. */
Node *limen_fuse_node_new_locked (LimenFuse *fs, NodeKind kind, const char *key, const char *app,
                                  LimenDoc *doc, Node *parent, int fd);
/* Does someone still hold @node open? A close() returns before the kernel's RELEASE of
 * its handle reaches us, so a stat right after it may come first: a node with handles
 * waits a few milliseconds for releases in flight. fs->lock not held. */
gboolean limen_fuse_node_still_open (LimenFuse *fs, Node *node);
/* The nodes of @doc (of its id) in every view, or NULL; fs->lock held. Not to be changed
 * while it is walked: nothing the walk calls may make or free a node. */
GPtrArray *limen_fuse_doc_nodes_locked (LimenFuse *fs, LimenDoc *doc);
/* Drop one reference; the node goes when the last one does; fs->lock held. */
void limen_fuse_node_unref_locked (LimenFuse *fs, Node *node);
/* The node for @ino with a reference, or NULL. */
Node *limen_fuse_node_get (LimenFuse *fs, fuse_ino_t ino);
/* limen_fuse_node_get for an operation on @ino: NULL (and ESTALE answered) when it is gone. */
Node *limen_fuse_node_get_or_stale (LimenFuse *fs, fuse_req_t req, fuse_ino_t ino);
/* Drop a reference taken by node_get/node_ensure (NULL is ignored). */
void limen_fuse_node_put (LimenFuse *fs, Node *node);
/* One kernel lookup more on @node (the caller holds a reference it hands over). */
void limen_fuse_node_add_lookup_locked (Node *node);
/* The rights the node's view holds on its document (READ for virtual directories). */
guint limen_fuse_node_rights (Node *node);
/* Is the node's document an exported directory? */
gboolean limen_fuse_node_is_dir_doc (Node *node);
/* The attributes the view sees; 0 or an errno. */
int limen_fuse_node_stat (LimenFuse *fs, Node *node, struct stat *st);
/* limen_fuse_node_stat of a FILE or TEMP whose file's stat @st was just taken: @st made
 * what the view shows (rights, inode number). */
int limen_fuse_node_stat_file (LimenFuse *fs, Node *node, struct stat *st);
/* Answer a lookup with @node (whose reference is handed to the kernel's lookup count). */
void limen_fuse_reply_entry (LimenFuse *fs, fuse_req_t req, Node *node, double timeout);
/* Find or make the node with @key; returns it with a reference. Takes @fd either way. */
Node *limen_fuse_node_ensure (LimenFuse *fs, NodeKind kind, const char *key, const char *app,
                              LimenDoc *doc, Node *parent, int fd);
/* Is @name one directory entry name (not empty, ".", ".." and without '/')? */
gboolean limen_fuse_name_is_valid (const char *name);
/* Open the directory holding the document's file, refusing symlinks on the stored path. */
int limen_fuse_open_doc_parent (LimenDoc *doc, char **name_out);
/* O_PATH fd of the document's file (found again by handle after a move), or -errno. */
int limen_fuse_open_doc_file (LimenFuse *fs, LimenDoc *doc, struct stat *st);
/* Is @node (inside an exported directory) still below the document's directory? */
gboolean limen_fuse_node_within_doc (LimenFuse *fs, Node *node);
/* The node of a host file below @parent (keyed by view, document and inode); takes @fd. */
Node *limen_fuse_file_node (LimenFuse *fs, Node *parent, LimenDoc *doc, int fd, const struct stat *st,
                            gboolean is_doc_file);
/* Remember @name as what @node (below an exported directory) is called in its parent. */
void limen_fuse_node_set_name (LimenFuse *fs, Node *node, const char *name);
/* Did a host program put another file under @node's name since the kernel looked it up
 * (@st: the node's stat)? TRUE the first time that is seen for that file: the kernel's
 * entry is then dropped, and an open answered ESTALE walks the path again. */
gboolean limen_fuse_node_was_replaced (LimenFuse *fs, Node *node, const struct stat *st);
/* First sight of a document in this process: remove a save left half-done by a crash. */
void limen_fuse_doc_mark_seen (LimenFuse *fs, LimenDoc *doc);
/* The node of a single-file document's own file follows the document's path: when a
 * host program replaced the file there (write a temporary file, rename it over), the node
 * is switched to the new file and @st (the node's stat) updated. TRUE when it switched. */
gboolean limen_fuse_node_follow_doc (LimenFuse *fs, Node *node, struct stat *st);
/* For a FILE whose file @st (from its fd) has no name left on the host: TRUE, and the
 * kernel is told (once) to drop the entry that leads to it, so the next walk asks us. */
gboolean limen_fuse_node_deleted (LimenFuse *fs, Node *node, const struct stat *st);
/* For a FILE, @st just taken from its fd: a document's own file replaced on the host is
 * followed (@st is then the new file's); TRUE when the path no longer leads to the node's
 * file (below an exported directory, replaced; anywhere, deleted), so an operation by path
 * must make the kernel walk it again (ESTALE). */
gboolean limen_fuse_node_left_behind (LimenFuse *fs, Node *node, struct stat *st);
/* How long the kernel may keep @node's attributes: never for a host file. */
static inline double
limen_fuse_attr_timeout (const Node *node)
{
  /* A document's directory shows the view's rights, and every change to them drops its
   * attributes from the kernel (limen_fuse_on_doc_changed): `ls -l` of an app's documents
   * then asks nothing more of each one after the first listing. */
  if (node->kind == NODE_DOC_DIR)
    return DOC_ENTRY_TIMEOUT;
  return node->kind == NODE_FILE ? 0.0 : ATTR_TIMEOUT;
}
/* A real open of the node's O_PATH fd with @flags (through /proc/self/fd). */
int limen_fuse_node_reopen (Node *node, int flags);

/* ---- callers (fuse-caller.c) ---- */
/* May the process behind @req use the view of @view_app (NULL: the host view)? */
gboolean limen_fuse_caller_allowed (LimenFuse *fs, fuse_req_t req, const char *view_app);
/* Can the process @pid be checked without reading /proc or asking anyone: identified a
 * moment ago, or a plain host process told from its pidfd (then remembered)? */
gboolean limen_fuse_caller_known (LimenFuse *fs, pid_t pid);
/* May the process behind @req use the view @node belongs to? */
gboolean limen_fuse_node_gate (LimenFuse *fs, fuse_req_t req, Node *node);

/* ---- the request loop (fuse-loop.c) ---- */
/* Serve requests until the session ends; 0, or the first receive error (negative errno). */
int limen_fuse_loop_run (LimenFuse *fs);

/* ---- kernel cache invalidation (fuse-inval.c) ---- */
/* Start the thread that sends the kernel invalidations. */
void limen_fuse_inval_start (LimenFuse *fs);
/* Stop it after what is queued (the session may be gone: then nothing is sent). */
void limen_fuse_inval_stop (LimenFuse *fs);
/* Queue inval_entry(@parent, @name) when @name is set, else inval_inode(@ino). */
void limen_fuse_queue_inval (LimenFuse *fs, fuse_ino_t parent, const char *name, fuse_ino_t ino);
/* The entry parent/name may lead to a node the host replaced or deleted: have the kernel
 * ask again on its next walk through it (an invalidation where the kernel cannot expire).
 * Never drops a fresh entry that answers with the same node, nor what is below it. */
void limen_fuse_queue_expire (LimenFuse *fs, fuse_ino_t parent, const char *name);
/* The document model's change callback (D-Bus thread): queue what the kernel must drop. */
void limen_fuse_on_doc_changed (LimenDoc *doc, const char *app, gpointer user_data);

/* ---- changes to names (fuse-dir-ops.c), shared with rename (fuse-rename.c) ---- */
/* The parent for a change: a writable directory of the caller's view; NULL with *@err set. */
Node *limen_fuse_writable_parent (LimenFuse *fs, fuse_req_t req, fuse_ino_t ino, const char *name, int *err);
/* The nodes of @doc's file @st, in every view, are (@is_doc_file) or are no longer the
 * document's own file; fs->lock held. */
void limen_fuse_mark_doc_file_locked (LimenFuse *fs, LimenDoc *doc, const struct stat *st, gboolean is_doc_file);
/* Other views of @dir's document cache its file under @docname: drop those entries. */
void limen_fuse_inval_other_views (LimenFuse *fs, Node *dir, const char *docname);
/* @temp, taken out of @dir's temps: gone for good (with its hidden host name); fs->lock held. */
void limen_fuse_drop_temp_locked (LimenFuse *fs, Node *dir, Node *temp);

/* ---- the operations on directories, for the operations table: listings (fuse-listing.c),
 * changes to names (fuse-dir-ops.c), rename (fuse-rename.c) ---- */
void limen_fuse_op_opendir (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void limen_fuse_op_readdir (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void limen_fuse_op_releasedir (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void limen_fuse_op_create (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                           struct fuse_file_info *fi);
void limen_fuse_op_mkdir (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void limen_fuse_op_unlink (fuse_req_t req, fuse_ino_t parent, const char *name);
void limen_fuse_op_rmdir (fuse_req_t req, fuse_ino_t parent, const char *name);
void limen_fuse_op_rename (fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                           const char *newname, unsigned int flags);
void limen_fuse_op_symlink (fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void limen_fuse_op_link (fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void limen_fuse_op_mknod (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
/* ---- extended attributes (fuse-xattr.c), for the operations table ---- */
void limen_fuse_op_getxattr (fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void limen_fuse_op_listxattr (fuse_req_t req, fuse_ino_t ino, size_t size);
void limen_fuse_op_setxattr (fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
                             int flags);
void limen_fuse_op_removexattr (fuse_req_t req, fuse_ino_t ino, const char *name);

/* Open @node for a request after the checks: reply open (or create with @entry). */
void limen_fuse_finish_open (LimenFuse *fs, fuse_req_t req, Node *node, int fd, struct fuse_file_info *fi,
                             const struct fuse_entry_param *entry);
