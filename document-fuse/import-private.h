/* limen-documents — the pieces of the one-time import of the reference state, shared by
 * import.c (files, records, the log) and import-document.c (one entry at a time).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

#include "doc-model.h"
#include "perm-store.h"

G_BEGIN_DECLS

/* What became of one entry. The first four mean "read": the entry is recorded and never
 * looked at again; the others are retried at the next start. */
typedef enum {
  LIMEN_IMPORT_IMPORTED,        /* read and stored */
  LIMEN_IMPORT_SESSION_ONLY,    /* read: a session-only document, which did not outlive its
                                 * session in the reference either */
  LIMEN_IMPORT_PRESENT,         /* read: our store already has this id, and keeps its own */
  LIMEN_IMPORT_READ_BEFORE,     /* read by an earlier version of this import, which recorded
                                 * no entries (see import.c) */
  LIMEN_IMPORT_UNKNOWN_LAYOUT,  /* not read: a layout this version does not know */
  LIMEN_IMPORT_MALFORMED,       /* not read: damaged or impossible values */
  LIMEN_IMPORT_FAILED,          /* not stored: our side failed (the database) */
  LIMEN_IMPORT_N_OUTCOMES
} LimenImportOutcome;

#define LIMEN_IMPORT_OUTCOME_IS_READ(o) ((o) <= LIMEN_IMPORT_READ_BEFORE)

/* Remarks on an imported document, for the log. */
typedef enum {
  LIMEN_IMPORT_NOTE_EXTRA           = 1 << 0,  /* had members or flags this version ignores */
  LIMEN_IMPORT_NOTE_MOVED           = 1 << 1,  /* found again through its folder's handle */
  LIMEN_IMPORT_NOTE_MISSING         = 1 << 2,  /* nothing at its path: kept with that path */
  LIMEN_IMPORT_NOTE_FOLDER_REPLACED = 1 << 3,  /* its folder is not the one recorded */
  LIMEN_IMPORT_NOTE_APPS_DROPPED    = 1 << 4,  /* some app ids were not valid ones */
  LIMEN_IMPORT_N_NOTES              = 5
} LimenImportNote;

/* A document entry as the reference wrote it: (ay path, t device, t inode, u flags), since
 * upstream 1.21.2 followed by (ay handle), and perhaps by members of later versions. */
typedef struct {
  char    *path;
  guint64  dev, ino;  /* of its folder: the file's parent directory, or the directory itself */
  guint32  flags;     /* the reference's: 1 unique, 2 transient, 4 directory */
  GBytes  *fid;       /* its folder's identifier (name_to_handle_at, AT_HANDLE_FID), no type */
  guint    n_unknown; /* members and flag bits this version ignores */
} LimenRefDoc;

#define LIMEN_REF_DOC_UNIQUE    1
#define LIMEN_REF_DOC_TRANSIENT 2
#define LIMEN_REF_DOC_DIRECTORY 4

void limen_ref_doc_clear (LimenRefDoc *doc);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (LimenRefDoc, limen_ref_doc_clear)

/* Read a "documents" entry (@value may be NULL: an item the GVDB reader could not read).
 * LIMEN_IMPORT_IMPORTED when @doc and @perms (a{sas}) are filled; otherwise the reason in
 * @why. Never fails on members past the ones it knows. */
LimenImportOutcome limen_import_parse_document (GVariant *value, LimenRefDoc *doc, GVariant **perms,
                                                char **why);

/* State kept across the entries of one import run (what the handle search learnt). */
typedef struct _LimenImportRun LimenImportRun;
LimenImportRun *limen_import_run_new (void);
void limen_import_run_free (LimenImportRun *run);
/* TRUE once a handle could not be opened for want of CAP_DAC_READ_SEARCH. */
gboolean limen_import_run_lacks_privilege (LimenImportRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenImportRun, limen_import_run_free)

/* Import one entry of the "documents" table into @model. @legacy: an earlier version of the
 * import ran and recorded nothing, so what it would have read counts as read. */
LimenImportOutcome limen_import_document (LimenImportRun *run, LimenDocModel *model, const char *id,
                                          GVariant *value, gboolean legacy, guint *notes, char **why);
/* Import one entry of another table into @perms; same contract. */
LimenImportOutcome limen_import_permission_entry (LimenPermStore *perms, const char *table, const char *id,
                                                  GVariant *value, gboolean legacy, char **why);

/* Open (O_PATH) the directory whose identifier is @fid and whose inode is @ino, with the
 * path @folder and device @dev it was recorded with, looking on the filesystem of the
 * nearest existing ancestor of @folder and on every mount of @dev; -1 if not found. */
int limen_import_open_by_fid (LimenImportRun *run, const char *folder, guint64 dev, guint64 ino, GBytes *fid);

G_END_DECLS
