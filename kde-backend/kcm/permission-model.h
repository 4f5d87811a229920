/* Limen — what apps hold in the permission store, in words, for limen-permissions (the
 * command line) and kcm_limen_permissions (the System Settings page). One description of
 * the tables, used by both; it speaks only the standard PermissionStore and Documents
 * interfaces, so it works as well against the reference's store.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* How an entry's permissions read. */
typedef enum {
  LIMEN_GRANT_SWITCH,     /* "yes" / "no" / "ask" */
  LIMEN_GRANT_DOCUMENT,   /* a file or folder: read, write, grant-permissions, delete */
  LIMEN_GRANT_LOCATION,   /* accuracy, time of the grant */
  LIMEN_GRANT_TOKEN,      /* a restore token: a session the app may resume without asking */
  LIMEN_GRANT_WORDS,      /* a list: inhibit's limits */
  LIMEN_GRANT_SHORTCUTS,  /* global shortcuts: their keys (limen-kde records them) and the refused ones */
  LIMEN_GRANT_CHOICE,     /* "open with": the handler chosen for a type, and how often */
} LimenGrantKind;

/* The group a grant is shown in, in this order. */
typedef enum {
  LIMEN_GROUP_FILES,
  LIMEN_GROUP_SCREEN,
  LIMEN_GROUP_DEVICES,
  LIMEN_GROUP_SYSTEM,
  LIMEN_GROUP_OPEN_WITH,
  LIMEN_N_GROUPS
} LimenGrantGroup;

typedef struct {
  const char     *table;
  const char     *id;      /* the one id this row describes; NULL: every id of the table */
  LimenGrantKind  kind;
  LimenGrantGroup group;
  const char     *title;   /* untranslated (N_()); limen_grant_title() translates */
} LimenPermTable;

/* One thing an app holds: an (table, id) entry's row for the app, described. */
typedef struct {
  const LimenPermTable *desc;
  char     *table;
  char     *id;
  char    **perms;
  GVariant *data;         /* the entry's data (never NULL) */
  char     *title;        /* translated, e.g. "Camera" */
  char     *detail;       /* translated, e.g. "/home/me/a.txt — read and write, kept" */
} LimenGrant;

/* Every table the module knows, NULL-terminated by .table. */
extern const LimenPermTable limen_perm_tables[];

/* Make the model's strings come from the "limen" catalog (call once, before anything else). */
void limen_perm_model_init_i18n (void);

void limen_grant_free (LimenGrant *grant);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenGrant, limen_grant_free)

/* Every app id holding something in a known table, sorted; "" stands for unidentified apps. */
GPtrArray *limen_perm_model_list_apps (GDBusConnection *bus, GError **error);

/* Everything @app_id holds, as LimenGrant*, grouped and sorted. */
GPtrArray *limen_perm_model_show_app (GDBusConnection *bus, const char *app_id, GError **error);

/* TRUE when the person can choose allow / ask / deny for @grant (not only revoke it). */
gboolean limen_grant_is_switch (const LimenGrant *grant);
/* The switch's value: "yes", "no", "ask" (or "" when none applies). */
const char *limen_grant_value (const LimenGrant *grant);
/* Set @app_id's answer at (@table, @id) to "yes", "no" or "ask" (a location: "no" is
 * accuracy NONE, "yes" EXACT); only for entries whose row is a switch. */
gboolean limen_perm_model_set (GDBusConnection *bus, const char *app_id, const char *table,
                               const char *id, const char *value, GError **error);

/* Take back what @app_id holds in @table (every id, or only @id when non-NULL); documents go
 * through Documents.RevokePermissions so a running document portal sees it at once. Sets
 * @n_revoked to the number of entries changed. */
gboolean limen_perm_model_revoke (GDBusConnection *bus, const char *app_id, const char *table,
                                  const char *id, guint *n_revoked, GError **error);

/* Take back everything @app_id holds in every known table. */
gboolean limen_perm_model_reset (GDBusConnection *bus, const char *app_id, guint *n_revoked,
                                 GError **error);

/* The global shortcuts a LIMEN_GRANT_SHORTCUTS grant names, as (id, description, keys in Qt's
 * portable text) a(sss); NULL for another grant or none. */
GVariant *limen_grant_shortcuts (const LimenGrant *grant);

/* The translated name of a group. */
const char *limen_grant_group_title (LimenGrantGroup group);

G_END_DECLS
