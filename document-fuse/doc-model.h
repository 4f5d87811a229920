/* limen-documents — the documents and their per-app permissions, shared by the D-Bus
 * thread (the only writer) and the FUSE workers (readers); all access is locked.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include <sys/types.h>
#include "db.h"

G_BEGIN_DECLS

typedef enum {
  LIMEN_DOC_PERM_READ   = 1 << 0,
  LIMEN_DOC_PERM_WRITE  = 1 << 1,
  LIMEN_DOC_PERM_GRANT  = 1 << 2,
  LIMEN_DOC_PERM_DELETE = 1 << 3,
} LimenDocPerms;
#define LIMEN_DOC_PERM_ALL 0xf

typedef enum {
  LIMEN_DOC_FLAG_DIRECTORY  = 1 << 0,  /* export-directory: NAME is a browsable directory */
  LIMEN_DOC_FLAG_PERSISTENT = 1 << 1,  /* kept in the database */
  /* Made without reuse_existing: never found by its path (Lookup, a later Add with
   * reuse_existing), as in the reference, so it is never shared with another export. */
  LIMEN_DOC_FLAG_UNIQUE     = 1 << 2,
} LimenDocFlags;

typedef struct _LimenDoc LimenDoc;
typedef struct _LimenDocModel LimenDocModel;

/* What changed: @app is the app whose rights changed, or NULL for the document itself
 * (deleted, or its file replaced). Runs on the writer's thread, with no lock held. */
typedef void (*LimenDocChangedFunc) (LimenDoc *doc, const char *app, gpointer user_data);

/* Asked on the main thread, while the one-time import runs, for what the model misses:
 * document @id, the documents at @path, or (both NULL) every document. */
typedef void (*LimenDocMissFunc) (const char *id, const char *path, gpointer user_data);

/* The persistent documents of @db, read from it on demand. */
LimenDocModel *limen_doc_model_new (LimenDb *db, GError **error);
void limen_doc_model_free (LimenDocModel *model);
/* Set (NULL: clear) the import's hook; calls from the thread that sets it use it, and
 * limen_doc_model_lookup_waiting() from other threads asks that thread to. */
void limen_doc_model_set_miss_func (LimenDocModel *model, LimenDocMissFunc func, gpointer user_data);
/* TRUE while the import's hook is set; any thread. */
gboolean limen_doc_model_importing (LimenDocModel *model);
/* Main thread: bring in the documents other threads wait for (between import steps). */
void limen_doc_model_serve_misses (LimenDocModel *model);
/* Main thread, leaving: no thread waits for it from now on. */
void limen_doc_model_stop_waiting (LimenDocModel *model);
/* Register the single change listener (the FUSE filesystem). */
void limen_doc_model_set_changed_func (LimenDocModel *model, LimenDocChangedFunc func, gpointer user_data);

/* The document @id (a new reference) or NULL. */
LimenDoc *limen_doc_model_lookup (LimenDocModel *model, const char *id);
/* The same; on a thread other than the main one, a document the import has not reached
 * yet is brought in by the main thread, which this waits for (never call it for the main
 * thread's own sake, nor holding a lock the main thread may take). */
LimenDoc *limen_doc_model_lookup_waiting (LimenDocModel *model, const char *id);
/* A live document made with reuse for exactly this host path (a persistent one first), or
 * NULL: what Lookup names. */
LimenDoc *limen_doc_model_find_by_path (LimenDocModel *model, const char *path);
/* The document a reuse_existing export of @path finds: one made with reuse, kept as long as
 * the export asks for (@persistent, or this session only), or NULL. */
LimenDoc *limen_doc_model_find_reusable (LimenDocModel *model, const char *path, gboolean persistent);
/* Every live document @app has any right on (all documents for NULL), new references. */
GPtrArray *limen_doc_model_list (LimenDocModel *model, const char *app);
/* The app ids holding rights on any document. */
GPtrArray *limen_doc_model_list_apps (LimenDocModel *model);

/* Create a document; persistent ones are committed before this returns. */
LimenDoc *limen_doc_model_add (LimenDocModel *model, const char *path, guint64 dev, guint64 ino,
                               int handle_type, GBytes *handle, guint flags, GError **error);
/* Create a persistent document with a given @id (the import of the reference state); @dev,
 * @ino and the handle are the file's own, as limen_doc_model_add() takes them. */
LimenDoc *limen_doc_model_add_with_id (LimenDocModel *model, const char *id, const char *path, guint64 dev,
                                       guint64 ino, int handle_type, GBytes *handle, guint flags,
                                       GError **error);
/* Set @app's rights to exactly @perms (0 removes the app). */
gboolean limen_doc_model_set_perms (LimenDocModel *model, LimenDoc *doc, const char *app, guint perms,
                                    GError **error);
/* Remove the document (never the file). */
gboolean limen_doc_model_delete (LimenDocModel *model, LimenDoc *doc, GError **error);
/* The file behind the document was replaced or moved (atomic save, rename on the host);
 * callable from any thread, stored by the main thread. */
void limen_doc_model_update_file (LimenDocModel *model, LimenDoc *doc, const char *path,
                                  guint64 dev, guint64 ino, int handle_type, GBytes *handle);
/* Start / end a batch of document writes in one journaled transaction (AddFull): all or none. */
gboolean limen_doc_model_begin (LimenDocModel *model, GError **error);
gboolean limen_doc_model_commit (LimenDocModel *model, GError **error);
void limen_doc_model_rollback (LimenDocModel *model);

LimenDoc *limen_doc_ref (LimenDoc *doc);
void limen_doc_unref (LimenDoc *doc);
/* Immutable properties. */
const char *limen_doc_get_id (LimenDoc *doc);
guint limen_doc_get_flags (LimenDoc *doc);
/* Mutable ones, copied under the model's lock. */
char *limen_doc_dup_path (LimenDoc *doc);
/* The basename the document shows (NAME in doc/ID/NAME). */
char *limen_doc_dup_name (LimenDoc *doc);
void limen_doc_get_file_id (LimenDoc *doc, guint64 *dev, guint64 *ino);
gboolean limen_doc_is_deleted (LimenDoc *doc);
/* The stored name_to_handle_at() handle (a new reference) and its type, or NULL. */
GBytes *limen_doc_dup_handle (LimenDoc *doc, int *type);
/* The filesystem served this document to the kernel at least once (so the kernel may
 * cache something of it); until then changes need no invalidation. */
void limen_doc_mark_seen (LimenDoc *doc);
gboolean limen_doc_was_seen (LimenDoc *doc);
/* @app's rights (every right for NULL, the host), 0 once the document is deleted. */
guint limen_doc_get_perms (LimenDoc *doc, const char *app);
/* A{sas} of every app's rights. */
GVariant *limen_doc_perms_to_variant (LimenDoc *doc);

/* "read" etc. → bit; 0 for an unknown string. */
guint limen_doc_perm_from_string (const char *perm);
/* Parse a whole list; FALSE + INVALID_ARGUMENT naming @key for an unknown entry. */
gboolean limen_doc_perms_from_strv (const char * const *perms, const char *key, guint *out, GError **error);
/* A NULL-terminated list of names for @perms (free with g_free; the strings are static). */
const char **limen_doc_perms_to_strv (guint perms);
/* TRUE for an acceptable document id ([A-Za-z0-9_-], 1..64 bytes). */
gboolean limen_doc_id_is_valid (const char *id);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenDoc, limen_doc_unref)

/* The path the kernel gives for @fd (/proc/self/fd), or NULL. */
char *limen_doc_fd_path (int fd);

/* The name_to_handle_at() handle of @fd and its type in @type, or NULL (type 0). */
GBytes *limen_doc_file_handle (int fd, int *type);

G_END_DECLS
