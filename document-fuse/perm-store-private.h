/* limen-documents — what the PermissionStore's files share: the in-memory model (tables
 * of entries) and its writes. Not installed. Files: perm-store.c (the model, loading and
 * writes through to SQLite), perm-store-dbus.c (the D-Bus methods), perm-limits.c (what the
 * store accepts, the a{sas} serializer), perm-flatpak-table.c (table files for the CLI).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "perm-store.h"
#include "limen-dbus.h"

G_BEGIN_DECLS

#define DOCUMENTS_TABLE "documents"

/* One entry as read from SQLite for one call; nothing of it stays between calls. */
typedef struct {
  GVariant   *data;        /* never NULL: an empty a{sv} stands for "no data" */
  GHashTable *apps;        /* app → GStrv, built from @perms_cache on demand */
  GVariant   *perms_cache; /* a{sas} of apps */
} PermEntry;

struct _LimenPermStore {
  GThreadPool *dropper;    /* frees big GDBus trees off the main thread */
  LimenDb    *db;          /* the entries: read on demand, nothing resident */
  LimenImportJob *import;  /* the one-time import, while it runs */
  LimenDbusImplPortalPermissionStore *skeleton;
  const LimenPermDocuments *docs;   /* serves the "documents" table, when set */
  gpointer    docs_data;
};

/* ---- entries (perm-store.c) ---- */
/* An empty a{sv}, a new reference: an entry's "no data". */
GVariant *limen_perm_empty_data (void);
void limen_perm_entry_free (PermEntry *entry);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PermEntry, limen_perm_entry_free)
/* The app → permissions table of @entry, built from its a{sas} on first use. */
GHashTable *limen_perm_entry_apps (PermEntry *entry);
/* @entry's a{sas} (the entry keeps the reference). */
GVariant *limen_perm_entry_get_perms (PermEntry *entry);
/* @apps as a{sas}, with @app set to @perms (or removed for NULL) on the way; a new reference. */
GVariant *limen_perm_perms_variant_with (GHashTable *apps, const char *app, const char * const *perms);
/* The entry (@table, @id) read now, its rights (perms_cache) only @with_perms (free it with
 * limen_perm_entry_free()), or NULL. */
PermEntry *limen_perm_store_read (LimenPermStore *store, const char *table, const char *id, gboolean with_perms);
/* The same with its rights. */
PermEntry *limen_perm_store_entry (LimenPermStore *store, const char *table, const char *id);

/* ---- writes (perm-store.c), host only, written to SQLite before they return ---- */
/* Write the whole of (@table, @id): @data (NULL keeps the old data) and, when @apps_in is not
 * NULL, exactly those app rows. */
gboolean limen_perm_store_set (LimenPermStore *store, const char *table, const char *id, gboolean create,
                               GVariant *data, GVariant *apps_in, GError **error);
/* Give @app exactly @perms on (@table, @id) (empty: no row). */
gboolean limen_perm_store_set_permission (LimenPermStore *store, const char *table, const char *id,
                                          gboolean create, const char *app, const char * const *perms,
                                          GError **error);
/* Changed for (@table, @id) with @data and @perms (new references, taken), after the reply. */
void limen_perm_store_emit_changed_values (LimenPermStore *store, const char *table, const char *id,
                                           gboolean deleted, GVariant *data, GVariant *perms);
/* Changed for (@table, @id) from @entry (NULL: an empty one); @perms_in: its a{sas} as the
 * caller has it, or NULL. */
void limen_perm_store_emit_changed (LimenPermStore *store, const char *table, const char *id, gboolean deleted,
                                    PermEntry *entry, GVariant *perms_in);

/* ---- limits (perm-limits.c) ---- */
/* InvalidArgument unless @table (and @id, when not NULL) are acceptable. */
gboolean limen_perm_check_table_id (const char *table, const char *id, GError **error);
/* InvalidArgument unless @app and @perms are within the store's limits. */
gboolean limen_perm_check_app_perms (const char *app, const char * const *perms, GError **error);

/* ---- the flatpak CLI (perm-flatpak-table.c) ---- */
/* Give @table an empty file in $XDG_DATA_HOME/flatpak/db when it has none. */
void limen_perm_publish_table (const char *table);

G_END_DECLS
